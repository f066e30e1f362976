"""A note of 10,000 links on one ~1 MB line (issue 30): the graph commands, the note panel
the plugin reads and a move that rewrites 7,501 links answer in seconds (each took 4 to 10
minutes when every link's context read its whole line), and each link's context is cut
around that link, not around the first link with the same text."""

from __future__ import annotations

import json
import os
import resource
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import EngramCli
from tests.integration.server.server_helpers import NO_KEYRING, Daemon

ROOT = Path(__file__).resolve().parents[2]
LINKS = 10_000
# CPU seconds per command (0.8 to 1.5 s here with a new interpreter's start-up, which in-process
# runs no longer pay; CPU time, not the clock, so a loaded machine does not fail it: at load 8
# on 2 cores the clock said 3 to 8 s)
BOUND = 10.0
ROUTE_BOUND = 10.0  # seconds on the clock for the panel's request: 0.2 to 1.4 s here
FILLER = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod"


def link(i: int) -> str:
    """The i-th link of the long line: to Hub, to a heading of Hub, to nowhere, markdown."""
    return ("[[Hub]]", f"[[Hub#Section|alias {i}]]", f"[[Missing {i}]]", "[see](Hub.md)")[i % 4]


def marked(i: int) -> str:
    """What the context of the i-th link must show: the word just before it, and it."""
    return f"m{i}x {link(i)}"


@pytest.fixture
def env(xdg: dict[str, str]) -> dict[str, str]:
    return {
        **os.environ,
        **xdg,
        **NO_KEYRING,
        "NO_COLOR": "1",
        "ENGRAM_EMBED_MODEL": "none",
        "PYTHONPATH": str(ROOT / "backend"),
    }


@pytest.fixture
def vault(run: EngramCli, env: dict[str, str], tmp_path: Path) -> Path:
    """Hub, a note linking to it once, and Long: 10,000 links on its third line, indexed."""
    root = tmp_path / "vault"
    (root / ".obsidian").mkdir(parents=True)
    (root / "Hub.md").write_text("# Hub\n\n## Section\n\nThe hub.\n")
    (root / "Other.md").write_text("# Other\n\nsee [[Hub]] and [[Nowhere]]\n")
    line = " ".join(f"{FILLER} {marked(i)}" for i in range(LINKS))
    assert 900_000 < len(line) < 1_100_000
    (root / "Long.md").write_text(f"# Long\n\n{line}\n")
    run(env, "collection", "add", str(root), "--name", "v")
    return root


def cpu_seconds() -> float:
    """CPU time of this process (every thread) and of its reaped children."""
    return sum(
        r.ru_utime + r.ru_stime
        for r in (
            resource.getrusage(resource.RUSAGE_SELF),
            resource.getrusage(resource.RUSAGE_CHILDREN),
        )
    )


def timed(run: EngramCli, env: dict[str, str], *args: str) -> Any:
    """The command's JSON output, after checking it used under BOUND seconds of CPU."""
    before = cpu_seconds()
    started = time.monotonic()
    done = run(env, *args, "--json")
    took = time.monotonic() - started
    cpu = cpu_seconds() - before
    print(f"\nengram {' '.join(args)}: {took:.2f} s, {cpu:.2f} s CPU")
    assert cpu < BOUND, f"engram {' '.join(args)} took {cpu:.1f} s of CPU"
    return json.loads(done.stdout)


def in_text_order(kinds: set[int]) -> list[int]:
    return [i for i in range(LINKS) if i % 4 in kinds]


@pytest.mark.slow  # the panel's request goes to a real `engram serve`
def test_graph_reads_of_a_note_with_10000_links_on_one_line(
    run: EngramCli, env: dict[str, str], vault: Path, tmp_path: Path
) -> None:
    out = timed(run, env, "graph", "links", "Long")
    # stored as the parser met them: the wikilinks in text order, then the markdown links
    order = in_text_order({0, 1, 2}) + in_text_order({3})
    assert len(out) == LINKS
    for ref, i in zip(out, order, strict=True):
        assert marked(i) in ref["context"] and len(ref["context"]) <= 242, (i, ref["context"])
    assert out[0]["context"].startswith(FILLER) and out[1]["context"].startswith("…")
    assert out[-1]["context"].endswith(marked(9_999)) and out[-2]["context"].endswith("…")

    back = timed(run, env, "graph", "backlinks", "Hub")
    from_long = [b for b in back if b["path"] == "Long.md"]
    order = in_text_order({0, 1}) + in_text_order({3})
    assert len(from_long) == len(order) and len(back) == len(order) + 1
    for ref, i in zip(from_long, order, strict=True):
        assert marked(i) in ref["context"], (i, ref["context"])

    missing = timed(run, env, "graph", "unresolved")
    assert sorted(m["target"] for m in missing if m["source"] == "Other.md") == ["Nowhere"]
    from_long = [m for m in missing if m["source"] == "Long.md"]
    assert [m["target"] for m in from_long] == [f"Missing {i}" for i in in_text_order({2})]
    assert all(marked(int(m["target"][8:])) in m["context"] for m in from_long)

    d = Daemon(env, vault, tmp_path / "serve.log", "--no-watch")
    try:
        d.wait_ready()
        d.wait_indexed()
        started = time.monotonic()
        status, panel = d.call("GET", "/v1/notes/metadata?path=Hub.md")  # the fact panel
        took = time.monotonic() - started
        print(f"GET /v1/notes/metadata?path=Hub.md: {took:.2f} s")
        assert status == 200, panel
        assert took < ROUTE_BOUND
        assert len(panel["backlinks"]) == 200  # the panel shows the first 200
        for b, i in zip(panel["backlinks"], in_text_order({0, 1}), strict=False):
            assert b["path"] == "Long.md" and marked(i) in b["context"], (i, b)
    finally:
        d.proc.kill()  # a stuck reader thread would hold a graceful stop
        d.proc.wait()


def test_moving_the_note_10000_links_point_at_rewrites_them_in_seconds(
    run: EngramCli, env: dict[str, str], vault: Path
) -> None:
    moved = timed(run, env, "note", "move", "Hub.md", "Centre.md")
    assert moved["linksRewritten"] == 7_501  # 7,500 on the long line, one in Other.md
    text = (vault / "Long.md").read_text()
    assert text.count("[[Centre]]") == 2_500 and "[[Hub" not in text
    assert text.count("[see](Centre.md)") == 2_500 and "(Hub.md)" not in text
    assert marked(9_997).replace("Hub", "Centre") in text
