"""`query` through the facade: every stage with real llama.cpp models (tiny generated GGUFs
for the reranker and generator, a fake embedder), caching, graceful degradation."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from engram import config
from engram.models.fake import FakeEmbedder
from engram.models.protocols import ModelError
from engram.service import Engram

EXAMPLE = Path(__file__).resolve().parents[1] / "fixtures" / "vaults" / "example"


@pytest.fixture
def hybrid(xdg: dict[str, str], tiny, monkeypatch: pytest.MonkeyPatch) -> Engram:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("ENGRAM_RERANK_MODEL", str(tiny.rerank))
    monkeypatch.setenv("ENGRAM_GENERATE_MODEL", str(tiny.chat))
    e = Engram(config.resolve(os.environ), embedder=FakeEmbedder(dim=256, max_tokens=64))
    e.collection_add(str(EXAMPLE), "example")
    e.update()
    e.embed()
    return e


def test_every_stage_runs_and_is_explained(hybrid: Engram) -> None:
    run = hybrid.query_run("pausing churn pilot", n=5, explain=True)
    assert run.stages["vector"] == "ran"
    assert run.stages["rerank"].startswith("ran")
    assert run.stages["expansion"].startswith(("ran", "skipped"))
    assert run.results and run.notices == ()
    top = run.results[0]
    e = top.explain
    assert e is not None and e["rerank"] is not None and 0 <= e["final"] <= 1
    assert any(name.startswith("bm25:") for name in e["lists"])
    assert round(top.score, 4) == e["final"]
    scores = [r.score for r in run.results]
    assert scores == sorted(scores, reverse=True)


def test_repeated_query_costs_no_model_calls(
    hybrid: Engram, monkeypatch: pytest.MonkeyPatch
) -> None:
    hybrid.query("roasters volume commitment", n=5)
    rerank_calls: list[int] = []
    expand_calls: list[str] = []
    reranker, generator = hybrid.reranker(), hybrid.generator()
    real_score, real_expand = reranker.score, generator.expand
    monkeypatch.setattr(
        reranker, "score", lambda q, docs: rerank_calls.append(len(docs)) or real_score(q, docs)
    )
    monkeypatch.setattr(
        generator, "expand", lambda q, n=2: expand_calls.append(q) or real_expand(q, n)
    )
    again = hybrid.query("roasters volume commitment", n=5)
    assert rerank_calls == [] and expand_calls == []
    assert again


def test_switches_turn_stages_off(hybrid: Engram) -> None:
    run = hybrid.query_run("pricing tiers", expand=False, rerank=False, explain=True)
    assert run.stages["expansion"] == "off (--no-expand)"
    assert run.stages["rerank"] == "off (--no-rerank)"
    assert all(r.explain and r.explain["rerank"] is None for r in run.results)


def test_filters_apply_inside_every_list(hybrid: Engram) -> None:
    got = hybrid.query("coffee design growth tag:person", n=10)
    assert {r.path for r in got} == {"People/Ana Ruiz.md", "People/Kenji Sato.md"}


def test_a_filter_leaving_one_passage_keeps_its_vector_hit(hybrid: Engram) -> None:
    # one note, one chunk passes: the vector list must still find it (no keyword matches)
    run = hybrid.query_run("espresso path:People/Ana", n=5, explain=True, expand=False)
    assert [r.path for r in run.results] == ["People/Ana Ruiz.md"]
    explain = run.results[0].explain
    assert explain is not None and list(explain["lists"]) == ["vec:original"]


def test_chunks_gives_passages_for_keyword_and_vector_hits(hybrid: Engram) -> None:
    run = hybrid.query_run("pricing tiers connoisseur", n=8, chunks=True, explain=True)
    keyword_first = [
        r
        for r in run.results
        if r.explain
        and r.explain["lists"].get("bm25:original", {}).get("rank", 10**6)
        <= r.explain["lists"].get("vec:original", {}).get("rank", 10**6)
    ]
    assert keyword_first and len(keyword_first) < len(run.results)  # both kinds are tested
    for r in run.results:
        assert r.passages, r.path
        assert all(1 <= p.line <= p.end_line and 0 <= p.score <= 1 for p in r.passages)
    top = keyword_first[0]
    assert any("pricing" in p.snippet.lower() for p in top.passages)
    assert top.passages[0].highlights  # the best keyword passage shows the matched words


def test_min_similarity_drops_documents_only_vectors_found(hybrid: Engram) -> None:
    words = "tiered plans subscribers"
    every = hybrid.query_run(words, n=None, expand=False, rerank=False, explain=True).results
    keyword = {r.path for r in hybrid.search(words, n=None)}
    assert keyword < {r.path for r in every}  # the vector list adds documents
    sims = {
        r.path: r.explain["lists"]["vec:original"]["score"]
        for r in every
        if r.explain and "vec:original" in r.explain["lists"]
    }
    floor = sorted(sims.values())[len(sims) // 2]
    kept = hybrid.query(words, n=None, expand=False, rerank=False, min_similarity=floor)
    want = keyword | {p for p, s in sims.items() if s >= floor}
    assert {r.path for r in kept} == want and keyword < want < {r.path for r in every}
    above = hybrid.query(words, n=None, expand=False, rerank=False, min_similarity=1.0)
    assert {r.path for r in above} == keyword


def test_candidate_limit_bounds_reranking(hybrid: Engram) -> None:
    run = hybrid.query_run("coffee", n=10, candidate_limit=3, explain=True)
    reranked = [r for r in run.results if r.explain and r.explain["rerank"] is not None]
    assert len(reranked) == 3
    assert run.stages["rerank"] == "ran (top 3)"


def test_degrades_to_keyword_search_without_models(
    xdg: dict[str, str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("ENGRAM_EMBED_MODEL", str(tmp_path / "missing.gguf"))
    e = Engram(config.resolve(os.environ))
    e.collection_add(str(EXAMPLE), "example")
    e.update()
    run = e.query_run("pricing decision", explain=True)
    assert run.stages == {
        "expansion": "off (no generator model)",
        "vector": "off",
        "rerank": "off (no reranker model)",
    }
    assert len(run.notices) == 1 and "keyword search only" in run.notices[0]
    assert [r.path for r in run.results] == [r.path for r in e.search("pricing decision")]
    # words the notes lack make the keyword list untrusted next to a vector list; alone it
    # still ranks (fusion.keyword_trust applies only when there is a vector list to lean on)
    unknown = "pricing zorblaxian quuxified frobnicating"
    weak = e.query(unknown)
    assert weak and [r.path for r in weak] == [r.path for r in e.search(unknown)]
    assert all(r.score > 0 for r in weak)
    with_chunks = e.query("pricing decision", chunks=True)
    assert all(r.passages and r.passages[0].line == r.line for r in with_chunks)


def broken_models(tmp_path: Path, tiny) -> dict[str, Path]:  # type: ignore[no-untyped-def]
    junk = tmp_path / "junk.gguf"
    junk.write_bytes(b"GGUF\x03\x00\x00\x00" + b"\xff" * 64)
    return {"junk": junk, "bert": tiny.embed}  # bert: an encoder, cannot generate


@pytest.mark.parametrize(
    ("role", "which", "stage", "notice"),
    [
        ("RERANK", "junk", "rerank", "no reranking: "),
        ("GENERATE", "junk", "expansion", "no query expansion: "),
        ("GENERATE", "bert", "expansion", "no query expansion: embed.gguf is an encoder"),
        ("RERANK", "bert", "rerank", "no reranking: embed.gguf is an embedding model"),
    ],
)
def test_a_model_that_does_not_load_is_skipped_and_said(  # type: ignore[no-untyped-def]
    xdg: dict[str, str],
    tiny,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    role: str,
    which: str,
    stage: str,
    notice: str,
) -> None:
    monkeypatch.setenv(f"ENGRAM_{role}_MODEL", str(broken_models(tmp_path, tiny)[which]))
    e = Engram(config.resolve(os.environ), embedder=FakeEmbedder(dim=256, max_tokens=64))
    e.collection_add(str(EXAMPLE), "example")
    e.update()
    e.embed()
    run = e.query_run("pricing tiers decision", explain=True)
    assert run.stages[stage].startswith("off (") and "unavailable" in run.stages[stage]
    assert run.stages["vector"] == "ran"
    assert len(run.notices) == 1 and run.notices[0].startswith(notice)
    plain = e.query("pricing tiers decision", expand=False, rerank=False)
    assert [r.path for r in run.results] == [r.path for r in plain]


def test_a_model_that_fails_while_running_is_skipped_and_said(
    hybrid: Engram, monkeypatch: pytest.MonkeyPatch
) -> None:
    def fail(*args: object, **kwargs: object) -> list[float]:
        raise ModelError("llama.cpp failed to evaluate the prompt")

    monkeypatch.setattr(hybrid.reranker(), "score", fail)
    monkeypatch.setattr(hybrid.generator(), "expand", fail)
    run = hybrid.query_run("a fresh question about churn pilots", explain=True)
    assert run.stages["rerank"] == "failed (fused order kept)"
    assert run.stages["expansion"] == "failed (searched without expansions)"
    assert sorted(run.notices) == [
        "no query expansion: llama.cpp failed to evaluate the prompt",
        "no reranking: llama.cpp failed to evaluate the prompt",
    ]
    assert run.results and all(r.explain and r.explain["rerank"] is None for r in run.results)


class _Inline:
    """An executor that runs each call at once on the calling thread."""

    def submit(self, fn, *args):  # type: ignore[no-untyped-def]
        from concurrent.futures import Future

        done: Future[object] = Future()
        done.set_result(fn(*args))
        return done


@pytest.mark.parametrize(
    "query", ["pausing churn pilot", "roasters volume commitment", "price*", '"pilot" -churn']
)
def test_the_vector_list_found_ahead_on_another_thread_changes_nothing(
    hybrid: Engram, monkeypatch: pytest.MonkeyPatch, query: str
) -> None:
    """The original query's vector list is found on a thread of its own, with that thread's
    connection, while BM25 ranks: the same results, scores and stages as one after the other."""
    from engram.search import hybrid as pipeline

    threads: set[str] = set()
    real = pipeline.vector_search.search

    def spy(conn, *args, **kwargs):  # type: ignore[no-untyped-def]
        import threading

        threads.add(threading.current_thread().name)
        return real(conn, *args, **kwargs)

    monkeypatch.setattr(pipeline.vector_search, "search", spy)
    ahead = hybrid.query_run(query, n=8, expand=False, rerank=False, explain=True)
    assert any(name.startswith("engram-helper") for name in threads)
    monkeypatch.setattr(pipeline, "HELPERS", _Inline())
    inline = hybrid.query_run(query, n=8, expand=False, rerank=False, explain=True)
    assert ahead == inline
