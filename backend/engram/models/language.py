"""Which language and script a text is in, and which languages an embedding model serves.

Cheap enough for every note the indexer stores and every expanded query: the script comes from
Unicode character names (stdlib), the language from py3langid, a naive Bayes identifier over
byte n-grams for about 140 languages whose model ships inside the package (no model hub),
loaded once per process on first use (from an unpacked copy in the cache: ~0.1 s; unpacking
the packaged LZMA file costs ~0.5 s more). Only a sample of a long text is read.
"""

from __future__ import annotations

import lzma
import os
import re
import shutil
import tempfile
import threading
import unicodedata
from collections import Counter
from functools import lru_cache
from pathlib import Path
from typing import Any

UNDETERMINED = "und"
EVERY = frozenset({"*"})  # what a multilingual embedder serves: about every written language
SAMPLE_CHARS = 4000  # language and script of a long note: its first few thousand characters
MIN_LETTERS = 40  # fewer letters than this (a to-do list, a table of numbers): undetermined
MIN_CONFIDENCE = 0.5
QUERY_CONFIDENCE = 0.8  # a query is short: name its language to the generator only when sure
WIDE_WEIGHT = 3  # one Han / kana / Hangul character carries about as much as 3 Latin letters
PRINCIPAL_SHARE = 0.25  # a non-Latin script this share of a query's letters makes it its script

# Code, URLs, wiki-link targets and markup say nothing about the language of the prose.
_NOISE = re.compile(
    r"```.*?(?:```|\Z)|`[^`\n]*`|https?://\S+|\[\[[^\]|\n]*\|?|\]\]|<[^>\n]*>|\{\{.*?\}\}",
    re.DOTALL,
)
# Scripts whose letters are whole syllables or words (weighed more), and those one family.
_WIDE = {"Han", "Hangul"}
_FAMILY = {"Hiragana": "Han", "Katakana": "Han", "Bopomofo": "Han"}
_NAME_PREFIXES = ("FULLWIDTH ", "HALFWIDTH ", "MATHEMATICAL ")
_SCRIPT_WORDS = {"CJK": "Han"}

# ISO 639-1 code -> English name, for the languages people most often write notes in; the
# generator is told the name (models follow "write in German" better than "write in de").
NAMES = {
    "ar": "Arabic", "bg": "Bulgarian", "bn": "Bengali", "ca": "Catalan", "cs": "Czech",
    "da": "Danish", "de": "German", "el": "Greek", "en": "English", "es": "Spanish",
    "et": "Estonian", "fa": "Persian", "fi": "Finnish", "fr": "French", "he": "Hebrew",
    "hi": "Hindi", "hr": "Croatian", "hu": "Hungarian", "id": "Indonesian", "it": "Italian",
    "ja": "Japanese", "ko": "Korean", "lt": "Lithuanian", "lv": "Latvian", "ms": "Malay",
    "nl": "Dutch", "no": "Norwegian", "pl": "Polish", "pt": "Portuguese", "ro": "Romanian",
    "ru": "Russian", "sk": "Slovak", "sl": "Slovenian", "sr": "Serbian", "sv": "Swedish",
    "ta": "Tamil", "th": "Thai", "tr": "Turkish", "uk": "Ukrainian", "ur": "Urdu",
    "vi": "Vietnamese", "zh": "Chinese",
}  # fmt: skip

# The script each language is written in, where it is not Latin (what an embedder serving only
# some languages has word pieces for).
_SCRIPTS = {
    "ar": "Arabic", "fa": "Arabic", "ur": "Arabic", "be": "Cyrillic", "bg": "Cyrillic",
    "kk": "Cyrillic", "mk": "Cyrillic", "ru": "Cyrillic", "sr": "Cyrillic", "uk": "Cyrillic",
    "bn": "Bengali", "el": "Greek", "he": "Hebrew", "hi": "Devanagari", "mr": "Devanagari",
    "ja": "Han", "zh": "Han", "ko": "Hangul", "ta": "Tamil", "th": "Thai",
}  # fmt: skip

_identifier: Any = None
_identifier_lock = threading.Lock()


@lru_cache(maxsize=8192)
def _script_of(ch: str) -> str | None:
    """The Unicode script of a letter, from its name ("CYRILLIC SMALL LETTER A" -> Cyrillic)."""
    if not ch.isalpha():
        return None
    name = unicodedata.name(ch, "")
    for prefix in _NAME_PREFIXES:
        name = name.removeprefix(prefix)
    word = name.split(" ", 1)[0]
    if not word:
        return None
    script = _SCRIPT_WORDS.get(word, word.title())
    return _FAMILY.get(script, script)


def script_counts(text: str) -> Counter[str]:
    """Letters per script family (Han, kana and bopomofo are one) in a sample of `text`."""
    counts: Counter[str] = Counter()
    for ch in text[:SAMPLE_CHARS]:
        script = _script_of(ch)
        if script is not None:
            counts[script] += 1
    return counts


def principal_script(text: str) -> str | None:
    """The script a short text is written in: a non-Latin script once it has a quarter of the
    (weighted) letters ("Obsidian 同步" is Han), else Latin; None without letters."""
    counts = script_counts(text)
    weighted = {s: n * (WIDE_WEIGHT if s in _WIDE else 1) for s, n in counts.items()}
    total = sum(weighted.values())
    if not total:
        return None
    others = [(n, s) for s, n in weighted.items() if s != "Latin"]
    if others:
        n, script = max(others)
        if n >= PRINCIPAL_SHARE * total:
            return script
    return "Latin" if "Latin" in weighted else max(others)[1]


