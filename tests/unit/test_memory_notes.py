"""Daily notes, the ledger, and note writes that never lose anybody's words."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from engram.errors import ConflictError, InvalidInputError
from engram.memory import daily, ledger
from engram.memory.notes import NoteConflict, Notes, is_conflict_copy
from engram.vault.fsio import UnsafePathError

DAY = dt.date(2026, 3, 5)
AT = dt.datetime(2026, 3, 5, 9, 30, tzinfo=dt.UTC)


def entry(n: int, kind: str = "decision", importance: float = 0.85) -> daily.DailyEntry:
    return daily.DailyEntry(
        id=f"{n:032x}",
        title=f"Fact [{n}] | piped",
        fact_type=kind,
        importance=importance,
        tier="structural" if importance >= 0.8 else "potential",
        created_by="agent",
        timestamp=AT + dt.timedelta(minutes=n),
        link_target=f"Engram/decisions/fact-{n}",
    )


def test_daily_note_format() -> None:
    text = daily.merge(None, [entry(1), entry(2, "session_summary", 0.6)], DAY)
    assert text.startswith("---\ndate: 2026-03-05\nfactsCount: 2\nfactTypes:\n")
    assert "# 2026-03-05\n" in text
    assert "**2 facts**: 1 decision, 1 session summary" in text
    assert "## Decision (1)\n- 09:31 [[Engram/decisions/fact-1|Fact (1) / piped]]" in text
    assert "— importance 0.85 (structural), by agent" in text
    assert "## Session Summary (1)" in text
    assert daily.daily_path("Engram", DAY) == "Engram/daily/2026-03-05.md"


def test_daily_regeneration_is_idempotent_and_keeps_human_text() -> None:
    first = daily.merge(None, [entry(1)], DAY)
    human = (
        first.replace("---\n# 2026", "---\nmood: good\n# 2026").replace(
            "# 2026-03-05\n", "# 2026-03-05\n\nMy own notes, *kept*.\n"
        )
        + "\nAnd a closing thought.\n"
    )
    again = daily.merge(human, [entry(1)], DAY)
    assert again == human  # same facts: same bytes, nothing to write
    more = daily.merge(human, [entry(1), entry(2)], DAY)
    assert "My own notes, *kept*.\n" in more and more.endswith("\nAnd a closing thought.\n")
    assert "mood: good\n" in more and "factsCount: 2\n" in more
    before, after = human.split(daily.START)[0], human.split(daily.END)[1]
    assert more.split(daily.START)[0] == before.replace("factsCount: 1", "factsCount: 2")
    assert more.split(daily.END)[1] == after
    assert daily.merge(more, [entry(1), entry(2)], DAY) == more


def test_daily_note_written_by_a_person_gets_the_section_appended() -> None:
    mine = "# March 5\n\nSlept badly.\n"
    out = daily.merge(mine, [entry(1)], DAY)
    assert out.startswith("---\ndate: 2026-03-05\n")
    assert out.split("---\n", 2)[2].startswith(mine)
    assert out.rstrip().endswith(daily.END)
    with pytest.raises(InvalidInputError, match="markers"):
        daily.merge(mine + daily.START + "\n", [entry(1)], DAY)


@pytest.mark.parametrize(
    "obs",
    [
        ledger.Observation("decision", 0.9, 0.85, "Chose TypeScript for the CLI", "1a2b3c4d"),
        ledger.Observation("fact", 0.95, 0.4, "The server runs on port 3000"),
        ledger.Observation("steering_rule", 1.0, 1.0, "Use [[Adyen]] #payments", "abcdef12"),
    ],
)
def test_ledger_lines_round_trip(obs: ledger.Observation) -> None:
    line = ledger.format_line(obs)
    assert ledger.parse_line(line) == obs


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("- [decision|c=0.90|i=0.85] Chose TS", ("decision", 0.9, 0.85, "Chose TS")),
        ("* [commitment|c=.8|i=1] Will do it", ("commitment", 0.8, 1.0, "Will do it")),
        (
            "  - [Steering-Rule|c=1.00|i=0.90] Always test  ",
            ("steering_rule", 1.0, 0.9, "Always test"),
        ),
        ("- [decision|i=0.85] missing confidence", None),
        ("- [decision|c=0.90|i=0.85]", None),
        ("plain text", None),
    ],
)
def test_ledger_lines_people_write(line: str, expected: tuple[object, ...] | None) -> None:
    got = ledger.parse_line(line)
    parts = None if got is None else (got.fact_type, got.confidence, got.importance, got.text)
    assert parts == expected


def test_ledger_merge_appends_and_replaces_by_fact() -> None:
    a = ledger.Observation("decision", 0.9, 0.85, "first", "aaaaaaaa")
    b = ledger.Observation("fact", 1.0, 0.4, "second", "bbbbbbbb")
    text = ledger.merge(None, a, DAY)
    assert text == "# Observations 2026-03-05\n\n- [decision|c=0.90|i=0.85] first ^fact-aaaaaaaa\n"
    text = ledger.merge(text + "- [fact|c=0.50|i=0.50] typed by hand\n", b, DAY)
    revised = ledger.Observation("decision", 0.9, 0.95, "first, revised", "aaaaaaaa")
    text = ledger.merge(text, revised, DAY)
    assert [o.text for o in ledger.parse(text)] == ["first, revised", "typed by hand", "second"]
    assert ledger.ledger_path("Engram", DAY) == "Engram/ledger/observations/2026/03/05.md"


def test_a_concurrent_edit_produces_a_conflict_copy_not_a_lost_write(tmp_path: Path) -> None:
    notes = Notes(tmp_path, lambda: AT)
    (tmp_path / "Engram").mkdir()
    notes.write("Engram/f.md", "v1\n", "")
    seen = notes.read("Engram/f.md")
    assert seen is not None
    (tmp_path / "Engram/f.md").write_text("v1\nhuman line\n", encoding="utf-8")  # Obsidian saves
    with pytest.raises(NoteConflict) as err:
        notes.write("Engram/f.md", "v2 by engram\n", seen.sha256)
    assert (tmp_path / "Engram/f.md").read_text(encoding="utf-8") == "v1\nhuman line\n"
    copy = tmp_path / err.value.copy
    assert err.value.copy == "Engram/f (conflict 2026-03-05 093000).md"
    assert copy.read_text(encoding="utf-8") == "v2 by engram\n"
    assert is_conflict_copy(err.value.copy) and not is_conflict_copy("Engram/f.md")
    with pytest.raises(NoteConflict) as again:  # a second conflict gets its own copy
        notes.write("Engram/f.md", "v3\n", seen.sha256)
    assert again.value.copy == "Engram/f (conflict 2026-03-05 093000 2).md"


def test_merge_rereads_until_no_one_wrote_in_between(tmp_path: Path) -> None:
    notes = Notes(tmp_path, lambda: AT)
    notes.write("d.md", "a\n", "")
    calls = []

    def build(old: str | None) -> str:
        calls.append(old)
        if len(calls) == 1:
            (tmp_path / "d.md").write_text("a\nperson\n", encoding="utf-8")
        return (old or "") + "engram\n"

    assert notes.merge("d.md", build) is not None
    assert (tmp_path / "d.md").read_text(encoding="utf-8") == "a\nperson\nengram\n"
    assert notes.merge("d.md", lambda old: old or "") is None  # unchanged: no write


def test_paths_stay_in_the_vault_and_moves_never_overwrite(tmp_path: Path) -> None:
    notes = Notes(tmp_path, lambda: AT)
    with pytest.raises(UnsafePathError):
        notes.write("../escape.md", "x", "")
    sha = notes.write("a.md", "\ufeffwith bom\n".removeprefix("\ufeff"), "", bom=True)
    assert (tmp_path / "a.md").read_bytes().startswith(b"\xef\xbb\xbf")
    read = notes.read("a.md")
    assert read is not None and read.bom and read.text == "with bom\n"
    notes.write("b/a.md", "other\n", "")
    moved = notes.move("a.md", "b/a.md", sha)
    assert moved == "b/a-2.md" and (tmp_path / "b/a.md").read_text(encoding="utf-8") == "other\n"
    with pytest.raises(ConflictError):
        notes.move("b/a-2.md", "c/a.md", "0" * 64)
