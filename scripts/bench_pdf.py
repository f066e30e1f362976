"""PDF text extraction and indexing speed on the bench PDFs (../shared/bench/attachments).

    python scripts/bench_pdf.py [--repeat 20] [--copies 1000] [--work DIR]

1. Extraction: each readable bench PDF is read `--repeat` times by Engram's extractor
   (vault/pdf.py, PDFium) in this process: pages per second, per file and in all. With
   pypdf or pdfminer.six installed (not dependencies of Engram: `pip install pypdf
   pdfminer.six` in a venv of your own), the same files are read by them for comparison.
2. Indexing: a vault of `--copies` PDFs (the bench PDFs again and again, each made distinct
   by a trailing comment so none shares a cached text) is indexed cold by the indexer, in its
   worker processes: pages per second end to end. Then the costs that keep a vault with that
   many PDFs fresh: a no-op update (each PDF costs a stat), and an update after every PDF was
   touched (each is hashed and found in the cache by its hash; PDFium reads none).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "backend"))
ATTACHMENTS = next(
    (
        p / "shared" / "bench" / "attachments"
        for p in ROOT.parents[:2]
        if (p / "shared" / "bench" / "attachments").is_dir()
    ),
    ROOT.parent / "shared" / "bench" / "attachments",
)


def readable() -> list[tuple[Path, bytes, int]]:
    """(path, bytes, pages) of every bench PDF Engram can read (the encrypted one is not)."""
    from engram.vault import pdf

    out = []
    for path in sorted(ATTACHMENTS.glob("*.pdf")):
        data = path.read_bytes()
        try:
            out.append((path, data, len(pdf.extract(data).pages)))
        except pdf.PdfError as exc:
            print(f"  {path.name}: {exc}")
    return out


def extraction(files: list[tuple[Path, bytes, int]], repeat: int) -> None:
    from engram.vault import pdf

    print(f"extraction, {repeat} reads of each file, in this process:")
    rivals = _rivals()
    total_pages, total_s = 0, 0.0
    spent: dict[str, float] = dict.fromkeys(rivals, 0.0)
    for path, data, pages in files:
        started = time.perf_counter()
        for _ in range(repeat):
            pdf.extract(data)
        seconds = time.perf_counter() - started
        total_pages += pages * repeat
        total_s += seconds
        line = f"  {path.name:40} {pages:>3} pages  {pages * repeat / seconds:7.0f} pages/s"
        for name, read in rivals.items():
            started = time.perf_counter()
            for _ in range(repeat):
                read(data)
            spent[name] += time.perf_counter() - started
        print(line)
    print(f"  all: {total_pages / total_s:.0f} pages/s (PDFium, Engram's extractor)")
    for name, seconds in spent.items():
        print(f"  all: {total_pages / seconds:.0f} pages/s ({name}, for comparison)")


def _rivals() -> dict[str, object]:
    """Other extractors, when installed here (they are not Engram's dependencies)."""
    import io

    out: dict[str, object] = {}
    try:
        import pypdf

        out["pypdf"] = lambda d: [p.extract_text() for p in pypdf.PdfReader(io.BytesIO(d)).pages]
    except ImportError:
        pass
    try:
        from pdfminer.high_level import extract_pages

        out["pdfminer.six"] = lambda d: list(extract_pages(io.BytesIO(d)))
    except ImportError:
        pass
    return out


def indexing(files: list[tuple[Path, bytes, int]], copies: int, work: Path) -> None:
    from engram import config
    from engram.index import indexer
    from engram.store.db import Database

    vault = work / "vault"
    vault.mkdir(parents=True)
    pages = 0
    for i in range(copies):
        path, data, n = files[i % len(files)]
        (vault / f"{i:05d}-{path.name}").write_bytes(data + b"\n%% copy %d\n" % i)
        pages += n
    db = Database(work / "index.sqlite")
    spec = [indexer.CollectionSpec("bench", vault, config.DEFAULT_PATTERN)]
    try:
        started = time.perf_counter()
        report = indexer.update(db, spec, config.DEFAULT_MAX_FILE_BYTES)
        cold = time.perf_counter() - started
        print(f"indexing {copies} PDFs ({pages} pages) cold, in worker processes:")
        print(f"  {cold:.1f} s, {pages / cold:.0f} pages/s, {report.added} documents")
        noop = _best(lambda: indexer.update(db, spec, config.DEFAULT_MAX_FILE_BYTES), 3)
        print(f"  no-op update: {noop * 1000:.0f} ms ({noop / copies * 1e6:.0f} µs a PDF)")
        for f in vault.iterdir():
            os.utime(f)
        started = time.perf_counter()
        report = indexer.update(db, spec, config.DEFAULT_MAX_FILE_BYTES)
        touched = time.perf_counter() - started
        print(
            f"  every PDF touched: {touched * 1000:.0f} ms "
            f"({report.unchanged} unchanged by hash, read from the cache)"
        )
    finally:
        db.close()


def _best(run: object, times: int) -> float:
    best = float("inf")
    for _ in range(times):
        started = time.perf_counter()
        run()  # type: ignore[operator]
        best = min(best, time.perf_counter() - started)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--copies", type=int, default=1000)
    parser.add_argument("--work", type=Path, default=None)
    args = parser.parse_args()
    if not ATTACHMENTS.is_dir():
        sys.exit(f"no bench PDFs in {ATTACHMENTS}")
    files = readable()
    extraction(files, args.repeat)
    if args.copies:
        with tempfile.TemporaryDirectory(prefix="engram-pdf-", dir=args.work) as tmp:
            indexing(files, args.copies, Path(tmp))


if __name__ == "__main__":
    main()
