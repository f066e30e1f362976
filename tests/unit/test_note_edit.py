"""Pure note text edits (vault/edit.py) and names for new files (vault/names.py)."""

from __future__ import annotations

import pytest

from engram.errors import InvalidInputError, NotFoundError
from engram.vault import edit, names

NOTE = (
    "---\ntags: [a]\n---\n# Title\n\nIntro.\n\n## One\n\nfirst\n\n### Sub\n\nsub text\n\n"
    "## Two\n\nsecond\n"
)


@pytest.mark.parametrize(
    ("text", "content", "expected"),
    [
        ("", "hello", "hello\n"),
        ("a\n", "b", "a\nb\n"),
        ("a", "b", "a\nb\n"),
        ("a\r\nb\r\n", "c\nd", "a\r\nb\r\nc\r\nd\r\n"),
        ("a\n", "b\n\n\n", "a\nb\n"),
    ],
)
def test_append(text: str, content: str, expected: str) -> None:
    assert edit.append(text, content) == expected


@pytest.mark.parametrize(
    ("text", "content", "expected"),
    [
        ("", "top", "top\n"),
        ("body\n", "top", "top\nbody\n"),
        ("---\na: 1\n---\nbody\n", "top", "---\na: 1\n---\ntop\nbody\n"),
        ("---\r\na: 1\r\n---\r\nbody\r\n", "x", "---\r\na: 1\r\n---\r\nx\r\nbody\r\n"),
        ("---\nbroken\n", "top", "top\n---\nbroken\n"),  # no closing fence: no frontmatter
    ],
)
def test_prepend_goes_under_the_frontmatter(text: str, content: str, expected: str) -> None:
    assert edit.prepend(text, content) == expected


@pytest.mark.parametrize(
    ("heading", "content", "expected_part"),
    [
        ("One", "new", "## One\nnew\n\n## Two"),
        ("## One", "new", "## One\nnew\n\n## Two"),
        ("one", "", "## One\n\n## Two"),
        ("Sub", "changed", "### Sub\nchanged\n\n## Two"),
        ("One#Sub", "changed", "### Sub\nchanged\n\n## Two"),
        ("Two", "last", "## Two\nlast\n"),
    ],
)
def test_replace_section(heading: str, content: str, expected_part: str) -> None:
    out = edit.replace_section(NOTE, heading, content)
    assert expected_part in out
    assert out.startswith("---\ntags: [a]\n---\n# Title\n\nIntro.\n")


def test_replace_section_ignores_headings_in_code_and_keeps_setext_underlines() -> None:
    text = "Top\n===\n\nold\n\n```\n# not a heading\n```\n\nNext\n===\n\nkeep\n"
    assert edit.replace_section(text, "Top", "new") == "Top\n===\nnew\n\nNext\n===\n\nkeep\n"


@pytest.mark.parametrize(
    ("heading", "error"),
    [("Three", NotFoundError), ("", InvalidInputError), ("Missing#Sub", NotFoundError)],
)
def test_replace_section_errors(heading: str, error: type[Exception]) -> None:
    with pytest.raises(error):
        edit.replace_section(NOTE, heading, "x")


def test_an_ambiguous_heading_is_refused_with_how_to_disambiguate() -> None:
    text = "## A\n\n### Notes\n\nx\n\n## B\n\n### Notes\n\ny\n"
    with pytest.raises(InvalidInputError, match="appears 2 times"):
        edit.replace_section(text, "Notes", "z")
    assert edit.replace_section(text, "B#Notes", "z").endswith("### Notes\nz\n")


@pytest.mark.parametrize(
    ("text", "heading", "expected"),
    [
        (
            "# T\n\n## Related\n\n- [[A]]\n\n## Next\n",
            "Related",
            "## Related\n\n- [[A]]\n- x\n\n## Next\n",
        ),
        ("# T\n\nbody\n", "Related", "# T\n\nbody\n\n## Related\n- x\n"),
        ("# T\n\nbody", "Related", "# T\n\nbody\n\n## Related\n- x\n"),
        ("", "Related", "## Related\n- x\n"),
        ("# T\n\nbody\n\n", "### See also", "# T\n\nbody\n\n### See also\n- x\n"),
    ],
)
def test_append_to_section_creates_it_when_missing(text: str, heading: str, expected: str) -> None:
    assert edit.append_to_section(text, heading, "- x").endswith(expected)


