"""The indexing pipeline: scan, parse, store, embed."""
