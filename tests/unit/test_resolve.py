"""Obsidian link resolution: one fixture per rule in docs/links.md."""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from engram.vault.parse import parse_note
from engram.vault.resolve import (
    LinkIndex,
    NoteInfo,
    candidates,
    link_key,
    normalize_heading,
    resolve,
)
from engram.vault.scan import scan


def vault_index(files: dict[str, str]) -> LinkIndex:
    """Index of an in-memory vault: notes are parsed, other files are attachments."""
    notes = [
        (p, NoteInfo.from_parsed(parse_note(t, p))) for p, t in files.items() if p.endswith(".md")
    ]
    return LinkIndex.build(files, notes)


def where(target: str, source: str, index: LinkIndex, **kw: object) -> str | None:
    return resolve(target, source, index, **kw).path  # type: ignore[arg-type]


# --- names, case, extension -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        ("Log", "notes/Log.md"),
        ("log", "notes/Log.md"),
        ("LOG", "notes/Log.md"),
        ("Log.md", "notes/Log.md"),
        ("Log.MD", "notes/Log.md"),
        ("notes/Log", "notes/Log.md"),
        ("NOTES/log.md", "notes/Log.md"),
        ("/notes/Log", "notes/Log.md"),
        ("v1.2", "v1.2.md"),
        ("Missing", None),
        ("notes", None),  # a folder is not a file
    ],
)
def test_name_anywhere_case_insensitive_md_optional(target: str, expected: str | None) -> None:
    index = LinkIndex.build(["notes/Log.md", "v1.2.md", "daily/2024-01-01.md"])
    assert where(target, "daily/2024-01-01.md", index) == expected


def test_unresolved_has_no_subpath_answers() -> None:
    index = LinkIndex.build(["a.md"])
    assert resolve("b", "a.md", index, heading="H") == resolve("b", "a.md", index)
    assert resolve("b", "a.md", index).rule == "unresolved"


# --- the tie-break, replaying the fixture observed on Obsidian 1.13.7 -----------------------------

TIE = ["Note.md", "zzzz/Note.md", "a/b/Note.md", "src-root.md", "zzzz/src.md", "a/b/src.md"]


@pytest.mark.parametrize("source", ["src-root.md", "zzzz/src.md", "a/b/src.md"])
def test_exact_vault_path_wins_from_every_folder(source: str) -> None:
    result = resolve("Note", source, LinkIndex.build(TIE))
    assert (result.path, result.rule, result.alternatives) == ("Note.md", "exact", 2)


@pytest.mark.parametrize(
    ("source", "expected", "rule"),
    [
        ("zzzz/src.md", "zzzz/Note.md", "same-folder"),  # over the shorter a/b/Note.md
        ("a/b/src.md", "a/b/Note.md", "same-folder"),
        ("src-root.md", "a/b/Note.md", "shortest"),  # 11 chars beat 12: not fewest folders
    ],
)
def test_own_folder_then_shortest_path_string(source: str, expected: str, rule: str) -> None:
    index = LinkIndex.build(TIE)
    index.remove("Note.md")
    result = resolve("Note", source, index)
    assert (result.path, result.rule) == (expected, rule)


def test_ancestor_folder_counts_for_nothing_and_tree_order_neither() -> None:
    index = LinkIndex.build([*TIE[1:], "b/Note.md", "aaaaaaaa/Note.md", "zzzz/deep/src.md"])
    assert where("Note", "zzzz/deep/src.md", index) == "b/Note.md"
    assert where("Note", "src-root.md", index) == "b/Note.md"


def test_equal_length_tie_is_lexicographic() -> None:
    index = LinkIndex.build(["bb/Tie.md", "aa/Tie.md", "zz/Tie.md", "src.md"])
    assert where("Tie", "src.md", index) == "aa/Tie.md"


def test_exact_path_beats_own_folder_suffix_match() -> None:
    index = LinkIndex.build(["a/b/Note.md", "b/Note.md", "a/b/src.md"])
    assert resolve("b/Note", "a/b/src.md", index).path == "b/Note.md"


def test_partial_path_suffix_matches_when_no_exact_path() -> None:
    index = LinkIndex.build(["a/b/Note.md", "src.md", "xb/Note.md"])
    result = resolve("b/Note", "src.md", index)
    assert (result.path, result.rule) == ("a/b/Note.md", "unique")  # not xb/: whole folders only


