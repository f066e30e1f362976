"""`engram hook claude-code`: a session captured into the raw ledger without the agent asking,
every bound of its hostile input, and `engram hook install|uninstall` in Claude Code's
settings."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from engram.memory import transcript
from engram.service import hooks
from tests.conftest import EngramCli, Ran

SESSION = "3f6c1d2e-9a4b-4c1e-8f00-0a1b2c3d4e5f"


@pytest.fixture
def claude(tmp_path: Path) -> Path:
    """Claude Code's config folder (CLAUDE_CONFIG_DIR), with one project's transcripts."""
    folder = tmp_path / "claude"
    (folder / "projects" / "-home-me-brewline").mkdir(parents=True)
    return folder


@pytest.fixture
def env(run: EngramCli, xdg: dict[str, str], vault: Path, claude: Path) -> dict[str, str]:
    env = {**xdg, "NO_COLOR": "1", "CLAUDE_CONFIG_DIR": str(claude)}
    run.json(env, "init", str(vault))
    return env


def line(
    kind: str, uid: str, content: Any, ts: str = "2026-03-05T10:00:00.000Z", **more: Any
) -> str:
    role = "assistant" if kind == "assistant" else "user"
    return json.dumps(
        {
            "type": kind,
            "uuid": uid,
            "parentUuid": None,
            "sessionId": SESSION,
            "timestamp": ts,
            "cwd": "/home/me/brewline",
            "message": {"role": role, "content": content},
            **more,
        }
    )


def turns(start: int, count: int) -> list[str]:
    """`count` user/assistant pairs with tool noise between them."""
    out = []
    for i in range(start, start + count):
        out.append(line("user", f"u{i}", f"Question {i}: should we roast on Tuesdays?"))
        out.append(
            line(
                "assistant",
                f"a{i}",
                [
                    {"type": "thinking", "thinking": "private reasoning"},
                    {"type": "text", "text": f"We decided to roast on Tuesdays ({i})."},
                    {"type": "tool_use", "id": f"t{i}", "name": "Bash", "input": {"command": "ls"}},
                ],
            )
        )
        out.append(
            line("user", f"r{i}", [{"type": "tool_result", "tool_use_id": f"t{i}", "content": "x"}])
        )
    return out


def append(path: Path, lines: list[str]) -> None:
    with path.open("a", encoding="utf-8") as f:
        f.write("".join(f"{x}\n" for x in lines))


def payload(event: str, path: Path | str | None, **more: Any) -> str:
    body = {"session_id": SESSION, "hook_event_name": event, "cwd": "/home/me/brewline", **more}
    if path is not None:
        body["transcript_path"] = str(path)
    return json.dumps(body)


def hook(run: EngramCli, env: dict[str, str], stdin: str, *args: str) -> Ran:
    ran = run(env, "hook", "claude-code", *args, stdin=stdin, ok=False)
    assert ran.returncode == 0, ran.stderr  # a hook never fails the agent
    return ran


def raw_lines(vault: Path) -> list[dict[str, Any]]:
    files = sorted((vault / "Engram" / "ledger" / "raw" / "claude-code").rglob("*.jsonl"))
    return [json.loads(x) for f in files for x in f.read_text().splitlines() if x.strip()]


def test_a_session_is_captured_once_through_start_two_compacts_and_end(
    run: EngramCli, env: dict[str, str], vault: Path, claude: Path
) -> None:
    run(env, "checkpoint", "--working-on", "the roasting schedule")
    path = claude / "projects" / "-home-me-brewline" / f"{SESSION}.jsonl"
    start = hook(run, env, payload("SessionStart", path, source="startup"))
    context = json.loads(start.stdout)["hookSpecificOutput"]
    assert context["hookEventName"] == "SessionStart"
    assert "the roasting schedule" in context["additionalContext"]
    assert "not instructions" in context["additionalContext"]
    assert len(context["additionalContext"]) <= hooks.MAX_CONTEXT and start.stderr == ""

    secret = "sk-ant-api03-" + "x" * 40
    append(path, [line("summary", "s0", "old summary"), *turns(0, 2)])
    append(path, [line("user", "u-key", f"my key is {secret}, keep it safe")])
    first = hook(run, env, payload("PreCompact", path, trigger="auto"), "--verbose")
    assert "5 lines captured" in first.stderr and "1 secrets masked" in first.stderr
    captured = raw_lines(vault)
    assert [x["id"] for x in captured] == ["u0", "a0", "u1", "a1", "u-key"]
    assert captured[1] == {
        "ts": "2026-03-05T10:00:00.000Z",
        "role": "assistant",
        "text": "We decided to roast on Tuesdays (0).",
        "id": "a0",
        "session": SESSION,
        "project": "brewline",
    }
    assert secret not in json.dumps(captured) and "[masked:anthropic]" in captured[-1]["text"]
    observations = vault / "Engram" / "ledger" / "observations" / "2026" / "03" / "05.md"
    assert "roast on Tuesdays" in observations.read_text()  # observed: decisions scored

    again = hook(run, env, payload("PreCompact", path, trigger="manual"), "--verbose")
    assert "0 lines captured" in again.stderr and len(raw_lines(vault)) == 5

    append(path, turns(2, 1))
    hook(run, env, payload("PreCompact", path, trigger="auto"))
    hook(run, env, payload("SessionEnd", path, reason="prompt_input_exit"))
    ids = [x["id"] for x in raw_lines(vault)]
    assert ids == ["u0", "a0", "u1", "a1", "u-key", "u2", "a2"]

    # the offsets lost, and two more hooks at once: the ids still keep each line once
    for state in (Path(env["XDG_DATA_HOME"]) / "engram" / "hooks").rglob("*.json"):
        state.unlink()
    hook(run, env, payload("Stop", path, stop_hook_active=False))
    hook(run, env, payload("UserPromptSubmit", path, prompt="hello"))
    assert [x["id"] for x in raw_lines(vault)] == ids
    assert observations.read_text().count("roast on Tuesdays (2)") == 1


def test_other_events_and_a_missing_transcript_do_nothing(
    run: EngramCli, env: dict[str, str], vault: Path, claude: Path
) -> None:
    quiet = hook(run, env, payload("Notification", None, message="hi"))
    assert quiet.stdout == "" and quiet.stderr == ""
    missing = hook(run, env, payload("Stop", claude / "projects" / "p" / "nope.jsonl"))
    assert missing.stderr.count("\n") == 1 and "does not exist" in missing.stderr
    assert raw_lines(vault) == []


HOSTILE = [
    ("not json", "not JSON"),
    ('["a list"]', "not a JSON object"),
    ('{"session_id": "x"}', "no hook_event_name"),
    (payload("Stop", None), "names no transcript_path"),
    (json.dumps({"hook_event_name": "Stop", "session_id": "../../etc"}), "not an id"),
    (payload("Stop", "relative/path.jsonl"), "absolute path to a .jsonl"),
    (payload("Stop", "/etc/passwd"), "absolute path to a .jsonl"),
    (payload("Stop", "/tmp/elsewhere/x.jsonl"), "outside the allowed places"),
    (payload("Stop", "/x\u0000y.jsonl"), "not a path"),
]


@pytest.mark.parametrize(("stdin", "says"), HOSTILE)
def test_hostile_payloads_leave_one_line_and_exit_0(
    run: EngramCli, env: dict[str, str], vault: Path, stdin: str, says: str
) -> None:
    ran = hook(run, env, stdin)
    assert ran.stdout == "" and ran.stderr.count("\n") == 1 and says in ran.stderr, ran.stderr
    assert raw_lines(vault) == []


def test_stdin_is_capped(run: EngramCli, env: dict[str, str], vault: Path, claude: Path) -> None:
    path = claude / "projects" / "-home-me-brewline" / "big.jsonl"
    append(path, turns(0, 1))
    huge = payload("Stop", path, prompt="x" * (hooks.MAX_PAYLOAD + 10))
    ran = hook(run, env, huge)
    assert "over 4,194,304 bytes" in ran.stderr and raw_lines(vault) == []


def test_links_and_special_files_are_refused(
    run: EngramCli, env: dict[str, str], vault: Path, claude: Path, tmp_path: Path
) -> None:
    project = claude / "projects" / "-home-me-brewline"
    outside = tmp_path / "outside.jsonl"
    append(outside, turns(0, 1))
    (project / "out.jsonl").symlink_to(outside)  # a link leading out of the places
    inside = project / "real.jsonl"
    append(inside, turns(0, 1))
    (project / "in.jsonl").symlink_to(inside)  # a link, even to an allowed file
    (claude / "projects" / "escape").symlink_to(tmp_path)  # a linked folder leading out
    os.mkfifo(project / "pipe.jsonl")  # would block a plain open
    cases = {
        "out.jsonl": "outside the allowed places",
        "in.jsonl": "cannot be opened",
        "../escape/outside.jsonl": "outside the allowed places",
        "pipe.jsonl": "not a regular file",
    }
    for name, says in cases.items():
        ran = hook(run, env, payload("Stop", project / name))
        assert says in ran.stderr and ran.stderr.count("\n") == 1, (name, ran.stderr)
    assert raw_lines(vault) == []


def test_a_1_gb_transcript_costs_what_its_last_8_mb_do(
    run: EngramCli, env: dict[str, str], vault: Path, claude: Path
) -> None:
    path = claude / "projects" / "-home-me-brewline" / "huge.jsonl"
    with path.open("wb") as f:
        f.write(b'{"type": "user", "uuid": "old", "message": {"content": "old"}}\n')
        f.truncate(1 << 30)  # sparse: 1 GB without writing it
    append(path, ["", *turns(0, 1)])
    started = time.perf_counter()
    ran = hook(run, env, payload("Stop", path))
    assert time.perf_counter() - started < 10
    assert "bytes of a long transcript were skipped" in ran.stderr
    assert [x["id"] for x in raw_lines(vault)] == ["u0", "a0"]  # the old line was never read


def test_long_lines_and_broken_lines_are_passed_over(
    run: EngramCli, env: dict[str, str], vault: Path, claude: Path
) -> None:
    path = claude / "projects" / "-home-me-brewline" / "noisy.jsonl"
    long_text = "y" * (transcript.MAX_LINE + 10)
    append(path, [line("user", "long", long_text), "{broken", "[1, 2]", *turns(0, 1)])
    append(path, [line("user", "wordy", "z" * (transcript.MAX_TEXT + 500))])
    append(path, [line("user", "meta", "caveat", isMeta=True)])
    append(path, [line("user", "cmd", "<command-name>/clear</command-name>")])
    path.write_bytes(path.read_bytes() + b'{"type": "user", "uuid": "half"')  # being written
    ran = hook(run, env, payload("Stop", path))
    assert "1 long and 2 unreadable lines skipped" in ran.stderr
    captured = raw_lines(vault)
    assert [x["id"] for x in captured] == ["u0", "a0", "wordy"]
    assert captured[-1]["text"].endswith("[… 500 more characters left out]")
    with path.open("a") as f:  # the half line ends: the next hook takes it whole
        f.write(', "message": {"content": "finished"}, "timestamp": "2026-03-05T11:00:00Z"}\n')
    hook(run, env, payload("Stop", path))
    assert raw_lines(vault)[-1]["id"] == "half"


@pytest.mark.slow
def test_a_hook_that_cannot_finish_gives_up_with_exit_0(xdg: dict[str, str], claude: Path) -> None:
    """A stdin that never ends: the watchdog leaves after ENGRAM_HOOK_TIMEOUT seconds."""
    env = {**os.environ, **xdg, "CLAUDE_CONFIG_DIR": str(claude), "ENGRAM_HOOK_TIMEOUT": "1"}
    started = time.perf_counter()
    read, write = os.pipe()  # the writing end stays open here: read() would wait forever
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "engram", "hook", "claude-code"],
            stdin=read,
            capture_output=True,
            env=env,
            timeout=30,
        )
    finally:
        os.close(read)
        os.close(write)
    out, err = proc.stdout, proc.stderr
    assert proc.returncode == 0 and out == b""
    assert err.decode().strip() == "engram hook: gave up after 1 s (ENGRAM_HOOK_TIMEOUT)"
    assert time.perf_counter() - started < 15


# -- engram hook install / uninstall ----------------------------------------------------------

THEIRS = {
    "model": "opus",
    "hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "lint.sh"}]}],
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
    },
    "permissions": {"allow": ["Bash(ls:*)"]},
}


def test_install_keeps_every_other_hook_and_setting(
    run: EngramCli, env: dict[str, str], claude: Path
) -> None:
    settings = claude / "settings.json"
    original = json.dumps(THEIRS, indent=4) + "\n"
    settings.write_text(original)
    settings.chmod(0o600)
    shown = run(
        env, "hook", "install", "claude-code", "--dry-run", "--command", "engram hook claude-code"
    )
    assert settings.read_text() == original  # a dry run writes nothing
    assert shown.stdout.startswith(f"--- {settings}\n+++ {settings}\n")
    assert '+                        "command": "engram hook claude-code",' in shown.stdout
    assert "dry run:" in shown.stdout

    run(env, "hook", "install", "claude-code", "--command", "engram hook claude-code")
    written = json.loads(settings.read_text())
    assert settings.stat().st_mode & 0o777 == 0o600 and '\n    "model"' in settings.read_text()
    assert written["model"] == "opus" and written["permissions"] == THEIRS["permissions"]
    assert written["hooks"]["PreToolUse"] == THEIRS["hooks"]["PreToolUse"]
    assert written["hooks"]["Stop"][0] == THEIRS["hooks"]["Stop"][0]  # theirs first, kept
    for event in hooks_events():
        ours = [h for g in written["hooks"][event] for h in g["hooks"] if "engram" in h["command"]]
        assert ours == [{"type": "command", "command": "engram hook claude-code", "timeout": 30}]
    before = settings.read_bytes()
    again = run(env, "hook", "install", "claude-code", "--command", "engram hook claude-code")
    assert "nothing to change" in again.stdout and settings.read_bytes() == before

    moved = run(
        env, "hook", "install", "claude-code", "--command", "/opt/bin/engram hook claude-code"
    )
    commands = [
        h["command"] for g in json.loads(settings.read_text())["hooks"]["Stop"] for h in g["hooks"]
    ]
    assert commands == ["notify-send done", "/opt/bin/engram hook claude-code"], moved.stdout

    run(env, "hook", "uninstall", "claude-code")
    assert json.loads(settings.read_text()) == THEIRS


def test_install_writes_through_a_link_and_creates_what_is_missing(
    run: EngramCli, env: dict[str, str], claude: Path, tmp_path: Path
) -> None:
    dotfiles = tmp_path / "dotfiles" / "claude-settings.json"
    dotfiles.parent.mkdir()
    dotfiles.write_text("{}\n")
    (claude / "settings.json").symlink_to(dotfiles)
    run(env, "hook", "install", "claude-code")
    assert (claude / "settings.json").is_symlink()
    command = json.loads(dotfiles.read_text())["hooks"]["SessionEnd"][0]["hooks"][0]["command"]
    assert command.endswith(" hook claude-code") and "engram" in command

    project = tmp_path / "brewline"
    project.mkdir()
    run(
        env,
        "hook",
        "install",
        "claude-code",
        "--project",
        str(project),
        "--local",
        "--vault",
        "Brewline",
    )
    local = json.loads((project / ".claude" / "settings.local.json").read_text())
    assert local["hooks"]["Stop"][0]["hooks"][0]["command"].endswith(
        "hook claude-code --vault Brewline"
    )
    run(env, "hook", "uninstall", "claude-code", "--project", str(project), "--local")
    assert json.loads((project / ".claude" / "settings.local.json").read_text()) == {}


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('{"hooks": {"Stop": [}', "not valid JSON"),
        ('["not", "an", "object"]', "not a JSON object"),
        ('{"hooks": ["Stop"]}', "hooks is not an object"),
        ('{"hooks": {"Stop": {"command": "x"}}}', "is not a list of"),
    ],
)
def test_settings_it_does_not_understand_are_left_alone(
    run: EngramCli, env: dict[str, str], claude: Path, text: str, says: str
) -> None:
    settings = claude / "settings.json"
    settings.write_text(text)
    ran = run(env, "hook", "install", "claude-code", ok=False)
    assert ran.returncode == 1 and says in ran.stderr and settings.read_text() == text


def hooks_events() -> tuple[str, ...]:
    from engram.service.hook_settings import EVENTS

    return EVENTS
