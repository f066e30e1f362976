"""scripts/fetch_bench.py puts only verified bytes in the benchmark cache; bench_beir scores
ArguAna-style sets without the query's own document."""

from __future__ import annotations

import hashlib
import sys
import zipfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))

import bench_beir
import fetch_bench

FILES = {
    "corpus.jsonl": b'{"_id": "d1", "title": "", "text": "a"}\n{"_id": "q1", "text": "b"}\n',
    "queries.jsonl": b'{"_id": "q1", "text": "b"}\n',
    "qrels/test.tsv": b"query-id\tcorpus-id\tscore\r\nq1\td1\t1\r\n",
}


def make_zip(path: Path, files: dict[str, bytes]) -> fetch_bench.Source:
    """A zip laid out like BEIR's, and the Source that pins exactly these bytes."""
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in files.items():
            zf.writestr(f"toy/{name}", data)
    raw = path.read_bytes()
    members = tuple(
        fetch_bench.Member(n, hashlib.sha256(d).hexdigest(), d.count(b"\n"))
        for n, d in FILES.items()
    )
    return fetch_bench.Source(
        len(raw), hashlib.sha256(raw).hexdigest(), hashlib.md5(raw).hexdigest(), members
    )


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    zip_path = tmp_path / "toy.zip"
    monkeypatch.setitem(fetch_bench.SOURCES, "toy", make_zip(zip_path, FILES))
    return zip_path


def test_verified_set_lands_whole_and_replaces_the_old_copy(toy: Path, tmp_path: Path) -> None:
    root = tmp_path / "cache"
    (root / "toy").mkdir(parents=True)
    (root / "toy" / "stale.txt").write_text("old")
    placed = fetch_bench.place("toy", toy, root)
    assert sorted(p.relative_to(placed).as_posix() for p in placed.rglob("*") if p.is_file()) == [
        "corpus.jsonl",
        "qrels/test.tsv",
        "queries.jsonl",
    ]
    assert (placed / "qrels" / "test.tsv").read_bytes() == FILES["qrels/test.tsv"]
    assert sorted(p.name for p in root.iterdir()) == ["toy"]  # no temporary folder left
    assert fetch_bench.check(root)


def test_another_zip_is_refused_and_the_cache_is_untouched(toy: Path, tmp_path: Path) -> None:
    root = tmp_path / "cache"
    fetch_bench.place("toy", toy, root)
    before = (root / "toy" / "corpus.jsonl").read_bytes()
    forged = tmp_path / "forged.zip"
    make_zip(forged, {**FILES, "corpus.jsonl": b'{"_id": "d1", "text": "changed"}\n'})
    with pytest.raises(SystemExit, match=r"is not BEIR's toy\.zip"):
        fetch_bench.place("toy", forged, root)
    assert (root / "toy" / "corpus.jsonl").read_bytes() == before


def test_a_changed_member_is_refused_even_in_the_pinned_zip(
    toy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = fetch_bench.SOURCES["toy"]
    wrong = (fetch_bench.Member("corpus.jsonl", "0" * 64, 2), *src.members[1:])
    monkeypatch.setitem(
        fetch_bench.SOURCES,
        "toy",
        fetch_bench.Source(src.zip_size, src.zip_sha256, src.zip_md5, wrong),
    )
    with pytest.raises(SystemExit, match=r"member corpus\.jsonl"):
        fetch_bench.place("toy", toy, tmp_path / "cache")
    assert not (tmp_path / "cache" / "toy").exists()
    (tmp_path / "cache" / "toy" / "qrels").mkdir(parents=True)
    assert not fetch_bench.check(tmp_path / "cache")


def test_self_excluded_scores_drop_only_the_querys_own_document(tmp_path: Path) -> None:
    run = tmp_path / "run.trec"
    run.write_text(
        "q1 Q0 q1 1 3.000000 engram\nq1 Q0 d1 2 2.000000 engram\nq2 Q0 d2 1 1.000000 engram\n"
    )
    qrels = tmp_path / "qrels.tsv"
    qrels.write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t1\n")
    r = bench_beir.self_excluded(run, qrels)
    assert r["ndcg@10"] == pytest.approx(1.0) and r["mrr@10"] == pytest.approx(1.0)


def test_sample_keeps_every_judged_document_and_is_the_same_each_run(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(f'{{"_id": "d{i}", "text": "t"}}\n' for i in range(50)))
    qrels = tmp_path / "test.tsv"
    qrels.write_text("query-id\tcorpus-id\tscore\nq1\td3\t1\nq2\td41\t1\nq2\td7\t0\n")
    kept = bench_beir.sample_ids(corpus, qrels, 10)
    assert len(kept) == 10 and {"d3", "d41", "d7"} <= kept
    assert bench_beir.sample_ids(corpus, qrels, 10) == kept
    # Never fewer than the judged documents, whatever the size asked.
    assert bench_beir.sample_ids(corpus, qrels, 2) == {"d3", "d41", "d7"}
    assert len(bench_beir.sample_ids(corpus, qrels, 500)) == 50
    vault = tmp_path / "vault"
    assert bench_beir.write_vault(corpus, vault, kept) == 10
    assert {p.stem for p in vault.glob("*.md")} == kept
