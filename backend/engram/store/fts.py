"""How text goes into the full-text index, shared by the indexer and the query builder.

unicode61 makes a whole run of CJK characters one token, so a Chinese or Japanese word inside a
sentence could never match. The `cjk` column holds overlapping bigrams of every CJK run instead;
queries are cut the same way and OR-ed, so a query with one missing segment still matches.
"""

from __future__ import annotations

import re

CJK_RUN = re.compile(
    "[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\u31f0-\u31ff]+"
)


def cjk_runs(text: str) -> list[str]:
    """Every run of CJK characters in the text."""
    return CJK_RUN.findall(text)


def bigrams(run: str) -> list[str]:
    """Overlapping two-character pieces of a CJK run (a single character stays whole)."""
    if len(run) < 2:
        return [run] if run else []
    return [run[i : i + 2] for i in range(len(run) - 1)]


def cjk_column(*texts: str) -> str:
    """The `cjk` column value: bigrams of every CJK run, space separated."""
    out: list[str] = []
    for text in texts:
        if text.isascii():  # the usual case, and far quicker to rule out than to search
            continue
        for run in CJK_RUN.findall(text):
            out.extend(bigrams(run))
    return " ".join(out)


def quote(term: str) -> str:
    """An FTS5 string literal: user text can never become query syntax."""
    return '"' + term.replace('"', '""') + '"'