def test_prepend_to_section() -> None:
    assert "## One\nfirst line\n\nfirst\n" in edit.prepend_to_section(NOTE, "One", "first line")


@pytest.mark.parametrize(
    ("find", "replacement", "use_regex", "count", "expected", "n"),
    [
        ("a", "b", False, 0, "bbc bbc", 2),
        ("ab", "X", False, 1, "Xc abc", 1),
        ("zz", "X", False, 0, "abc abc", 0),
        (r"(\w)bc", r"\1!", True, 0, "a! a!", 2),
        (r"^abc", "X", True, 0, "X abc", 1),
        (r"(?P<x>b)", r"[\g<x>]", True, 1, "a[b]c abc", 1),
    ],
)
def test_find_replace_counts(
    find: str, replacement: str, use_regex: bool, count: int, expected: str, n: int
) -> None:
    assert edit.find_replace("abc abc", find, replacement, use_regex, count) == (expected, n)


@pytest.mark.parametrize(("find", "repl"), [("(", "x"), ("", "x"), ("(a)", r"\2")])
def test_find_replace_bad_patterns_are_input_errors(find: str, repl: str) -> None:
    with pytest.raises(InvalidInputError):
        edit.find_replace("abc", find, repl, use_regex=True)


def test_a_catastrophic_regex_times_out_instead_of_hanging(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(edit, "REGEX_TIMEOUT", 0.2)
    with pytest.raises(InvalidInputError, match="took over"):
        edit.find_replace("a" * 40 + "!", r"(a|aa)+$", "x", use_regex=True)


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("Notes/Idea", "Notes/Idea"),
        ("Notes/Idea.md/", "Notes/Idea.md"),
        ("Notes\\Idea", "Notes/Idea"),
        ("Café.md", "Café.md"),
    ],
)
def test_check_path_accepts(path: str, expected: str) -> None:
    assert names.check_path(path) == expected


@pytest.mark.parametrize(
    "path",
    ["", "../x", "a/../b", "a//b", ".obsidian/x.md", ".trash/x.md", "a/.hidden", "x#y", "a[b]",
     "a|b", "x^y", "what?", "a:b", "/etc/x", "C:/x", "a/ lead", "tab\there", "n" * 300],
)  # fmt: skip
def test_check_path_refuses(path: str) -> None:
    with pytest.raises(InvalidInputError):
        names.check_path(path)


def test_check_path_keeps_an_existing_odd_name() -> None:
    assert names.check_path("Archive/What?.md", keep_name="What?.md") == "Archive/What?.md"


@pytest.mark.parametrize(
    ("title", "expected"),
    [
        ("Meeting: 2024/05", "Meeting 2024 05.md"),
        ("  [[x]] #tag ", "x tag.md"),
        ("Ünïcode", "Ünïcode.md"),
    ],
)
def test_from_title(title: str, expected: str) -> None:
    assert names.from_title(title) == expected


def test_from_title_refuses_nothing_left() -> None:
    with pytest.raises(InvalidInputError):
        names.from_title("???")


def test_trash_path_numbers_taken_names() -> None:
    taken = {".trash/A/Note.md", ".trash/A/Note 2.md"}
    assert names.trash_path("B/Note.md", taken.__contains__) == ".trash/B/Note.md"
    assert names.trash_path("A/Note.md", taken.__contains__) == ".trash/A/Note 3.md"


@pytest.mark.parametrize("use_regex", [False, True])
def test_find_replace_refuses_a_result_over_the_limit_without_building_it(use_regex: bool) -> None:
    """100,000 x replaced by 100,000 y each is 10 GB: refused using a few MB at most."""
    import tracemalloc

    text = "x" * 100_000
    tracemalloc.start()
    try:
        with pytest.raises(InvalidInputError, match="max_file_bytes"):
            edit.find_replace(text, "x", "y" * 100_000, use_regex, limit=1_000_000)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8_000_000
    new, n = edit.find_replace(text, "x", "yy", use_regex, limit=200_000)  # right at the limit
    assert n == 100_000 and len(new) == 200_000
