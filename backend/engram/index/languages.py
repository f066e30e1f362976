"""Which languages the vault is written in, and whether the embedding model serves them.

Each note's dominant language (models/language.py) is recorded in `documents.language` by
`backfill`, which `embed` runs before chunking: identification costs about a millisecond a note
plus half a second to load its model, too much for `update`'s hot path (a thousand notes a
second, a one-file update in a tenth of one) but nothing beside embedding. `report` sums the
recorded languages up for `status`, `doctor`, `init` and `collection add`, estimating from a
sample of the notes not looked at yet, and names the fix when a meaningful share of the notes is
in languages the configured embedder does not serve.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from engram.index import turns
from engram.models import language, sources
from engram.store import documents as docs
from engram.store.db import Database, index_memo

MEANINGFUL_SHARE = 0.10  # of the notes whose language could be told
MIN_NOTES = 3  # fewer such notes than this is not a pattern yet
LANGUAGES_SHOWN = 3
SAMPLE = 150  # notes not looked at yet that a report identifies (not stored) to estimate
BATCH = 100  # notes identified per transaction (~70 ms)
MOSTLY = 0.5  # a vault with more of its notes unserved than this gets the multilingual model
SWITCH = "engram embed --model multilingual"
FIX = f"run `{SWITCH}` (it switches the embedding model and embeds again, resumably)"


@dataclass(frozen=True)
class LanguageReport:
    """Notes per language, and advice when the embedder leaves many unserved (JSON: wire.py)."""

    languages: dict[str, int]  # ISO code -> notes, most first
    undetermined: int  # notes with too little prose to tell
    pending: int  # notes not looked at yet
    unserved: int  # notes in languages the embedder does not serve
    unserved_share: float  # of the notes whose language is known, rounded to 0.001
    advice: str | None  # what to do about it, when it matters


def served(embed_spec: str | None) -> frozenset[str] | None:
    """Languages the embedding model of `embed_spec` serves (ISO codes, or language.EVERY);
    None when it cannot be told (a model whose name does not say) or embedding is off."""
    if embed_spec is None:
        return None
    built_in = sources.BUILT_IN.get(embed_spec.strip())
    if built_in is not None:
        return built_in.serves
    return language.served_by_name(embed_spec)


def backfill(db: Database, progress: Callable[[str, int, int], None] | None = None) -> int:
    """Identify and record the language of every note that has none yet; return how many.
    `progress("languages", done, total)` follows each batch committed: an index job may stop
    there for a write (a first run over 3,000 notes takes ~2 s)."""
    done, total = 0, docs.count_without_language(db.conn) if progress else 0
    while batch := docs.without_language(db.conn, BATCH):
        # told away from the writers' turn (turns.py): a note a write changed meanwhile has
        # no language again, or a new text, and is told again (`set_language` checks)
        found, _ = turns.away(partial(_detect, batch))
        with db.write() as conn:
            for doc_id, text, code in found:
                docs.set_language(conn, doc_id, code, text)
        done += len(found)
        if progress is not None:
            progress("languages", done, max(total, done))
    return done


def _detect(batch: list[tuple[int, str]]) -> list[tuple[int, str, str]]:
    return [(doc_id, text, language.detect(text)) for doc_id, text in batch]


def _estimate(conn: Any, counts: dict[str, int]) -> dict[str, int]:
    """`counts` with the notes not looked at yet replaced by a sample's languages, scaled.

    The sample's languages are kept while the index is unchanged (`index_memo`): identifying
    150 notes costs ~0.2 s, and the plugin asks for status every 5 s, so a daemon whose notes
    were never embedded spent 4% of a core telling the same notes' languages again."""
    pending = counts.pop("", 0)
    if not pending:
        return counts
    memo = index_memo(conn)
    seen = memo.get("sampled languages") if memo is not None else None
    if seen is None:
        seen = _sampled(conn, pending)
        if memo is not None:
            memo["sampled languages"] = seen
    for code, n in seen.items():
        counts[code] = counts.get(code, 0) + round(n)
    return counts


def _sampled(conn: Any, pending: int) -> dict[str, float]:
    """Languages of a sample of the `pending` notes not looked at yet, scaled to them all."""
    sample = docs.without_language(conn, SAMPLE, spread=True)
    seen: dict[str, float] = {}
    for _, text in sample:
        code = language.detect(text)
        seen[code] = seen.get(code, 0.0) + pending / len(sample)
    return seen


def report(conn: Any, embed_spec: str | None) -> LanguageReport:
    """Notes per language and, when the embedder leaves a meaningful share unserved, `advice`
    saying so with the command that fixes it (None otherwise). Notes whose language is not
    recorded yet (`pending`) are estimated from a sample when the answer depends on them."""
    counts = docs.language_counts(conn)
    pending = counts.get("", 0)
    serves = served(embed_spec)
    if serves is not None and serves != language.EVERY:
        counts = _estimate(conn, dict(counts))
    told = {c: n for c, n in counts.items() if c not in ("", language.UNDETERMINED)}
    total = sum(told.values())
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
    return LanguageReport(
        languages=dict(sorted(told.items(), key=lambda kv: (-kv[1], kv[0]))),
        undetermined=counts.get(language.UNDETERMINED, 0),
        pending=pending,
        unserved=missing,
        unserved_share=round(share, 3),
        advice=advice,
    )


def mostly_unserved(report: LanguageReport) -> bool:
    """Whether most notes whose language is known are in languages the embedder does not serve
    (what makes `init` choose the multilingual model)."""
    total = sum(report.languages.values())
    return report.unserved >= MIN_NOTES and report.unserved > MOSTLY * total


def chosen_for(report: LanguageReport, before: str, model: str) -> str:
    """What `init` says when it chose `model` (a built-in's spec) instead of `before` for a
    vault mostly in languages `before` does not serve (`report` was made for `before`)."""
    total = sum(report.languages.values())
    unserved = language.unserved(report.languages, served(before) or frozenset())
    top = sorted(unserved.items(), key=lambda kv: (-kv[1], kv[0]))[:LANGUAGES_SHOWN]
    names = ", ".join(language.NAMES.get(c, c) for c, _ in top)
    built_in = sources.BUILT_IN[model]
    return (
        f"{report.unserved} of {total} notes are in {names}: the embedding model is {model} "
        f"({built_in.name}, models.embed in the config file), which reads them; `engram embed` "
        f"prepares it ({built_in.download_mb} MB). For English-only notes, the default model is "
        "faster and better: `engram embed --model default`"
    )
