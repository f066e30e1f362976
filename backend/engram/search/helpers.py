"""Threads that take part of one search off the caller's thread.

SQLite, llama.cpp and the float16 vector scan all let go of the GIL while they work, so on a
machine with two cores one search can use both: hybrid finds the vector list while BM25
ranks, and a keyword search over a large share of a large index ranks each half of it at once.
Whatever runs here opens its own connection (a SQLite connection belongs to one thread).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

HELPERS = ThreadPoolExecutor(max_workers=2, thread_name_prefix="engram-helper")
