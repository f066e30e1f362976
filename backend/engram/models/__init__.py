"""GGUF models through llama.cpp: embedder, reranker, generator."""