# --- relative paths -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("target", "source", "expected"),
    [
        ("../y", "a/x.md", "y.md"),
        ("./sib", "a/x.md", "a/sib.md"),
        ("../a/sib.md", "a/x.md", "a/sib.md"),
        ("../../y", "a/x.md", None),  # leaves the vault
        ("./y", "a/x.md", None),  # explicit relative: no vault-wide fallback
    ],
)
def test_relative_wikilinks(target: str, source: str, expected: str | None) -> None:
    index = LinkIndex.build(["y.md", "a/x.md", "a/sib.md"])
    assert where(target, source, index) == expected


def test_markdown_links_relative_first_then_vault_wide() -> None:
    files = {
        "a/src.md": (
            "[rel](b.md) [enc](Some%20Note.md) [up](../b.md) [abs](/b.md) [bare](Some%20Note)"
        ),
        "a/b.md": "",
        "b.md": "",
        "Sub/Some Note.md": "",
    }
    index = vault_index(files)
    links = parse_note(files["a/src.md"], "a/src.md").links
    got = {
        link.display: resolve(link.target, "a/src.md", index, markdown=True).path for link in links
    }
    assert got == {
        "rel": "a/b.md",  # beside the source, although b.md exists at the root
        "enc": "Sub/Some Note.md",  # decoded by the parser, found vault-wide like a wikilink
        "up": "b.md",
        "abs": "b.md",
        "bare": "Sub/Some Note.md",
    }
    assert resolve("b", "a/src.md", index).path == "b.md"  # the same text as a wikilink


# --- aliases --------------------------------------------------------------------------------------


def test_aliases_do_not_resolve_by_default_like_obsidian() -> None:
    index = vault_index({"Artificial Intelligence.md": "---\naliases: [AI]\n---\n", "s.md": ""})
    assert resolve("AI", "s.md", index).rule == "unresolved"
    result = resolve("ai", "s.md", index, aliases=True)
    assert (result.path, result.rule) == ("Artificial Intelligence.md", "alias")


def test_a_file_name_beats_an_alias() -> None:
    index = vault_index(
        {"Artificial Intelligence.md": "---\naliases: [AI]\n---\n", "x/AI.md": "", "s.md": ""}
    )
    assert resolve("AI", "s.md", index, aliases=True).path == "x/AI.md"


def test_shared_alias_prefers_own_folder_then_shortest() -> None:
    index = vault_index(
        {"p/Long Name.md": "---\naliases: [LN]\n---\n", "q/L.md": "---\naliases: LN\n---\n"}
    )
    assert resolve("LN", "p/s.md", index, aliases=True).path == "p/Long Name.md"
    result = resolve("LN", "s.md", index, aliases=True)
    assert (result.path, result.alternatives) == ("q/L.md", 1)


# --- attachments ----------------------------------------------------------------------------------


def test_attachments_resolve_by_full_file_name(tmp_path: Path) -> None:
    for rel in ["assets/Figure 1.png", "docs/Manual.pdf", "Board.canvas", "Note.md"]:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes(b"x")
    (tmp_path / ".obsidian").mkdir()
    (tmp_path / ".obsidian" / "app.json").write_text("{}")
    index = LinkIndex.build(f.rel for f in scan(tmp_path, "**/*"))
    assert len(index) == 4  # the scanner hides .obsidian/
    assert where("Figure 1.png", "Note.md", index) == "assets/Figure 1.png"
    assert where("figure 1.PNG", "Note.md", index) == "assets/Figure 1.png"
    assert where("Figure 1", "Note.md", index) is None  # only .md may be left out
    assert where("Board.canvas", "Note.md", index) == "Board.canvas"
    pdf = resolve("Manual.pdf", "Note.md", index, heading="page=3")
    assert (pdf.path, pdf.heading_found) == ("docs/Manual.pdf", None)  # not a note: unchecked


# --- headings and blocks --------------------------------------------------------------------------

NOTE = """---
aliases: [Guide]
---
# Top
Intro ^intro-1

## Sub: one [x]
text
### Deep | pipe ^ caret
## C# tips
## Café  Crème
# Other
## Sub: one [x]
- item ^LIST-ID
"""


