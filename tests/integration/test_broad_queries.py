"""Prefixes and phrases most notes hold are bounded (search/broad.py): beside a narrower word
they rank nothing, alone they rank within the newest notes, and the search says so; ordinary
prefixes and phrases rank exactly as without the bound. A real FTS5 index over a generated
vault whose notes share many words starting with `ba`; BROAD_MIN and RANK_CAP are lowered so
120 notes stand for 100,000."""

from __future__ import annotations

import json
import os
import random
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from engram import config
from engram.search import bm25, broad
from engram.search.query import parse_query
from engram.service import Engram
from tests.conftest import EngramCli, write_tree

NOTES = 120
COMMON = [f"ba{a}{b}" for a in "cdfg" for b in "aeiou"]  # 20 words, in every note
RARE = [f"zo{a}{b}k" for a in "lmnprst" for b in "aeiou"]  # each in a few notes
BROAD = 30  # notes holding a prefix or phrase from which it is bounded (BROAD_MIN)
CAP = 20  # the newest notes a bounded one ranks within (RANK_CAP)


def vault() -> dict[str, str]:
    """NOTES notes: common `ba…` words in all, `rare` words in some, one fixed phrase in most."""
    rng = random.Random(3)
    notes = {}
    for i in range(NOTES):
        words = rng.choices(COMMON, k=60) + rng.sample(RARE, 3)
        if i % 4:
            words.insert(10, "bace bade")
        notes[f"Note {i:03}.md"] = f"# Note {i}\n\n{' '.join(words)}\n"
    return notes


@pytest.fixture(scope="module")
def engram(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engram]:
    root = tmp_path_factory.mktemp("broad")
    with pytest.MonkeyPatch.context() as mp:
        for key in ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"):
            mp.setenv(key, str(root / key.lower()))
        e = Engram(config.resolve(os.environ))
        e.collection_add(str(write_tree(root / "vault", vault())), "v")
        e.update()
        yield e
        e.close()


@pytest.fixture
def capped(monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr(broad, "BROAD_MIN", BROAD)
    monkeypatch.setattr(broad, "RANK_CAP", CAP)
    return CAP


def ranked(e: Engram, query: str, n: int = 10) -> list[tuple[str, float, str | None]]:
    return [(r.path, round(r.score, 9), r.notice) for r in e.search(query, n=n)]


ORDINARY = [RARE[0] + "*", "zol*", "zom*", "zo*", f'"{RARE[1]}"', "bace* zolak", '"bace bade"']


@pytest.mark.parametrize("query", ORDINARY)
def test_ordinary_prefixes_and_phrases_rank_as_without_the_bound(
    engram: Engram, query: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    as_is = ranked(engram, query, n=50)
    monkeypatch.setattr(broad, "BROAD_MIN", 10**9)
    assert ranked(engram, query, n=50) == as_is
    assert as_is and all(notice is None for _, _, notice in as_is)


def test_a_rare_prefix_or_phrase_ranks_as_before_though_the_cap_is_low(
    engram: Engram, capped: int
) -> None:
    pair = " ".join(vault()["Note 000.md"].split()[-2:])  # two rare words, side by side
    common_pair = f'"{COMMON[0]} {COMMON[1]}"'  # both words in every note, side by side in few
    for query in ("zola*", "zome*", f'"{pair}"', f"{RARE[4]} zona*", common_pair):
        bounded = ranked(engram, query, n=50)
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(broad, "BROAD_MIN", 10**9)
            assert ranked(engram, query, n=50) == bounded, query
        assert bounded and all(notice is None for _, _, notice in bounded)


def newest(e: Engram, count: int) -> set[str]:
    rows = e.db.conn.execute("SELECT path FROM documents ORDER BY id DESC LIMIT ?", (count,))
    return {r[0] for r in rows}


@pytest.mark.parametrize("query", ["ba*", "b*", "bac* bad*", '"bace bade"', '"bace bade" ba*'])
def test_alone_a_broad_prefix_or_phrase_ranks_within_the_newest_notes(
    engram: Engram, capped: int, query: str
) -> None:
    found = engram.search(query, n=50)
    assert found and {r.path for r in found} <= newest(engram, capped)
    notice = found[0].notice or ""
    assert f"ranked within the {capped:,} newest notes only" in notice, notice
    assert f"of {NOTES}" in notice
    if "*" in query:
        assert "a longer prefix or another word ranks them all" in notice


def test_beside_a_rarer_word_a_broad_prefix_ranks_nothing(engram: Engram, capped: int) -> None:
    word = RARE[5]
    alone = [(p, s) for p, s, _ in ranked(engram, word)]
    found = engram.search(f"{word} ba*")
    assert [(r.path, round(r.score, 9)) for r in found] == alone
    assert found[0].notice == (
        f"ba* is in {NOTES} notes, too many to rank by: the query's other words rank the results"
    )


def test_beside_a_rarer_word_a_broad_phrase_is_required_but_ranks_nothing(
    engram: Engram, capped: int
) -> None:
    word = RARE[6]
    holding = {p for p, _, _ in ranked(engram, word, n=50)}
    with_phrase = {p for p, _, _ in ranked(engram, f'"bace bade" {word}', n=50)}
    assert with_phrase and with_phrase < holding
    for path in with_phrase:
        assert "bace bade" in (engram.get(f"v/{path}").text)
    notice = engram.search(f'"bace bade" {word}')[0].notice or ""
    assert notice.startswith(f'"bace bade" is in more than {BROAD} notes, too many to rank by')
    assert notice.endswith("(the phrase is still required)")


def test_bounded_rankings_never_score_the_whole_index(engram: Engram, capped: int) -> None:
    conn = engram.db.conn
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    try:
        for query in ("ba*", '"bace bade"', f"{RARE[7]} ba*", f'"bace bade" {RARE[7]}'):
            bm25.ranked(conn, parse_query(query), 10)
    finally:
        conn.set_trace_callback(None)
    scored = [
        (m[1], m[2])
        for s in statements
        for m in re.finditer(r"AS score FROM documents_fts WHERE documents_fts MATCH '([^']*)'"
                             r"( AND rowid BETWEEN)?", s)
    ]  # fmt: skip
    assert scored
    for expr, span in scored:  # a broad part is scored within the window only, or not at all
        assert span or ('"ba"*' not in expr and '"bace bade"' not in expr), expr


def test_hybrid_query_lists_the_bound_among_its_notices(engram: Engram, capped: int) -> None:
    run = engram.query_run("ba*", expand=False, rerank=False)
    assert any("newest notes only" in n for n in run.notices), run.notices


def test_cli_warns_and_json_results_carry_the_notice(
    run: EngramCli, xdg: dict[str, str], tmp_path: Path, capped: int
) -> None:
    run(xdg, "collection", "add", str(write_tree(tmp_path / "v", vault())), "--name", "v")
    out = run(xdg, "search", "ba*")
    assert f"warning: ba* is in 120 notes of 120: ranked within the {CAP} newest" in out.stderr
    found = json.loads(run(xdg, "search", "ba*", "--json").stdout)
    assert f"ranked within the {CAP} newest notes only" in found[0]["notice"]
    plain = json.loads(run(xdg, "search", RARE[0], "--json").stdout)
    assert plain[0].get("notice") is None
