"""Put the BEIR sets that scripts/bench_beir.py reads into the cache, verified byte for byte.

No package registry ships these sets, so this script downloads nothing: it takes BEIR's own
zip of a set (where to get it: docs/bench-data.md), checks the zip's size and SHA-256, checks
the SHA-256 and line count of corpus.jsonl, queries.jsonl and qrels/test.tsv inside it, and
only then moves them into ~/.cache/engram/bench/<set>/ ($XDG_CACHE_HOME respected). SciFact
is not here: it is read from ../shared/bench/scifact (see its PROVENANCE.md).

    python scripts/fetch_bench.py arguana --zip path/to/arguana.zip
    python scripts/fetch_bench.py --check        # re-verify every set already in the cache
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import IO

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_beir import BENCH_CACHE


@dataclass(frozen=True)
class Member:
    """A file of the set as BEIR ships it: its path in the zip, digest and line count."""

    path: str
    sha256: str
    lines: int


@dataclass(frozen=True)
class Source:
    """BEIR's zip of one set (size, SHA-256, and md5 as BEIR's README lists it)."""

    zip_size: int
    zip_sha256: str
    zip_md5: str
    members: tuple[Member, ...]


SOURCES = {
    "arguana": Source(
        3_773_617,
        "cfdf79adce27a401b3cd3ea267903134dbfab2c6afeb95d7fe5724a00bf7557b",
        "8ad3e3c2a5867cdced806d6503f29b99",
        (
            Member(
                "corpus.jsonl",
                "0627982cec4ee896df6dc98604ef6b499c83fd87a19eaaeb3f23b88bbef6cbce",
                8674,
            ),
            Member(
                "queries.jsonl",
                "f8b7c903f95d9a2d291de3915a8fac25085e9db679f19f59fea4145bfd1df618",
                1406,
            ),
            Member(
                "qrels/test.tsv",
                "0c47b481fa8b47fb9ca5e74bc8a017bdea14518c0e4a5d21345291180b3aca76",
                1407,
            ),
        ),
    ),
    "nfcorpus": Source(
        2_448_432,
        "efe5be03f8c5b86a5870102d0599d227c8c6e2484328e68c6522560385671b0b",
        "a89dba18a62ef92f7d323ec890a0d38d",
        (
            Member(
                "corpus.jsonl",
                "10cc83ef1826b1425e6a87090b5140b39b27755d5a27e48215a88611c899991f",
                3633,
            ),
            Member(
                "queries.jsonl",
                "d024e6621b84925d485ae473d316a0c3af31c62c8068a59fb29d22f7613aef2a",
                3237,
            ),
            Member(
                "qrels/test.tsv",
                "f8fba6ef3d4dd9c3a242a8ba4ae38276fc3622fce7dcbae764766d564542fd2a",
                12335,
            ),
        ),
    ),
}


def digest(fh: IO[bytes], algo: str = "sha256") -> tuple[str, int, int]:
    """(hex digest, bytes, newline count) of a binary stream, read in 1 MiB blocks."""
    h = hashlib.new(algo)
    size = lines = 0
    while block := fh.read(1 << 20):
        h.update(block)
        size += len(block)
        lines += block.count(b"\n")
    return h.hexdigest(), size, lines


def check_zip(name: str, zip_path: Path) -> None:
    """Exit unless the zip is BEIR's own (size, SHA-256 and md5)."""
    src = SOURCES[name]
    with zip_path.open("rb") as fh:
        sha, size, _ = digest(fh)
    with zip_path.open("rb") as fh:
        md5, _, _ = digest(fh, "md5")
    if (size, sha, md5) != (src.zip_size, src.zip_sha256, src.zip_md5):
        sys.exit(
            f"{zip_path} is not BEIR's {name}.zip: {size} bytes, sha256 {sha}, md5 {md5}; "
            f"expected {src.zip_size} bytes, sha256 {src.zip_sha256}, md5 {src.zip_md5}"
        )


def place(name: str, zip_path: Path, root: Path) -> Path:
    """Extract and verify the set's files, then move them into root/<name> in one rename."""
    check_zip(name, zip_path)
    root.mkdir(parents=True, exist_ok=True)
    final = root / name
    with tempfile.TemporaryDirectory(dir=root, prefix=f".{name}-") as tmp:
        staged = Path(tmp) / name
        with zipfile.ZipFile(zip_path) as zf:
            for m in SOURCES[name].members:
                out = staged / m.path
                out.parent.mkdir(parents=True, exist_ok=True)
                with zf.open(f"{name}/{m.path}") as src, out.open("wb") as dst:
                    shutil.copyfileobj(src, dst, 1 << 20)
                problem = verify(out, m)
                if problem:
                    sys.exit(f"{name}.zip member {m.path}: {problem}")
        if final.exists():  # the old copy goes with the temporary folder
            os.replace(final, Path(tmp) / "replaced")
        os.replace(staged, final)
    return final


def verify(path: Path, m: Member) -> str | None:
    """None if the file is the pinned one, else what differs."""
    if not path.is_file():
        return "missing"
    with path.open("rb") as fh:
        sha, _, lines = digest(fh)
    if (sha, lines) != (m.sha256, m.lines):
        return f"sha256 {sha}, {lines} lines; expected {m.sha256}, {m.lines} lines"
    return None


def check(root: Path) -> bool:
    """Verify every set found under root; print one line per set."""
    ok = True
    for name, src in SOURCES.items():
        if not (root / name).exists():
            print(f"{name}: not in {root}")
            continue
        problems = [(m.path, verify(root / name / m.path, m)) for m in src.members]
        bad = [f"{p}: {why}" for p, why in problems if why]
        ok = ok and not bad
        print(f"{name}: " + ("; ".join(bad) if bad else f"ok ({root / name})"))
    return ok


def main() -> None:
    """Place one set from its zip, or check the cache."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("set", nargs="?", choices=list(SOURCES))
    ap.add_argument("--zip", type=Path, help="BEIR's <set>.zip (see docs/bench-data.md).")
    ap.add_argument("--check", action="store_true", help="Verify the sets in the cache.")
    ap.add_argument("--root", type=Path, default=BENCH_CACHE, help=f"Default {BENCH_CACHE}.")
    args = ap.parse_args()
    if args.check:
        sys.exit(0 if check(args.root) else 1)
    if not args.set or not args.zip:
        sys.exit(
            "name a set and its zip: fetch_bench.py SET --zip PATH. No package registry ships "
            "these sets; docs/bench-data.md says where BEIR's zips are (BEIR's own release, or "
            "the copies kept in the beir-cellar/beir repository's history) and what they hash to"
        )
    print(f"{args.set}: verified, placed in {place(args.set, args.zip, args.root)}")


if __name__ == "__main__":
    main()
