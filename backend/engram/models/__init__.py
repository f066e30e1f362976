"""GGUF models through llama.cpp: embedder, reranker, generator.

Importing this package is cheap: llama_cpp is imported only when a model loads
(`engram.models.llama`). Public pieces:

- `protocols`: Embedder / Reranker / Generator, GGUFInfo, ModelError
- `sources`: `parse_spec`, `resolve`, `pull`, `info`, `list_models` (specs -> .gguf paths)
- `llama`: `load_embedder`, `system_info`; `llama_rerank.load_reranker`;
  `llama_generate.load_generator`
- `convert.convert_bert`: safetensors BERT -> GGUF; `fake.FakeEmbedder` for tests
"""

from .protocols import Embedder, Generator, GGUFInfo, ModelError, Prompts, Reranker, Vector

__all__ = ["Embedder", "GGUFInfo", "Generator", "ModelError", "Prompts", "Reranker", "Vector"]