@pytest.mark.parametrize(
    ("heading", "found"),
    [
        ("Top", True),
        ("top", True),  # case-insensitive
        ("Sub one x", True),  # what Obsidian's suggester writes for `Sub: one [x]`
        ("Sub: one [x]", True),
        ("sub:one x", True),  # punctuation becomes a space on both sides
        ("subone x", False),
        ("Deep pipe caret", True),
        ("C tips", True),
        ("Café Crème", True),
        ("Top#Sub one x", True),  # nested chain
        ("Top#Sub one x#Deep pipe caret", True),
        ("Other#Sub one x", True),
        ("Sub one x#Top", False),  # chain must go forward
        ("Other#Deep pipe caret", False),
        ("Nope", False),
    ],
)
def test_heading_validation(heading: str, found: bool) -> None:
    index = vault_index({"Guide.md": NOTE, "s.md": ""})
    result = resolve("Guide", "s.md", index, heading=heading)
    assert (result.path, result.heading_found) == ("Guide.md", found)


@pytest.mark.parametrize(
    ("link", "heading", "block"),
    [
        ("[[Guide#^intro-1]]", None, True),
        ("[[Guide#^list-id]]", None, True),  # block ids compare case-insensitively
        ("[[Guide#^nope]]", None, False),
        ("[[Guide#Top#^intro-1]]", None, True),
        ("[[Guide#Top]]", True, None),
    ],
)
def test_block_validation_through_the_parser(
    link: str, heading: bool | None, block: bool | None
) -> None:
    index = vault_index({"Guide.md": NOTE, "s.md": link})
    (parsed,) = parse_note(link, "s.md").links
    result = resolve(parsed.target, "s.md", index, heading=parsed.heading, block=parsed.block)
    assert (result.path, result.heading_found, result.block_found) == ("Guide.md", heading, block)


def test_self_links_check_the_source_note() -> None:
    text = "# Local Part\nsee [[#Local Part]] and [[#Missing]] and [[#^b1]]\npara ^b1\n"
    index = vault_index({"me.md": text})
    got = [
        resolve(link.target, "me.md", index, heading=link.heading, block=link.block)
        for link in parse_note(text, "me.md").links
    ]
    assert [(r.path, r.rule, r.heading_found, r.block_found) for r in got] == [
        ("me.md", "self", True, None),
        ("me.md", "self", False, None),
        ("me.md", "self", None, True),
    ]


@pytest.mark.parametrize(
    ("raw", "normal"),
    [
        ("Sub: one [x]", "sub one x"),
        ("  A   b\tC ", "a b c"),
        ("it's-a_b", "it's-a_b"),
        ("a.b/c", "a b c"),
    ],
)
def test_normalize_heading(raw: str, normal: str) -> None:
    assert normalize_heading(raw) == normal


# --- the parser's part: tables, code, encoded markdown links --------------------------------------


def test_whole_vault_through_the_parser() -> None:
    files = {
        "Home.md": (
            "| a | b |\n|---|---|\n| [[Projects/Plan\\|the plan]] | [[Plan#Goals\\|goals]] |\n\n"
            "```\n[[Ghost In Code]]\n```\n`[[Ghost Inline]]` and [[Gone]]\n"
            "[doc](Projects/Plan.md#Goals) ![img](assets/a%20b.png)\n"
        ),
        "Projects/Plan.md": "# Goals\n",
        "assets/a b.png": "",
    }
    index = vault_index(files)
    got = [
        (
            link.target,
            resolve(
                link.target,
                "Home.md",
                index,
                heading=link.heading,
                markdown=link.kind == "markdown",
            ).path,
        )
        for link in parse_note(files["Home.md"], "Home.md").links
    ]
    assert got == [
        ("Projects/Plan", "Projects/Plan.md"),
        ("Plan", "Projects/Plan.md"),
        ("Gone", None),  # kept by the caller as a stub
        ("Projects/Plan.md", "Projects/Plan.md"),
        ("assets/a b.png", "assets/a b.png"),
    ]


# --- unicode --------------------------------------------------------------------------------------


def test_unicode_names_nfc_nfd_and_case() -> None:
    nfd = unicodedata.normalize("NFD", "Café.md")
    index = LinkIndex.build([nfd, "城市/北京.md", "école.md", "s.md"])
    assert where("Café", "s.md", index) == nfd  # typed NFC, stored NFD: same name
    assert where("北京", "s.md", index) == "城市/北京.md"
    assert where("ÉCOLE", "s.md", index) == "école.md"


# --- incremental updates --------------------------------------------------------------------------


