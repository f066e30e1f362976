"""Retrieval: query syntax, BM25, vectors, fusion, snippets, output formats."""
