"""Full-text retrieval queries."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engram.store.db import index_memo
from engram.store.filters import Filters, where

SNIPPET_START = "\x02"
SNIPPET_END = "\x03"
# title (with aliases), headings, frontmatter values, body, cjk bigrams
DEFAULT_WEIGHTS = (5.0, 2.0, 1.0, 1.0, 1.0)
BODY_COLUMN = 3


@dataclass(frozen=True)
class FtsHit:
    """A document matched by the full-text index, best first."""

    id: int
    collection: str
    path: str
    title: str
    hash: str
    body_line: int
    bm25: float  # minus the BM25 score: lower (more negative) is better
    snippet: str  # body fragment with SNIPPET_START/END around matched tokens
    fact_type: str | None


_COLUMNS = (
    "d.id, d.collection, d.path, d.title, d.hash, d.body_line, "
    "json_extract(d.frontmatter, '$.factType')"
)


def bm25(
    conn: Any,
    phrases: list[tuple[str, float]],
    restrict: str | None,
    filters: Filters,
    limit: int | None,
    weights: tuple[float, ...] = DEFAULT_WEIGHTS,
    rowids: tuple[int, int] | None = None,
) -> list[FtsHit]:
    """Documents ranked by the sum over `phrases` of factor × FTS5's bm25() of that phrase
    alone (each an FTS5 expression); `restrict`, when given, is an expression a document must
    also match (required phrases, exclusions); `rowids`, the first and last document id to
    rank (scores are the same as over the whole index). No snippets yet.

    FTS5 ranks one phrase per sub-select so the caller can reweight each phrase's IDF; the sum,
    the ranking and the join to documents all stay inside SQLite.
    """
    where_sql, params = where(filters)
    marks = ", ".join("?" * len(weights))
    one = f"SELECT rowid AS id, ? * bm25(documents_fts, {marks}) AS score FROM documents_fts"
    span = " AND rowid BETWEEN ? AND ?" if rowids else ""
    args: list[Any] = [v for expr, f in phrases for v in (f, *weights, expr, *(rowids or ()))]
    # `+id`, not `id`: SQLite hands a bare `id IN (...)` to FTS5 as a rowid constraint, and
    # FTS5 then runs the whole MATCH once per listed rowid (a phrase query on the 5,000-note
    # load-test vault took 2.9 s instead of 8 ms)
    only = f" AND +id IN (SELECT rowid FROM documents_fts WHERE documents_fts MATCH ?{span})"
    if len(phrases) == 1:
        ranked = f"{one} WHERE documents_fts MATCH ?{span}" + (only if restrict is not None else "")
    else:
        # a sum over a compound select: SQLite cannot flatten it into the aggregate, which
        # would take bm25() out of its full-text query ("unable to use function bm25")
        union = " UNION ALL ".join(f"{one} WHERE documents_fts MATCH ?{span}" for _ in phrases)
        ranked = f"SELECT id, sum(score) AS score FROM ({union}) WHERE 1 = 1"
        ranked += (only if restrict is not None else "") + " GROUP BY id"
    if restrict is not None:
        args += [restrict, *(rowids or ())]
    cap = " LIMIT ?" if limit is not None else ""
    if where_sql:
        sql = (
            f"WITH ranked AS ({ranked}) SELECT {_COLUMNS}, ranked.score FROM ranked"
            f" JOIN documents d ON d.id = ranked.id WHERE 1 = 1{where_sql}"
            f" ORDER BY ranked.score, ranked.id{cap}"
        )
        args += params
    else:
        # rank the full-text rows alone, then join only the top ones to their documents
        sql = (
            f"WITH ranked AS ({ranked} ORDER BY score, id{cap})"
            f" SELECT {_COLUMNS}, ranked.score FROM ranked JOIN documents d ON d.id = ranked.id"
            " ORDER BY ranked.score, ranked.id"
        )
    if limit is not None:
        args.append(limit)
    return [
        FtsHit(r[0], r[1], r[2], r[3], r[4], r[5], float(r[7]), "", r[6])
        for r in conn.execute(sql, args)
    ]


def newest_matches(conn: Any, match: str, count: int) -> tuple[int, int]:
    """The first id of the newest `count` documents matching an FTS5 expression, and how many
    of them there are (fewer than `count`: every match); FTS5 walks its lists backwards and
    stops there. Kept while the index is as it was, as `term_document_counts`."""
    memo = index_memo(conn)
    key = f"newest:{count}:{match}"
    if memo is not None and key in memo:
        return memo[key]
    row = conn.execute(
        "SELECT coalesce(min(rowid), 0), count(*) FROM (SELECT rowid FROM documents_fts"
        " WHERE documents_fts MATCH ? ORDER BY rowid DESC LIMIT ?)",
        (match, count),
    ).fetchone()
    found = (int(row[0]), int(row[1]))
    if memo is not None and len(memo) < MEMO_MATCHES:
        memo[key] = found
    return found


def newest_documents_from(conn: Any, count: int) -> int:
    """The id from which the newest `count` documents start (0 with fewer)."""
    row = conn.execute(
        "SELECT id FROM documents ORDER BY id DESC LIMIT 1 OFFSET ?", (count - 1,)
    ).fetchone()
    return 0 if row is None else int(row[0])


def last_document_id(conn: Any) -> int:
    """The highest document id (0 with none)."""
    return int(conn.execute("SELECT coalesce(max(id), 0) FROM documents").fetchone()[0])


def snippets(
    conn: Any, match: str, doc_ids: list[int], tokens: int = 24, scan: bool = False
) -> dict[int, str]:
    """Body fragments around the matches for a few documents (marked with SNIPPET_START/END).

    Computed separately from ranking: SQLite would otherwise build a snippet for every
    matching row before sorting. FTS5 looks each document up by rowid and runs the match
    again for each; with `scan` it runs the match once and keeps the listed documents
    (quicker when setting up the match is the costly part).
    """
    if not doc_ids:
        return {}
    marks = ",".join("?" * len(doc_ids))
    rowid = "+rowid" if scan else "rowid"
    rows = conn.execute(
        f"SELECT rowid, snippet(documents_fts, {BODY_COLUMN}, ?, ?, '…', ?) FROM documents_fts"
        f" WHERE documents_fts MATCH ? AND {rowid} IN ({marks})",
        (SNIPPET_START, SNIPPET_END, tokens, match, *doc_ids),
    )
    return {int(r[0]): r[1] or "" for r in rows}


def filtered(conn: Any, filters: Filters, limit: int | None) -> list[FtsHit]:
    """Documents matching only filters (no search words), newest first."""
    where_sql, params = where(filters)
    sql = (
        f"SELECT {_COLUMNS} FROM documents d WHERE 1 = 1{where_sql}"
        " ORDER BY d.doc_date DESC, d.path"
    )
    if limit is not None:
        sql += " LIMIT ?"
        params.append(limit)
    return [
        FtsHit(r[0], r[1], r[2], r[3], r[4], r[5], 0.0, "", r[6]) for r in conn.execute(sql, params)
    ]


def content_text(conn: Any, content_hash: str) -> str | None:
    """The stored text of a document by content hash."""
    row = conn.execute("SELECT text FROM content WHERE hash = ?", (content_hash,)).fetchone()
    return None if row is None else str(row[0])


MEMO_MATCHES = 10_000  # expressions remembered per connection (then it starts afresh)


def term_document_counts(conn: Any, matches: list[str]) -> tuple[int, list[int]]:
    """The number of documents, and how many match each FTS5 expression (words' document
    frequencies).

    Counting reads a word's whole list (8 ms for a word in most of 100,000 notes), and the
    same words come back query after query, so the counts are kept while the index is as it
    was (store/db.py's `index_memo`).
    """
    memo = index_memo(conn)
    if memo is None:
        return _count(conn, matches)
    found = memo.get("frequencies")
    if found is None or len(found) > MEMO_MATCHES:
        total, counts = _count(conn, matches)
        memo["documents"], memo["frequencies"] = total, dict(zip(matches, counts, strict=True))
        return total, counts
    missing = [m for m in dict.fromkeys(matches) if m not in found]
    if missing:
        found.update(zip(missing, _count(conn, missing)[1], strict=True))
    return memo["documents"], [found[m] for m in matches]


def _count(conn: Any, matches: list[str]) -> tuple[int, list[int]]:
    """Documents in all and matching each expression, in one statement."""
    counts = "".join(
        ", (SELECT count(*) FROM documents_fts WHERE documents_fts MATCH ?)" for _ in matches
    )
    row = conn.execute(f"SELECT (SELECT count(*) FROM documents){counts}", matches).fetchone()
    return int(row[0]), [int(v) for v in row[1:]]


def vocabulary(conn: Any, first: str) -> list[tuple[str, int]]:
    """The indexed words (porter stems, every column) that start with `first`, each with the
    number of documents holding it, from an fts5vocab table over the full-text index; kept
    while the index is as it was (a daemon's queries read each range once)."""
    memo = index_memo(conn)
    key = f"vocabulary:{first}"
    if memo is not None and key in memo:
        return list(memo[key])
    conn.execute(
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.engram_vocab"
        " USING fts5vocab(main, documents_fts, row)"
    )
    upper = first[:-1] + chr(ord(first[-1]) + 1)
    rows = conn.execute(
        "SELECT term, doc FROM temp.engram_vocab WHERE term >= ? AND term < ?", (first, upper)
    )
    found = [(str(r[0]), int(r[1])) for r in rows]
    if memo is not None:
        memo[key] = tuple(found)
    return found


def written_forms(conn: Any, term: str, sample: int = 20) -> set[str]:
    """How notes write an indexed word (a stem such as `palett`): the words FTS5 marks in the
    title, headings and body of the first few documents holding it, lower-cased."""
    marks = ", ".join(f"snippet(documents_fts, {c}, ?, ?, '', 16)" for c in (0, 1, BODY_COLUMN))
    rows = conn.execute(
        f"SELECT {marks} FROM documents_fts WHERE documents_fts MATCH ? LIMIT ?",
        (*(SNIPPET_START, SNIPPET_END) * 3, '"' + term.replace('"', '""') + '"', sample),
    )
    words = set()
    for row in rows:
        for text in row:
            for piece in (text or "").split(SNIPPET_START)[1:]:
                marked = piece.split(SNIPPET_END, 1)[0].strip().lower()
                if marked:
                    words.add(marked)
    return words


def count_matching(conn: Any, match: str) -> int:
    """How many documents match an FTS5 expression."""
    row = conn.execute(
        "SELECT count(*) FROM documents_fts WHERE documents_fts MATCH ?", (match,)
    ).fetchone()
    return int(row[0])