def same_script(query: str, text: str) -> bool:
    """Whether `text` is written in the script of `query` (either without letters: True)."""
    wanted, got = principal_script(query), principal_script(text)
    return wanted is None or got is None or wanted == got


def _detector() -> Any:
    global _identifier
    with _identifier_lock:
        if _identifier is None:
            _identifier = _load_identifier()
        return _identifier


def _load_identifier() -> Any:
    """py3langid's identifier. Its model ships LZMA-compressed (68 MB unpacked) and unpacking it
    was most of a one-off `engram status`; the unpacked copy is kept in the cache, named by
    py3langid's version, and any trouble with it falls back to the packaged file."""
    from importlib.metadata import version

    from py3langid.langid import MODEL_DIR, MODEL_FILE, LanguageIdentifier

    unpacked = None
    try:
        unpacked = _unpacked_model(MODEL_DIR / MODEL_FILE, f"py3langid-{version('py3langid')}")
        ptc, pc, classes, nextmove, row, output = _read_unpacked(unpacked)
        return LanguageIdentifier(ptc, pc, classes, nextmove, output, norm_probs=True, tk_row=row)
    except (OSError, ValueError, KeyError, AttributeError, ImportError, EOFError):
        if unpacked is not None:  # a damaged copy is made again next time
            unpacked.unlink(missing_ok=True)
        return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)


def _unpacked_model(packed: Path, name: str) -> Path:
    """The cached unpacked copy of `packed`, made (atomically) when missing."""
    # as config.xdg_dir reads it (models/ may not import config)
    folder = Path(os.environ.get("XDG_CACHE_HOME") or "~/.cache").expanduser() / "engram"
    target = folder / "langid" / f"{name}.npz"
    if target.is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".unpack-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out, lzma.open(packed) as src:
            shutil.copyfileobj(src, out, length=1 << 20)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


def _read_unpacked(path: Path) -> tuple[Any, ...]:
    """The identifier's parts from an unpacked model, in the shapes py3langid's loader gives."""
    import numpy as np
    from py3langid.modelio import _to_array

    with np.load(path, allow_pickle=False) as data:
        return (
            data["ptc"],
            data["pc"],
            data["classes"].tolist(),
            _to_array(data["nextmove"]),
            _to_array(data["nextmove_row"]),
            data["out_feat"].tolist(),
        )


def _classify(text: str) -> tuple[str, float, int]:
    """(ISO 639 code, confidence, letters) of the prose in a sample of `text`."""
    sample = _NOISE.sub(" ", text[: SAMPLE_CHARS * 2])[:SAMPLE_CHARS]
    letters = sum(1 for ch in sample if ch.isalpha())
    if letters == 0:
        return UNDETERMINED, 0.0, 0
    code, confidence = _detector().classify(sample)
    return str(code), float(confidence), letters


def detect(text: str) -> str:
    """The dominant language of a note's text as an ISO 639 code, or "und" when it has too
    little prose to tell (short lists, tables, code)."""
    code, confidence, letters = _classify(text)
    if letters < MIN_LETTERS or confidence < MIN_CONFIDENCE:
        return UNDETERMINED
    return code


def odds(text: str) -> dict[str, float]:
    """The probability the identifier gives each language (ISO 639 code) of a short text such
    as a query; empty without letters."""
    sample = _NOISE.sub(" ", text[: SAMPLE_CHARS * 2])[:SAMPLE_CHARS]
    if not any(ch.isalpha() for ch in sample):
        return {}
    return {str(code): float(p) for code, p in _detector().rank(sample)}


def query_language(query: str) -> str | None:
    """The English name of a query's language when the identifier is sure of it, else None."""
    code, confidence, _ = _classify(query)
    return NAMES.get(code) if confidence >= QUERY_CONFIDENCE else None


# Embedding models by name: which serve many languages, which English only. A name matching
# neither is not judged (no advice is better than wrong advice).
_MULTILINGUAL_NAMES = ("multilingual", "bge-m3", "embeddinggemma", "qwen3", "labse", "xlm", "me5")
_ENGLISH_NAMES = ("minilm", "-en", "_en", "english", "nomic-embed-text", "mxbai-embed", "gte-")


def served_by_name(model_name: str) -> frozenset[str] | None:
    """Languages an embedding model serves judged by its name: ISO codes (EVERY for a
    multilingual model), None when the name does not say."""
    name = model_name.casefold()
    if any(m in name for m in _MULTILINGUAL_NAMES):
        return EVERY
    if any(m in name for m in _ENGLISH_NAMES):
        return frozenset({"en"})
    return None


def script_of(code: str) -> str:
    """The script a language (ISO 639 code) is written in: Latin unless known otherwise."""
    return _SCRIPTS.get(code, "Latin")


def unserved(codes: dict[str, int], serves: frozenset[str]) -> dict[str, int]:
    """The entries of `codes` (language -> notes) a model serving `serves` does not serve."""
    return {} if serves == EVERY else {c: n for c, n in codes.items() if c not in serves}
