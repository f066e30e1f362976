"""How text goes into the full-text index, shared by the indexer and the query builder.

unicode61 makes a whole run of CJK characters one token, so a Chinese or Japanese word inside a
sentence could never match; the same holds for Thai, Lao, Khmer and Myanmar, written without
spaces between words. The `cjk` column holds overlapping bigrams of every such run instead;
queries are cut the same way and OR-ed, so a query with one missing segment still matches.

The column also holds the folded form of words unicode61 keeps apart from their plain spelling
(its remove_diacritics covers Latin accents only): Arabic with its vowel marks, tatweel, hamza
seats or the article "al-"; Russian words as their Snowball stem ("ё" as "е"), since porter
stems English only; Latin letters that are not an accent away from ASCII (ß, ł, đ, ø, æ, œ).
A query word is looked up in this column in its folded form too.
"""

from __future__ import annotations

import re
import threading

CJK_RUN = re.compile(
    "[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\u31f0-\u31ff"
    "\u0e00-\u0eff\u1780-\u17ff\u1000-\u109f]+"  # Thai, Lao, Khmer, Myanmar
)
# Arabic vowel marks (harakat, shadda, sukun, dagger alef) and tatweel: optional in writing
_MARKS = "\u0610-\u061a\u064b-\u065f\u0670\u06d6-\u06ed\u0640"
_ARABIC_MARKS = re.compile(f"[{_MARKS}]")
WORD = re.compile(f"[\\w{_MARKS}\u0300-\u036f]+")  # \w leaves out combining marks
_ARABIC_ARTICLE = re.compile("^(?:[وفبك]?ال|لل)(?=..)")
_FOLD = str.maketrans(
    {
        "أ": "ا",
        "إ": "ا",
        "آ": "ا",
        "ٱ": "ا",
        "ё": "е",
        "ß": "ss",
        "ł": "l",
        "đ": "d",
        "ø": "o",
        "æ": "ae",
        "œ": "oe",
        "ı": "i",
        "þ": "th",
        "ð": "d",
    }
)


def cjk_runs(text: str) -> list[str]:
    """Every run of CJK characters in the text."""
    return CJK_RUN.findall(text)


def bigrams(run: str) -> list[str]:
    """Overlapping two-character pieces of a CJK run (a single character stays whole)."""
    if len(run) < 2:
        return [run] if run else []
    return [run[i : i + 2] for i in range(len(run) - 1)]


_CYRILLIC = re.compile("[\u0400-\u04ff]")
_local = threading.local()  # a Snowball stemmer keeps state between calls: one per thread


def _russian(word: str) -> str:
    stemmer = getattr(_local, "russian", None)
    if stemmer is None:
        import snowballstemmer  # on first use: the package loads all its ~30 languages

        stemmer = _local.russian = snowballstemmer.stemmer("russian")
    return str(stemmer.stemWord(word))


def fold(word: str) -> str:
    """A word's plain spelling (lower case; see the module docstring), "" for a word that is
    plain already or in a script the folding does not touch."""
    if word.isascii():
        return ""
    low = word.lower()
    plain = _ARABIC_MARKS.sub("", low).translate(_FOLD)
    plain = _ARABIC_ARTICLE.sub("", plain)
    if _CYRILLIC.match(plain):
        plain = _russian(plain)
    return plain if plain != low else ""


def cjk_column(*texts: str) -> str:
    """The `cjk` column value: bigrams of every run of a script written without spaces, and
    the folded form of every word that has one, space separated."""
    out: list[str] = []
    for text in texts:
        if text.isascii():  # the usual case, and far quicker to rule out than to search
            continue
        for run in CJK_RUN.findall(text):
            out.extend(bigrams(run))
        out.extend(f for f in map(fold, WORD.findall(CJK_RUN.sub(" ", text))) if f)
    return " ".join(out)


def quote(term: str) -> str:
    """An FTS5 string literal: user text can never become query syntax."""
    return '"' + term.replace('"', '""') + '"'
