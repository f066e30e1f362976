"""engram ledger append / observe from the command line against a real vault."""

from __future__ import annotations

import json
from pathlib import Path

from engram.service import Engram
from engram.store import admin
from tests.conftest import EngramCli


def test_append_observe_round_trip(run: EngramCli, xdg: dict[str, str], vault: Path) -> None:
    env = {**xdg, "NO_COLOR": "1", "ENGRAM_AGENT_ID": "agent-cli"}
    run(env, "init", str(vault), "--no-index")
    lines = [
        {
            "role": "user",
            "text": "Lesson learned: never deploy on Fridays",
            "ts": "2026-03-05T08:00:00Z",
        },
        {
            "role": "assistant",
            "text": "I will deliver the report by Monday",
            "ts": "2026-03-05T08:01:00+00:00",
        },
    ]
    stdin = "\n".join(json.dumps(x) for x in lines) + "\n"
    done = run(env, "ledger", "append", "--json", stdin=stdin)
    rel = "Engram/ledger/raw/agent-cli/2026/03/05.jsonl"
    assert json.loads(done.stdout)["lines"] == [{"path": rel, "line": 1}, {"path": rel, "line": 2}]
    assert [json.loads(x)["text"] for x in (vault / rel).read_text().splitlines()] == [
        x["text"] for x in lines
    ]

    bad = run(env, "ledger", "append", "--agent", "other", stdin=stdin + "{oops\n", ok=False)
    assert bad.returncode == 1 and "line 3: not JSON" in bad.stderr
    assert "Traceback" not in bad.stderr and not (vault / "Engram/ledger/raw/other").exists()
    assert run(env, "ledger", "append", "--agent", "..", stdin=stdin, ok=False).returncode == 1

    result = run.json(env, "ledger", "observe", "--day", "2026-03-05")
    assert result["added"] == 2
    obs = vault / result["path"]
    text = obs.read_text()
    assert (
        "[lesson|c=0.50|i=0.70] Lesson learned" in text and "agent-cli/2026/03/05.jsonl:1" in text
    )
    assert "[commitment|" in text
    again = run.json(env, "ledger", "observe", "--day", "2026-03-05")
    assert again["added"] == 0 and obs.read_text() == text
    assert run(env, "ledger", "observe", "--day", "someday", ok=False).returncode == 1


def test_raw_files_are_never_indexed_as_notes(mem: Engram, vault: Path) -> None:
    mem.ledger_append("bot", [(1, {"role": "user", "text": "zanzibar"})])
    mem.update()
    paths = [p for (p,) in mem.db.conn.execute("SELECT path FROM documents")]
    assert paths and not any(p.endswith(".jsonl") for p in paths)
    assert admin.document_by_path(mem.db.conn, "Brewline", "Engram/ledger/raw") is None


def test_raw_files_stay_out_of_the_index_whatever_the_mask(engram: Engram, tmp_path: Path) -> None:
    root = tmp_path / "v"
    (root / "logs").mkdir(parents=True)
    (root / "logs/a.jsonl").write_text('{"role":"user","text":"zanzibar"}\n')
    (root / "note.md").write_text("# Note\n")
    (root / "plain.txt").write_text("zanzibar\n")
    engram.collection_add(str(root), "all", mask="**/*")
    engram.update()
    paths = {p for (p,) in engram.db.conn.execute("SELECT path FROM documents")}
    assert paths == {"note.md", "plain.txt"}
