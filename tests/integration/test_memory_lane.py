"""The person's notes and Engram's memory are two kinds: searches keep the person's notes
unless asked (`kind:`, `--memory`), every filter can be negated (`-path:Engram/`), and the
notes Engram generates from facts (daily notes, the ledger) never count as backlinks."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engram import config
from engram.models.fake import FakeEmbedder
from engram.service import Engram
from engram.store.filters import Filters
from tests.conftest import EngramCli
from tests.integration.conftest import Clock

MEMORY = "Engram/"
GENERATED = ("Engram/daily/", "Engram/ledger/")
QUERIES = ("pricing", "Ana Ruiz pricing tiers", "espresso cupping", "roasting partners", "sync")
FACTS = (
    "We decided on three [[Pricing Model|pricing]] tiers with [[Ana Ruiz]]",
    "Cupping protocol: [[Reference/Cupping Protocol]] scores espresso roasts",
    "Roasting partners [[Roasting Partners]] ship weekly; sync every Monday",
)


@pytest.fixture
def lane(xdg: dict[str, str], vault: Path, clock: Clock) -> Iterator[Engram]:
    """The example vault as the default vault, a few facts stored, everything embedded."""
    e = Engram(config.resolve(os.environ), embedder=FakeEmbedder(dim=32))
    e.clock = clock  # type: ignore[method-assign]
    e.init_vault(str(vault))
    for text in FACTS:
        e.fact_add(text)
    e.embed()
    yield e
    e.close()


def _modes(e: Engram) -> dict[str, Any]:
    return {
        "search": e.search,
        "vsearch": e.vsearch,
        "query": lambda q, **kw: e.query_run(q, expand=False, rerank=False, **kw).results,
    }


@pytest.mark.parametrize("mode", ["search", "vsearch", "query"])
def test_every_mode_keeps_the_persons_notes_unless_asked(lane: Engram, mode: str) -> None:
    run = _modes(lane)[mode]
    memory_found = 0
    for q in QUERIES:
        default = [r.path for r in run(q, n=50)]
        everything = [r.path for r in run(q + " kind:all", n=50)]
        memory = [r.path for r in run(q + " kind:memory", n=50)]
        notes = [r.path for r in run(q + " kind:note", n=50)]
        assert not [p for p in default if p.startswith(MEMORY)], (q, default)
        assert default == notes
        assert all(p.startswith(MEMORY) for p in memory), (q, memory)
        assert set(everything) == set(notes) | set(memory)
        assert [r.path for r in run(q + " -kind:memory", n=50)] == notes
        assert [r.path for r in run(q + " -kind:note", n=50)] == memory
        flags = Filters(kinds=("note", "memory"))  # what HTTP and MCP send for "all"
        assert {r.path for r in run(q, n=50, filters=flags)} == set(everything)
        memory_found += len(memory)
    assert memory_found  # the facts are there to be found


@pytest.mark.parametrize("mode", ["search", "vsearch", "query"])
@pytest.mark.parametrize(
    "negated",
    ["-path:Engram/", '-path:"Engram/"', "-path:Projects/", "-tag:project", "-type:person"],
)
def test_a_negated_filter_leaves_out_what_it_names(lane: Engram, mode: str, negated: str) -> None:
    run = _modes(lane)[mode]
    kind, _, value = negated.lstrip("-").partition(":")
    value = value.strip('"')
    for q in QUERIES:
        everything = run(f"{q} kind:all", n=50)
        named = {r.path for r in run(f'{q} kind:all {kind}:"{value}"', n=50)}
        left = [r.path for r in run(f"{q} kind:all {negated}", n=50)]
        assert set(left) == {r.path for r in everything} - named, (q, negated)


def test_generated_notes_never_count_as_backlinks(lane: Engram) -> None:
    """Each fact above links a person's note; its ledger line and daily note restate it."""
    linked = {"Projects/Pricing Model.md", "People/Ana Ruiz.md", "Roasting Partners.md"}
    conn = lane.db.conn
    restating = conn.execute(
        "SELECT count(*) FROM links l JOIN documents d ON d.id = l.doc_id"
        " WHERE d.path LIKE 'Engram/ledger/%' AND l.resolved_path IN (?, ?, ?)",
        tuple(sorted(linked)),
    ).fetchone()[0]
    assert restating  # the ledger does link them: the test looks at the right thing
    ranked = {n.path: n for n in lane.rank(n=1000).notes}
    for row in conn.execute("SELECT path FROM documents WHERE path NOT LIKE 'Engram/%'"):
        path = row[0]
        back = [b.path for b in lane.backlinks(path).links]
        assert not [p for p in back if p and p.startswith(GENERATED)], (path, back)
        panel = [b.path for b in lane.note_panel("Brewline", path).backlinks]
        assert not [p for p in panel if p.startswith(GENERATED)], (path, panel)
        assert ranked[path].backlinks == len({p for p in back if p != path}), path
    facts = [b.path for b in lane.backlinks("People/Ana Ruiz.md").links]
    assert any(p and p.startswith("Engram/decisions/") for p in facts)  # a fact is a link
    orphans = {n.path for n in lane.orphans()}
    assert not [p for p in orphans if p.startswith(GENERATED)]


def test_cli_memory_flag_and_negated_path(run: EngramCli, xdg: dict[str, str], vault: Path) -> None:
    run(xdg, "init", str(vault))
    run(xdg, "fact", "add", "Pricing tiers were decided with Ana")
    plain = json.loads(run(xdg, "search", "pricing tiers", "--json").stdout)
    assert plain and not [r for r in plain if r["path"].startswith(MEMORY)]
    both = json.loads(run(xdg, "search", "pricing tiers", "--memory", "--json").stdout)
    assert [r for r in both if r["path"].startswith(MEMORY)]
    left = json.loads(
        run(xdg, "search", "pricing tiers -path:Engram/", "--memory", "--json").stdout
    )
    assert left == plain
    bad = run(xdg, "search", "pricing kind:mine", ok=False)
    assert bad.returncode != 0 and "kind: expects note, memory or all" in bad.stderr
