"""Which languages the vault is written in, and whether the embedding model serves them.

The indexer records each note's dominant language (models/language.py); this module sums them
up for `status`, `doctor`, `init` and `collection add`, and names the fix when a meaningful
share of the notes is in languages the configured embedder does not serve.
"""

from __future__ import annotations

from typing import Any

from engram.models import language, sources
from engram.store import documents as docs

MEANINGFUL_SHARE = 0.10  # of the notes whose language could be told
MIN_NOTES = 3  # fewer such notes than this is not a pattern yet
LANGUAGES_SHOWN = 3
FIX = (
    "run `engram models pull multilingual`, set models.embed: multilingual in the config file "
    "(or ENGRAM_EMBED_MODEL=multilingual), then `engram embed`"
)


def served(embed_spec: str | None) -> frozenset[str] | None:
    """Languages the embedding model of `embed_spec` serves (ISO codes, or language.EVERY);
    None when it cannot be told (a model whose name does not say) or embedding is off."""
    if embed_spec is None:
        return None
    built_in = sources.BUILT_IN.get(embed_spec.strip())
    if built_in is not None:
        return built_in.serves
    return language.served_by_name(embed_spec)


def report(conn: Any, embed_spec: str | None) -> dict[str, Any]:
    """Notes per language and, when the embedder leaves a meaningful share unserved, `advice`
    saying so with the command that fixes it (None otherwise)."""
    counts = docs.language_counts(conn)
    told = {c: n for c, n in counts.items() if c not in ("", language.UNDETERMINED)}
    total = sum(told.values())
    serves = served(embed_spec)
    unserved = {} if serves is None else language.unserved(told, serves)
    missing = sum(unserved.values())
    share = missing / total if total else 0.0
    advice = None
    if missing >= MIN_NOTES and share >= MEANINGFUL_SHARE:
        top = sorted(unserved.items(), key=lambda kv: (-kv[1], kv[0]))[:LANGUAGES_SHOWN]
        names = ", ".join(language.NAMES.get(c, c) for c, _ in top)
        more = " and others" if len(unserved) > LANGUAGES_SHOWN else ""
        model = sources.BUILT_IN[embed_spec].name if embed_spec in sources.BUILT_IN else embed_spec
        advice = (
            f"{missing} of {total} notes ({share:.0%}) are in {names}{more}, which the embedding "
            f"model {model} does not serve (semantic search finds them poorly): {FIX}"
        )
    return {
        "languages": dict(sorted(told.items(), key=lambda kv: (-kv[1], kv[0]))),
        "undetermined": counts.get(language.UNDETERMINED, 0),
        "pending": counts.get("", 0),
        "unserved": missing,
        "unservedShare": round(share, 3),
        "advice": advice,
    }
