"""A fact is stored or not: what follows its note (ledger line, daily note, indexing) never
turns a stored fact into an error. It is tried again, reported as a warning, and done by a
later command."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
from pathlib import Path

import pytest
from test_fact_crash import ledger_lines, stored_facts

from engram.codec import encode
from engram.errors import InvalidInputError
from engram.mcp_server.app import call
from engram.mcp_server.gateway import Gateway, Options, Worker
from engram.memory import daily
from engram.service import Engram
from engram.service.daemon import DaemonEngram
from tests.conftest import EngramCli

DAY = dt.date(2026, 3, 5)  # the `clock` fixture's day
SAVER = """
import sys, time
from pathlib import Path
path, n = Path(sys.argv[1]), 0
while True:  # an editor saving the note in place, every 20 ms
    text = path.read_text("utf-8").split("\\nsaved ")[0]
    path.write_text(f"{text}\\nsaved {n}\\n", "utf-8")
    n += 1
    time.sleep(0.02)
"""


def daily_note(vault: Path, day: dt.date = DAY) -> Path:
    return vault / daily.daily_path("Engram", day)


def test_a_daily_note_another_program_saves_every_20_ms_fails_no_fact(
    mem: Engram, vault: Path
) -> None:
    mem.fact_add("The first fact of the day makes the daily note.")
    saver = subprocess.Popen([sys.executable, "-c", SAVER, str(daily_note(vault))])
    try:  # before, a conflict on the daily note failed 5-15% of them (stored all the same)
        added = [mem.fact_add(f"Fact {i} while the daily note is being saved.") for i in range(40)]
    finally:
        saver.kill()
        saver.wait()
    assert all((vault / fact.path).is_file() for fact in added)
    warned = [w for fact in added for w in fact.warnings]  # rare: 12 tries failed
    assert all("daily" in w and "not written yet" in w for w in warned), warned
    mem.fact_add("One more once the saving stopped: it finishes what was left.")
    lines = ledger_lines(vault)
    facts = stored_facts(vault)
    assert len(facts) == 42 and {ref: lines[ref] for ref in facts} == dict.fromkeys(facts, 1)
    text = daily_note(vault).read_text("utf-8")
    assert all(rel.removesuffix(".md") in text for rel in facts.values())


def test_a_daily_note_whose_marker_a_person_edited_blocks_nothing(
    run: EngramCli, mem: Engram, vault: Path, xdg: dict[str, str]
) -> None:
    first = mem.fact_add("We decided to roast on Tuesdays.")
    note = daily_note(vault)
    edited = note.read_text("utf-8").replace(daily.START, "<!-- my own notes -->")
    note.write_text(edited, "utf-8")
    second = mem.fact_add("We decided to cup on Fridays.")
    assert (vault / second.path).is_file() and note.read_text("utf-8") == edited
    assert len(second.warnings) == 1 and "was left as it is" in second.warnings[0]
    assert "Engram/daily/2026-03-05.md" in second.warnings[0]
    assert "engram daily 2026-03-05" in second.warnings[0]
    assert encode(second)["warnings"] == list(second.warnings)
    changed = mem.fact_update(first.id, importance=0.9)  # updates and archives too
    assert changed.importance == 0.9 and changed.warnings
    assert mem.fact_archive(second.id).lifecycle == "archived"
    assert ledger_lines(vault) == {first.id[:8]: 1, second.id[:8]: 1}
    assert note.read_text("utf-8") == edited  # the person's text, byte for byte
    today = daily_note(vault, dt.datetime.now(dt.UTC).date())  # the command's own day
    today.write_text(f"# My day\n\n{daily.START}\nonly the start marker is left\n", "utf-8")
    added = run({**xdg, "NO_COLOR": "1"}, "fact", "add", "We decided to close on Mondays.")
    assert added.stderr.count("\n") == 1 and added.stderr.startswith("warning: Engram/daily/")
    assert "was left as it is" in added.stderr and "close-on-mondays" in added.stdout
    with pytest.raises(InvalidInputError, match="markers"):  # asked for by name: it says why
        mem.daily("2026-03-05")
    note.write_text(edited.replace("<!-- my own notes -->", daily.START), "utf-8")
    assert mem.daily("2026-03-05").facts == 2


def test_a_follow_up_that_keeps_failing_is_a_warning_then_done_by_the_next_command(
    run: EngramCli, mem: Engram, vault: Path, xdg: dict[str, str]
) -> None:
    ledger = vault / "Engram/ledger/observations/2026/03/05.md"
    ledger.mkdir(parents=True)  # a folder where the day's ledger file goes
    fact = mem.fact_add("We decided to hire a second roaster.")
    assert (vault / fact.path).is_file() and mem.fact_get(fact.id).id == fact.id
    assert (
        len(fact.warnings) == 1
        and "the fact's ledger line is not written yet" in (fact.warnings[0])
    )
    assert fact.path.removesuffix(".md") in daily_note(vault).read_text("utf-8")
    ledger.rmdir()
    run(xdg, "fact", "list")  # the next command that reads memory
    assert ledger_lines(vault) == {fact.id[:8]: 1}
    run(xdg, "fact", "list")
    assert ledger_lines(vault) == {fact.id[:8]: 1}


async def test_an_agent_storing_a_fact_over_mcp_sees_the_warning_not_an_error(
    mem: Engram, vault: Path
) -> None:
    mem.fact_add("We decided to roast on Tuesdays.")
    note = daily_note(vault)
    note.write_text(note.read_text("utf-8").replace(daily.END, "(end)"), "utf-8")
    gw = Gateway(Worker(lambda: DaemonEngram(lambda: None, mem.settings, lambda: mem)), Options())
    result = await call(gw, "memory_store_fact", {"text": "We decided to cup on Fridays."})
    text = "".join(c.text for c in result.content if c.type == "text")
    assert not result.is_error, text
    stored = json.loads(text)["stored"]
    assert (vault / stored["path"]).is_file()
    assert stored["warnings"][0].startswith("Engram/daily/2026-03-05.md was left as it is")
