"""Tags as Obsidian has them: case ignored, a nested tag inside its parents, a list like the tag
pane's. The SQL match and the count are checked against a plain definition over random tags."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engram.codec import decode, encode
from engram.service.tags import MAX_LEVELS, TagCount, TagList, count_tags, spellings
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


# --- the tag pane ----------------------------------------------------------------------------


def test_the_pane_folds_case_nests_tags_and_counts_each_note_once() -> None:
    notes = [
        ["Project", "project/alpha", "TODO"],
        ["Project/Alpha/deep", "projects", "todo"],
        ["todo", "project/beta", "project/alpha"],
    ]
    got = count_tags(rows_of(notes))
    assert got == TagList(
        (
            TagCount("Project", 3),
            TagCount("Project/alpha", 3),  # `alpha` in two notes, `Alpha` in one
            TagCount("Project/alpha/deep", 1),
            TagCount("Project/beta", 1),
            TagCount("projects", 1),
            TagCount("todo", 3),
        ),
        3,
    )
    by_count = count_tags(rows_of(notes), sort="count")
    assert [t.name for t in by_count.tags] == [
        "Project",
        "Project/alpha",
        "Project/alpha/deep",
        "Project/beta",
        "todo",
        "projects",
    ]


def test_no_tags_and_empty_tags() -> None:
    assert count_tags([]) == TagList((), 0)
    assert count_tags(rows_of([["/"], []])) == TagList((), 0)


def test_a_very_deep_tag_is_listed_under_its_first_levels() -> None:
    deep = "/".join(f"L{i}" for i in range(MAX_LEVELS + 50))
    got = count_tags(rows_of([[deep], [deep.lower()]]))
    assert len(got.tags) == MAX_LEVELS
    assert [t.name for t in got.tags[:2]] == ["L0", "L0/L1"]
    assert got.tags[-1] == TagCount(deep, 2)  # the tag itself, with all its levels


@given(st.lists(st.lists(TAGS, max_size=4), max_size=6), st.sampled_from(["name", "count"]))
def test_the_pane_counts_what_a_tag_filter_finds_and_nests_each_tag_under_its_parent(
    notes: list[list[str]], sort: str
) -> None:
    got = count_tags(rows_of(notes), sort)
    names = [t.name for t in got.tags]
    keys = [tag_key(n) for n in names]
    every_level = {
        "/".join(tag_key(tag).split("/")[: i + 1])
        for tags in notes
        for tag in tags
        for i in range(tag_key(tag).count("/") + 1)
    }
    assert sorted(keys) == sorted(every_level)  # each tag and parent once, case folded
    for position, t in enumerate(got.tags):
        carriers = [tags for tags in notes if any(same_or_under(x, t.name) for x in tags)]
        assert t.count == len(carriers), t
        parent = t.name.rpartition("/")[0]
        if parent:  # right after its parent, or after an earlier sibling's subtree
            assert parent in names[:position]
            between = names[names.index(parent) + 1 : position]
            assert all(n.startswith(parent + "/") for n in between)
    assert got.notes == sum(1 for tags in notes if tags)
    assert decode(TagList, encode(got)) == got
