"""The raw transcript ledger: validation, append-only lines, concurrent appends, observe."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
from pathlib import Path

import pytest

from engram.errors import InvalidInputError
from engram.memory import ledger, ledger_raw, observe

NOW = dt.datetime(2026, 3, 5, 9, 30, tzinfo=dt.UTC)
ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    "name", ["", ".", "..", "../x", "a/b", "a\\b", "-x", ".hidden", "a" * 65, "ä", "a b", "x\x00"]
)
def test_agent_names_that_are_not_one_safe_path_component_are_refused(name: str) -> None:
    with pytest.raises(InvalidInputError):
        ledger_raw.check_agent(name)


def test_good_agent_names_pass() -> None:
    for name in ("claude", "agent-7", "cursor.main", "A_1"):
        assert ledger_raw.check_agent(name) == name


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"role":"user","text":"ok"}\nnot json\n', "line 2: not JSON"),
        ('{"role":"user","text":"ok"}\n[1]\n', "line 2: each line must be a JSON object"),
        ('{"text":"ok"}\n', "line 1: 'role'"),
        ('{"role":"user"}\n', "line 1: 'text' must be a string"),
        ('{"role":"user","text":"a","ts":"soon"}\n', "line 1: Invalid isoformat"),
        ('\n\n{"role":"u","text":"' + "x" * 70_000 + '"}\n', "line 3:"),
    ],
)
def test_a_bad_line_is_refused_with_its_number(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(InvalidInputError) as caught:
        ledger_raw.parse_input(ledger_raw.decode_lines(text), NOW)
    assert message in caught.value.message


def test_lines_are_appended_never_rewritten_and_read_back(tmp_path: Path) -> None:
    entries = ledger_raw.parse_input(
        [(1, {"role": "user", "text": "hello", "model": "x"}), (2, {"role": "a", "text": "hi"})],
        NOW,
    )
    first = ledger_raw.append(tmp_path, "Engram", "bot", entries)
    path = tmp_path / "Engram/ledger/raw/bot/2026/03/05.jsonl"
    before = path.read_bytes()
    second = ledger_raw.append(tmp_path, "Engram", "bot", entries[:1])
    assert [x.number for x in first.lines] == [1, 2] and second.lines[0].number == 3
    assert path.read_bytes().startswith(before)  # appended after, never rewritten
    good, bad = ledger_raw.read(tmp_path, "Engram/ledger/raw/bot/2026/03/05.jsonl")
    assert bad == [] and [g.entry.text for g in good] == ["hello", "hi", "hello"]
    assert good[0].entry.extra == {"model": "x"} and good[0].entry.ts == NOW


def test_a_line_with_an_id_is_appended_once_per_day_file(tmp_path: Path) -> None:
    """A retry, or a hook fired twice, sends the same messages again: one line each."""

    def lines(*ids: str | None) -> list[tuple[ledger_raw.RawEntry, bytes]]:
        objects = [{"role": "user", "text": f"m {i}", **({"id": i} if i else {})} for i in ids]
        return ledger_raw.parse_input(enumerate(objects, 1), NOW)

    first = ledger_raw.append(tmp_path, "Engram", "bot", lines("a", "b", None))
    again = ledger_raw.append(tmp_path, "Engram", "bot", lines("b", "c", "c", None, "a"))
    assert [x.number for x in first.lines] == [1, 2, 3] and first.skipped == 0
    assert [x.number for x in again.lines] == [4, 5] and again.skipped == 3
    good, _ = ledger_raw.read(tmp_path, first.lines[0].path)
    assert [g.entry.text for g in good] == ["m a", "m b", "m None", "m c", "m None"]
    other = ledger_raw.append(tmp_path, "Engram", "other-bot", lines("a"))
    assert other.skipped == 0  # another agent's file is another ledger


def test_a_line_cut_by_a_crash_does_not_swallow_the_next(tmp_path: Path) -> None:
    path = tmp_path / "Engram/ledger/raw/bot/2026/03/05.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(b'{"role":"user","text":"whole"}\n{"role":"user","te')
    entries = ledger_raw.parse_input([(1, {"role": "user", "text": "next"})], NOW)
    result = ledger_raw.append(tmp_path, "Engram", "bot", entries)
    good, bad = ledger_raw.read(tmp_path, result.lines[0].path)
    assert [g.entry.text for g in good] == ["whole", "next"] and [b[0] for b in bad] == [2]
    assert result.lines[0].number == 3


def test_appends_from_several_processes_interleave_whole_lines(tmp_path: Path) -> None:
    script = (
        "import datetime as dt, sys\n"
        "from pathlib import Path\n"
        "from engram.memory import ledger_raw\n"
        "now = dt.datetime(2026, 3, 5, tzinfo=dt.UTC)\n"
        "for i in range(60):\n"
        "    e = ledger_raw.parse_input([(1, {'role': sys.argv[2], 'text': str(i) * 3000})], now)\n"
        "    ledger_raw.append(Path(sys.argv[1]), 'Engram', 'bot', e)\n"
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", script, str(tmp_path), f"w{n}"]) for n in range(4)
    ]
    assert all(p.wait(60) == 0 for p in procs)
    lines = (tmp_path / "Engram/ledger/raw/bot/2026/03/05.jsonl").read_bytes().split(b"\n")
    assert lines[-1] == b"" and len(lines) == 241
    decoded = [json.loads(x) for x in lines[:-1]]
    for n in range(4):
        mine = [int(d["text"][: len(d["text"]) // 3000]) for d in decoded if d["role"] == f"w{n}"]
        assert mine == list(range(60))  # each writer's lines whole and in its order


def test_a_symlinked_agent_folder_leading_out_of_the_vault_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    vault = tmp_path / "vault"
    (vault / "Engram/ledger/raw").mkdir(parents=True)
    (vault / "Engram/ledger/raw/bot").symlink_to(outside)
    entries = ledger_raw.parse_input([(1, {"role": "user", "text": "x"})], NOW)
    with pytest.raises(InvalidInputError):
        ledger_raw.append(vault, "Engram", "bot", entries)
    assert list(outside.iterdir()) == []


def test_observe_types_scores_points_back_and_adds_each_line_once() -> None:
    entry = ledger_raw.RawEntry("user", "We decided to ship on Friday", NOW)
    lines = [
        ledger_raw.RawLine("Engram/ledger/raw/bot/2026/03/05.jsonl", 4, entry),
        ledger_raw.RawLine(
            "Engram/ledger/raw/bot/2026/03/05.jsonl", 5, ledger_raw.RawEntry("tool", " ", NOW)
        ),
    ]
    text, added = observe.merge(None, lines, NOW.date())
    assert added == 1
    (obs,) = ledger.parse(text)
    assert obs.fact_type == "decision" and obs.importance == 0.8 and obs.confidence == 0.5
    assert obs.raw == "bot/2026/03/05.jsonl:4" and obs.text == "We decided to ship on Friday"
    assert observe.merge(text, lines, NOW.date()) == (text, 0)
    human = text + "- [lesson|c=1.00|i=0.70] my own line\n"
    assert observe.merge(human, lines, NOW.date()) == (human, 0)
