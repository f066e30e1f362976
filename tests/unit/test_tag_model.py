"""Tags as Obsidian has them: case ignored, a nested tag inside its parents, shown in the
spelling most used. The SQL match is checked against a plain definition over random tags."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engram.service.tags import spellings
from engram.store import migrations
from engram.store.db import sqlite_module
from engram.store.filters import Filters, where
from engram.store.tags import tag_key

# letters whose case changes (one that lowercases to two characters), digits and marks
# Obsidian allows in a tag; '0' is the character right after '/', the edge of the SQL range
LEVELS = st.text(st.sampled_from("aAbBéÉßİ0_-"), min_size=1, max_size=3)
TAGS = st.lists(LEVELS, min_size=1, max_size=4).map("/".join)


def same_or_under(tag: str, query: str) -> bool:
    """What `tag:QUERY` means in Obsidian: the tag itself or one nested in it, case ignored."""
    t, q = tag.lower(), query.lower()
    return t == q or t.startswith(q + "/")


@pytest.mark.parametrize(
    ("tag", "key"),
    [
        ("project", "project"),
        ("#Project", "project"),
        ("PROJECT/Alpha", "project/alpha"),
        ("project/alpha/", "project/alpha"),
        ("project//alpha", "project/alpha"),
        ("/project", "project"),
        ("Straße", "straße"),  # lowercased as JavaScript does, not folded to "strasse"
        ("ÉTÉ", "été"),
        ("日本/東京", "日本/東京"),
        ("#", ""),
        ("/", ""),
    ],
)
def test_tag_key(tag: str, key: str) -> None:
    assert tag_key(tag) == key


def index_of(tags: list[str]) -> Any:
    """An in-memory index with one note per tag (note i carries tags[i])."""
    conn = sqlite_module().connect(":memory:", isolation_level=None)
    for migrate in migrations.MIGRATIONS:
        migrate(conn)
    for i, tag in enumerate(tags, 1):
        conn.execute(
            "INSERT INTO documents (id, collection, path, title, hash, mtime_ns, size, indexed_at)"
            " VALUES (?, 'v', ?, '', '', 0, 0, '')",
            (i, f"{i}.md"),
        )
        conn.execute(
            "INSERT INTO tags (doc_id, tag, key, line) VALUES (?, ?, ?, 1)", (i, tag, tag_key(tag))
        )
    return conn


def found(conn: Any, typed: str) -> list[int]:
    """The notes `tag:TYPED` keeps."""
    sql, params = where(Filters(tags=(typed,)))
    return [r[0] for r in conn.execute("SELECT d.id FROM documents d WHERE 1" + sql, params)]


@given(
    tags=st.lists(TAGS, min_size=1, max_size=8),
    picks=st.lists(st.tuples(st.integers(0, 7), st.integers(1, 4), st.booleans()), max_size=4),
    others=st.lists(TAGS, max_size=2),
)
def test_a_tag_filter_finds_the_tag_in_any_case_and_its_nested_tags_only(
    tags: list[str], picks: list[tuple[int, int, bool]], others: list[str]
) -> None:
    conn = index_of(tags)
    # mostly queries made from the tags themselves: a parent level, in another case
    made = ["/".join(tags[i % len(tags)].split("/")[:depth]) for i, depth, _ in picks]
    made = [q.swapcase() if swap else q for q, (_, _, swap) in zip(made, picks, strict=True)]
    for query in made + others:
        expected = {i for i, tag in enumerate(tags, 1) if same_or_under(tag, query)}
        for typed in (query, "#" + query, query + "/"):
            assert set(found(conn, typed)) == expected, (typed, tags)


def test_a_parent_never_matches_a_longer_name() -> None:
    conn = index_of(["project", "projects", "project/alpha", "project-x", "Project0", "PROJECT"])
    assert found(conn, "Project") == [1, 3, 6]


# --- how a tag is shown ------------------------------------------------------------------------


def rows_of(notes: list[list[str]]) -> list[tuple[int, str, str, int]]:
    """store.tags.note_tags rows for notes given in path order, each a list of its tags."""
    return [
        (doc_id, tag_key(tag), tag, line)
        for doc_id, tags in enumerate(notes, 1)
        for line, tag in enumerate(dict.fromkeys(tags), 1)
    ]


def test_the_most_used_spelling_names_a_tag() -> None:
    notes = [["tag"], ["Tag"], ["Tag"], ["TAG/sub"]]
    assert spellings(rows_of(notes)) == {"tag": "Tag", "tag/sub": "Tag/sub"}
