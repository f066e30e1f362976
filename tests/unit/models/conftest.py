"""The tiny generated GGUF models live in tests/conftest.py (fixture `tiny`)."""
