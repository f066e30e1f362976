"""The memory commands from the command line (in-process)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import EngramCli


@pytest.fixture
def env(run: EngramCli, xdg: dict[str, str], vault: Path) -> dict[str, str]:
    env = {**xdg, "NO_COLOR": "1", "ENGRAM_AGENT_ID": "agent-cli"}
    info = run.json(env, "init", str(vault))
    assert info["name"] == "Brewline" and info["default"] and info["factsRoot"] == "Engram"
    assert info["template"] == "Templates/new-fact.md" and info["documents"] >= 11
    return env


def test_store_show_list_update_archive_supersede(
    run: EngramCli, env: dict[str, str], vault: Path
) -> None:
    fact = run.json(
        env, "fact", "add", "We decided to roast on Tuesdays with Kenji Sato.", "--tags", "ops"
    )
    assert fact["factType"] == "decision" and fact["createdBy"] == "agent-cli"
    assert fact["path"].startswith("Engram/decisions/") and (vault / fact["path"]).exists()
    assert fact["entities"] == ["Kenji Sato"] and fact["tags"] == ["ops"]
    short = fact["id"][:8]
    assert run.json(env, "fact", "show", short)["id"] == fact["id"]
    shown = run(env, "fact", "show", fact["path"]).stdout
    assert "factType: decision" in shown and "[[Kenji Sato]]" in shown
    listed = run.json(env, "fact", "list")
    assert [f["id"] for f in listed] == [fact["id"]]
    assert short in run(env, "fact", "list").stdout
    changed = run.json(env, "fact", "update", short, "--importance", "0.95", "--tags", "ops,weekly")
    assert changed["importanceScore"] == 0.95 and changed["tags"] == ["ops", "weekly"]
    result = run.json(env, "fact", "supersede", short, "We decided to roast on Wednesdays.")
    assert result["old"]["supersededBy"] == result["new"]["id"]
    assert result["new"]["supersedes"] == fact["id"] and result["old"]["lifecycleState"] == "merged"
    assert result["new"]["tags"] == ["ops", "weekly"]  # inherited from the old fact
    assert result["new"]["entities"] == ["Kenji Sato"] and result["new"]["factType"] == "decision"
    newer = run.json(
        env, "fact", "supersede", result["new"]["id"], "Roasting is on Fridays.", "--tags", "ops"
    )
    assert newer["new"]["tags"] == ["ops"] and newer["new"]["entities"] == ["Kenji Sato"]
    result = {"new": newer["new"]}
    archived = run.json(env, "fact", "archive", result["new"]["id"])
    assert archived["lifecycleState"] == "archived" and (vault / archived["path"]).exists()
    assert run.json(env, "fact", "list") == []
    assert len(run.json(env, "fact", "list", "--state", "archived", "--state", "merged")) == 3
    assert run.json(env, "fact", "sweep", "--dry-run") == []
    bad = run(env, "fact", "add", "x", "--type", "gossip", ok=False)
    assert bad.returncode == 1 and "unknown fact type" in bad.stderr
    missing = run(env, "fact", "show", "0000000", ok=False)
    assert missing.returncode == 1 and "no fact" in missing.stderr


def test_recall_daily_context(run: EngramCli, env: dict[str, str], vault: Path) -> None:
    added = run.json(env, "fact", "add", "Learned that light roasts need a finer grind.")
    run.json(env, "fact", "add", "The office plant needs water.", "--importance", "0.1")
    hits = run.json(env, "recall", "light roasts grind")["results"]
    assert hits[0]["fact"]["id"] == added["id"] and hits[0]["kind"] == "fact"
    assert {"score", "relevance", "importance", "recency", "path"} <= set(hits[0])
    since = run.json(env, "recall", "grind", "--since", "yesterday")
    assert since["results"][0]["fact"]["id"] == added["id"] and since["window"]["until"] is None
    assert run.json(env, "recall", "grind", "--until", "last week")["results"] == []
    assert run.json(env, "recall", "grind", "--type", "decision")["results"] == []
    with_notes = run.json(env, "recall", "pricing tiers", "--notes")["results"]
    assert any(h["kind"] == "note" for h in with_notes)
    assert "light roasts" in run(env, "recall", "grind").stdout
    day = run.json(env, "daily")  # the recalls by $ENGRAM_AGENT_ID join its session activity
    assert day["facts"] == 2 and (vault / day["path"]).exists() and day["written"] is True
    assert "- agent-cli: 2 facts stored, 6 recalls" in (vault / day["path"]).read_text()
    assert run.json(env, "daily")["written"] is False  # nothing new since: nothing written
    ctx = run.json(env, "memory", "context", "grind", "--budget", "120", "--profile", "planning")
    assert ctx["usedTokens"] <= 120 and ctx["profile"] == "planning"
    assert all(item["source"] and "score" in item for item in ctx["items"])
    text = run(env, "memory", "context", "grind", "--budget", "50")
    assert len(text.stdout.strip()) <= 200 and "/50 tokens" in text.stderr


def test_checkpoint_wake_end_session(run: EngramCli, env: dict[str, str], vault: Path) -> None:
    assert run.json(env, "wake")["dirtyExit"] is False
    cp = run.json(env, "checkpoint", "--working-on", "memory CLI", "--focus", "tests", "--urgent")
    assert cp["workingOn"] == "memory CLI" and cp["urgent"] is True
    assert (vault / ".engram/last-checkpoint.json").exists()
    run.json(env, "fact", "add", "Kenji committed to the roast calendar by Friday.")
    woke = run.json(env, "wake")
    assert woke["dirtyExit"] is True and woke["checkpoint"]["focus"] == "tests"
    assert woke["recent"][0]["factType"] == "commitment"
    assert woke["commitments"][0]["factType"] == "commitment"
    assert "dirty exit" in run(env, "wake").stdout
    ended = run.json(env, "end-session", "--summary", "CLI tests written.")
    assert ended["wasDirty"] is True and ended["handoff"]["factType"] == "session_summary"
    assert run.json(env, "wake")["dirtyExit"] is False
    assert "session ended" in run(env, "end-session").stdout


def test_memory_commands_need_a_vault(run: EngramCli, xdg: dict[str, str], tmp_path: Path) -> None:
    env = {**xdg, "NO_COLOR": "1"}
    out = run(env, "fact", "list", ok=False)
    assert out.returncode == 1 and "engram init" in out.stderr
    out = run(env, "recall", "x", "--vault", str(tmp_path), ok=False)
    assert out.returncode == 1 and "no vault" in out.stderr
