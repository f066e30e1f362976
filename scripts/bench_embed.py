"""Embedding throughput: `engram embed` (chunk + embed + store) vs raw llama-cpp `embed` on the
same passages, same model and threads. Target ratio >= 0.9.

    python scripts/bench_embed.py [--docs 200] [--threads 2] [--model PATH]
    python scripts/bench_embed.py --compare default,multilingual [--docs 150]

Passages come from BEIR SciFact (../shared/bench/scifact/corpus.jsonl) written as notes. With
sentence-transformers installed, its throughput on the same passages is printed for the record.
`--compare` embeds the same passages (the default model's chunks, which every model here takes
whole) with each model spec through Engram's embedder, prefixes included, and prints
passages/s and tokens/s of each.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "bench" / "scifact" / "corpus.jsonl"


def main() -> None:
    """Run both and print passages/s and the ratio."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--docs", type=int, default=200)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--model", type=Path)
    ap.add_argument("--compare", help="Model specs, comma-separated: same passages, each model.")
    ap.add_argument("--corpus", type=Path, default=CORPUS, help="A BEIR corpus.jsonl.")
    args = ap.parse_args()
    if args.compare:
        compare(args.compare.split(","), args.corpus, args.docs, args.threads)
        return

    from engram import config
    from engram.models import sources

    real_cache = config.xdg_dir(os.environ, "XDG_CACHE_HOME", ".cache")
    model = args.model or sources.resolve("default", real_cache)
    work = Path(tempfile.mkdtemp(prefix="engram-bench-embed-"))
    vault = work / "vault"
    vault.mkdir()
    with args.corpus.open(encoding="utf-8") as fh:
        for _, line in zip(range(args.docs), fh, strict=False):
            doc = json.loads(line)
            (vault / f"{doc['_id']}.md").write_text(
                f"# {doc['title']}\n\n{doc['text']}\n", encoding="utf-8"
            )
    os.environ.update(
        XDG_DATA_HOME=str(work / "data"),
        XDG_CONFIG_HOME=str(work / "config"),
        ENGRAM_EMBED_MODEL=str(model),
        ENGRAM_THREADS=str(args.threads),
    )
    from engram.service import Engram

    engram = Engram(config.resolve(os.environ))
    engram.collection_add(str(vault), "bench")
    engram.update()
    engram.embedder()  # load outside the timing, as raw llama-cpp below
    t = time.perf_counter()
    report = engram.embed()
    ours = time.perf_counter() - t
    print(
        f"engram embed: {report.chunks} chunks of {args.docs} notes in {ours:.2f}s = "
        f"{report.embedded / ours:.2f} passages/s (chunking + embedding + storing)"
    )

    texts = _passages(engram)
    from llama_cpp import Llama

    llm = Llama(
        model_path=str(model),
        embedding=True,
        n_ctx=512,
        n_batch=512,
        n_ubatch=512,
        n_threads=args.threads,
        flash_attn=True,
        verbose=False,
    )
    t = time.perf_counter()
    for i in range(0, len(texts), 16):
        llm.embed(texts[i : i + 16], truncate=True)
    raw = time.perf_counter() - t
    print(
        f"raw llama-cpp Llama.embed: {len(texts)} passages in {raw:.2f}s = "
        f"{len(texts) / raw:.2f} passages/s"
    )
    print(f"ratio (engram / raw): {raw / ours:.2f} (target >= 0.9)")
    try:
        from sentence_transformers import SentenceTransformer  # type: ignore[import-not-found]
    except ImportError:
        print("sentence-transformers not installed: skipped")
        return
    st = SentenceTransformer("sentence-transformers/all-MiniLM-L6-v2", device="cpu")
    t = time.perf_counter()
    st.encode(texts, batch_size=16)
    print(f"sentence-transformers: {len(texts) / (time.perf_counter() - t):.2f} passages/s")


def compare(specs: list[str], corpus: Path, docs: int, threads: int) -> None:
    """passages/s of each model on the same passages, through Engram's embedder."""
    from engram import config
    from engram.index.chunk import chunk_note
    from engram.models import sources
    from engram.models.llama import LlamaEmbedder
    from engram.vault.parse import parse_note

    cache = config.xdg_dir(os.environ, "XDG_CACHE_HOME", ".cache")
    paths = [sources.resolve(spec, cache) for spec in specs]
    chunker = LlamaEmbedder(sources.resolve("default", cache), threads)
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
    print(f"{len(texts)} passages from {docs} SciFact abstracts, {threads} threads")
    for spec, path in zip(specs, paths, strict=True):
        embedder = LlamaEmbedder(path, threads)
        embedder.embed_documents(texts[:4])  # warm up outside the timing
        tokens = sum(len(embedder.tokenize(embedder.prompts.document + t)) for t in texts)
        started = time.perf_counter()
        for i in range(0, len(texts), 16):
            embedder.embed_documents(texts[i : i + 16])
        took = time.perf_counter() - started
        print(
            f"{spec:>13} ({path.name}): {len(texts) / took:.2f} passages/s, "
            f"{tokens / took:.0f} tokens/s, {tokens / len(texts):.0f} tokens per passage"
        )
        embedder.close()


def _passages(engram: Any) -> list[str]:
    """The exact texts engram embedded (chunk embed texts), re-derived from the notes."""
    from engram.index.chunk import chunk_note
    from engram.store.search import content_text
    from engram.vault.parse import parse_note

    conn = engram.db.conn
    embedder = engram.embedder()
    out: list[str] = []
    for doc_hash, path in conn.execute("SELECT hash, path FROM documents ORDER BY path"):
        text = content_text(conn, doc_hash) or ""
        chunks = chunk_note(
            text, parse_note(text, path), embedder.count_tokens, embedder.max_text_tokens
        )
        out += [c.embed_text for c in chunks]
    return list(dict.fromkeys(out))


if __name__ == "__main__":
    main()