def test_new_file_reports_the_keys_of_links_it_may_satisfy() -> None:
    index = LinkIndex.build(["s.md"])
    dangling = ["Idea", "ideas/Idea.md", "Other"]
    assert [where(t, "s.md", index) for t in dangling] == [None, None, None]
    keys = index.add("ideas/Idea.md", NoteInfo(aliases=("Spark",)))
    assert keys == {"idea", "spark"}
    stale = [t for t in dangling if link_key(t) in keys]
    assert [where(t, "s.md", index) for t in stale] == ["ideas/Idea.md", "ideas/Idea.md"]
    assert index.paths_for_key("idea") == ("ideas/Idea.md",)


def test_remove_and_rename_keep_the_index_consistent() -> None:
    index = LinkIndex.build(
        ["a/Note.md", "b/Note.md", "s.md"], [("a/Note.md", NoteInfo(aliases=("N",)))]
    )
    assert index.remove("a/Note.md") == {"note", "n"}
    assert where("Note", "s.md", index) == "b/Note.md"
    assert where("N", "s.md", index, aliases=True) is None
    assert index.rename("b/Note.md", "c/Renamed.md") == {"note", "renamed"}
    assert where("Note", "s.md", index) is None
    assert where("Renamed", "s.md", index) == "c/Renamed.md"
    assert index.remove("never/there.md") == frozenset()
    index.add("c/Renamed.md", NoteInfo(headings=((1, "New"),)))  # update in place
    assert len(index) == 2
    assert resolve("Renamed", "s.md", index, heading="new").heading_found is True


def test_rename_keeps_note_metadata() -> None:
    index = LinkIndex.build([], [("x.md", NoteInfo(blocks=("b1",)))])
    index.rename("x.md", "y/x2.md")
    assert resolve("x2", "s.md", index, block="b1").block_found is True


# --- candidates for human input -------------------------------------------------------------------


def test_candidates_accept_paths_titles_aliases_and_typos() -> None:
    index = vault_index(
        {
            "People/Ada Lovelace.md": "---\naliases: [Countess]\n---\n",
            "Projects/Analytical Engine.md": "# The Engine\n",
            "Projects/Engine Notes.md": "",
            "Inbox.md": "",
        }
    )
    assert candidates("People/Ada Lovelace.md", index)[0].path == "People/Ada Lovelace.md"
    top = candidates("countess", index)[0]
    assert (top.path, top.via, top.score) == ("People/Ada Lovelace.md", "alias", 1.0)
    assert candidates("The Engine", index)[0].path == "Projects/Analytical Engine.md"
    engines = [c.path for c in candidates("engine", index)]
    assert set(engines[:2]) == {"Projects/Engine Notes.md", "Projects/Analytical Engine.md"}
    typo = candidates("Ada Lovelce", index)
    assert typo[0].path == "People/Ada Lovelace.md" and typo[0].score < 1.0
    assert candidates("zzzz qqqq", index) == []
    assert candidates("  ", index) == []
    assert len(candidates("e", index, limit=2)) == 2


# --- properties -----------------------------------------------------------------------------------

_PART = st.text(
    alphabet=st.characters(
        blacklist_characters="/#|^[]\\\n\r\t", blacklist_categories=("Cs", "Cc")
    ),
    min_size=1,
    max_size=8,
).filter(lambda s: s.strip() == s and not s.startswith("."))  # dot-files are not in a vault
_PATH = st.lists(_PART, min_size=1, max_size=3).map(lambda parts: "/".join(parts) + ".md")


@given(
    st.lists(
        _PATH, min_size=1, max_size=12, unique_by=lambda p: unicodedata.normalize("NFC", p).lower()
    )
)
@example(paths=["0.MD.md"])  # a name that itself ends in `.md`, linked as `[[0.MD]]`
@example(paths=["0.md", "0.MD.md"])
def test_every_file_resolves_from_its_full_path_and_its_name(paths: list[str]) -> None:
    index = LinkIndex.build(paths)
    written = {p.lower(): p for p in paths}
    for path in paths:
        assert resolve(path, "", index).path == path
        # without `.md`, unless that is another file's whole path, which a target names first
        assert resolve(path[:-3], "", index).path == written.get(path[:-3].lower(), path)
        by_name = resolve(path.rsplit("/", 1)[-1][:-3], "", index).path
        assert by_name is not None and link_key(by_name) == link_key(path)
