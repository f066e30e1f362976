"""Chunking, embedding and vector search through the facade (fake embedder: fast, real
SQLite + sqlite-vec), plus the failure modes: no model, no extension, another model."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from engram import config
from engram.codec import encode
from engram.errors import UnavailableError
from engram.models.fake import FakeEmbedder
from engram.service import Engram
from engram.store import vectors

EXAMPLE = Path(__file__).resolve().parents[1] / "fixtures" / "vaults" / "example"


def facade(embedder: FakeEmbedder | None = None) -> Engram:
    return Engram(config.resolve(os.environ), embedder=embedder)


@pytest.fixture
def fake() -> FakeEmbedder:
    return FakeEmbedder(dim=256, max_tokens=64)


@pytest.fixture
def example(xdg: dict[str, str], fake: FakeEmbedder) -> Engram:
    e = facade(fake)
    e.collection_add(str(EXAMPLE), "example")
    e.update()
    return e


def test_embed_then_vsearch_finds_the_note(example: Engram) -> None:
    report = example.embed()
    assert report.documents_chunked == 11 and report.embedded == report.chunks > 11
    top = example.vsearch("Smell the dry grounds, then add water at 93 °C", n=3)
    assert top[0].path == "Reference/Cupping Protocol.md"
    assert 0 < top[0].score <= 1 and top[0].line >= 1
    assert example.embed().embedded == 0  # nothing new: nothing embedded


def test_vsearch_filters_apply_inside_retrieval(example: Engram) -> None:
    example.embed()
    only = example.vsearch("design growth roasters tag:person", n=5)
    assert {r.path for r in only} == {"People/Ana Ruiz.md", "People/Kenji Sato.md"}
    assert example.vsearch("coffee", n=5, collections=["example"])
    assert [r.path for r in example.vsearch("coffee path:Reference/", n=50)] and all(
        r.path.startswith("Reference/") for r in example.vsearch("coffee path:Reference/", n=50)
    )


@pytest.mark.parametrize(
    "flt", ["path:People/Ana", "path:Reference/Cupping", 'role:"Head of Growth"']
)
def test_a_filter_leaving_one_passage_finds_it(example: Engram, flt: str) -> None:
    """sqlite-vec applied a one-value `rowid IN (x)` after the KNN: such filters found nothing."""
    example.embed()
    allowed = vectors.allowed_vectors(example.db.conn, example.parse(flt).filters)
    assert len(allowed) == 1  # the case under test: exactly one passage passes the filter
    got = example.vsearch(f"espresso coffee {flt}", n=5)
    assert len(got) == 1 and got[0].path.startswith(("People/Ana", "Reference/Cupping"))


def test_knn_among_allowed_ids_is_exact(example: Engram) -> None:
    import numpy as np

    example.embed()
    conn = example.db.conn
    query = np.asarray(example.embedder().embed_query("espresso"), dtype=np.float32).tobytes()
    ranked = [vid for vid, _ in vectors.knn(conn, query, vectors.vector_count(conn))]
    far, near = ranked[-1], ranked[0]
    for allowed, k, want in [
        ([far], 1, [far]),
        ([far], 5, [far]),
        ([far, far], 1, [far]),
        ([far, near], 2, [near, far]),
        ([far, near], 1, [near]),
        (ranked, 3, ranked[:3]),
    ]:
        assert [vid for vid, _ in vectors.knn(conn, query, k, allowed)] == want, allowed


def test_chunks_returns_several_passages(example: Engram) -> None:
    example.embed()
    hit = example.vsearch("We decided on the tiered model with three plans", n=1, chunks=True)[0]
    assert hit.passages and all(p.line <= p.end_line for p in hit.passages)


def test_editing_one_section_reembeds_only_that_section(
    xdg: dict[str, str], tmp_path: Path, fake: FakeEmbedder
) -> None:
    vault = tmp_path / "v"
    vault.mkdir()
    sections = "\n\n".join(
        f"## Part {i}\n\n" + " ".join(f"w{i}x{j}" for j in range(40)) for i in range(5)
    )
    (vault / "long.md").write_text(f"# Long\n\n{sections}\n")
    e = facade(fake)
    e.collection_add(str(vault), "v")
    e.update()
    first = e.embed()
    assert first.chunks >= 5
    text = (vault / "long.md").read_text().replace("w2x7 ", "changed ")
    (vault / "long.md").write_text(text)
    e.update()
    second = e.embed()
    assert second.documents_chunked == 1
    assert 1 <= second.embedded < first.embedded
    e.cleanup()
    assert vectors.vector_count(e.db.conn) == first.embedded


def test_switching_models_reembeds_and_never_mixes(example: Engram, xdg: dict[str, str]) -> None:
    example.embed()
    other = facade(FakeEmbedder(dim=32, max_tokens=64))
    with pytest.raises(UnavailableError, match="holds vectors of fake-hash@256"):
        other.vsearch("coffee")
    report = other.embed()
    assert report.reset and report.dim == 32
    assert other.vsearch("Smell the dry grounds, then add water", n=1)[0].path == (
        "Reference/Cupping Protocol.md"
    )
    row = other.db.conn.execute("SELECT value FROM meta WHERE key = 'embed_dim'").fetchone()
    assert row[0] == "32"


def test_interrupted_embed_resumes(example: Engram, monkeypatch: pytest.MonkeyPatch) -> None:
    import engram.index.embed as driver

    monkeypatch.setattr(driver, "EMBED_BATCH", 2)
    calls = 0

    def stop(phase: str, done: int, total: int) -> None:
        nonlocal calls
        if phase == "embedding":
            calls += 1
            if calls == 3:
                raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        example.embed(progress=stop)
    partial = vectors.vector_count(example.db.conn)
    assert partial == 6
    rest = example.embed()
    assert rest.documents_chunked == 0 and rest.embedded > 0
    state = encode(example.embedding_state())
    assert state["embedded"] == state["chunks"] and state["queued"] == 0


def test_no_embeddings_yet_says_so_and_search_works(example: Engram) -> None:
    with pytest.raises(UnavailableError, match="run `engram embed`"):
        example.vsearch("coffee")
    assert example.search("coffee")


def test_missing_model_is_a_clear_error(
    xdg: dict[str, str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("ENGRAM_EMBED_MODEL", str(tmp_path / "nope.gguf"))
    e = facade()
    e.collection_add(str(EXAMPLE), "example")
    e.update()
    with pytest.raises(UnavailableError, match=r"nope\.gguf does not exist"):
        e.embed()
    monkeypatch.setenv("ENGRAM_EMBED_MODEL", "off")
    with pytest.raises(UnavailableError, match="no embed model is configured"):
        facade().embed()
    assert facade().search("coffee")


def test_missing_sqlite_vec_is_a_clear_error(
    xdg: dict[str, str], fake: FakeEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    import engram.store.db as db

    monkeypatch.setattr(db, "vec_extension_path", lambda: None)
    e = facade(fake)
    e.collection_add(str(EXAMPLE), "example")
    e.update()
    with pytest.raises(UnavailableError, match="sqlite-vec package is not installed"):
        e.embed()
    with pytest.raises(UnavailableError, match="vector search is unavailable"):
        e.vsearch("coffee")
    assert e.search("coffee")
    assert {c.name: c.status for c in e.doctor()}["sqlite-vec"] == "warn"


def test_warm_process_uses_the_matrix_with_same_results(
    example: Engram, monkeypatch: pytest.MonkeyPatch
) -> None:
    import engram.search.vector as vs

    monkeypatch.setattr(vs, "MATRIX_MIN_VECTORS", 1)
    example.embed()
    cold = example.vsearch("espresso roasters", n=5)
    warm = example.vsearch("espresso roasters", n=5)
    assert example._semantic.vector_index().matrix is not None
    # the warm process holds float16 vectors: the same notes in the same order, similarities
    # to float16's three significant digits
    assert [r.path for r in warm] == [r.path for r in cold]
    assert [r.score for r in warm] == pytest.approx([r.score for r in cold], abs=1e-3)


def test_an_index_chunked_before_m014_is_chunked_again_keeping_unchanged_vectors(
    example: Engram,
) -> None:
    """m014 forgets which texts were chunked: the next embed chunks every note again with the
    current chunker, re-embeds only passages whose text changed, and drops the vectors no
    passage uses any more."""
    from engram.store import migrations

    first = example.embed()
    stored = {r[0] for r in example.db.conn.execute("SELECT text_hash FROM embeddings")}
    with example.db.write() as conn:
        conn.execute("UPDATE embeddings SET text_hash = text_hash || '-old' WHERE rowid % 2 = 0")
        conn.execute("DELETE FROM _migrations WHERE name = 'm014_rechunk'")
        assert migrations.apply(conn) == ["m014_rechunk"]
    again = example.embed()
    assert again.documents_chunked == first.documents_chunked
    assert 0 < again.embedded < first.embedded  # the passages whose hash no longer matched
    kept = {r[0] for r in example.db.conn.execute("SELECT text_hash FROM embeddings")}
    assert kept == stored
    assert vectors.vector_count(example.db.conn) == len(stored)
