"""The composition root's one rule for a daemon that stops answering mid-command: a read runs
again in-process, a write that may have reached the daemon is not run twice."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engram.codec import encode
from engram.config import Settings, Vault
from engram.errors import UnavailableError
from engram.service.daemon import DaemonEngram, DaemonUnreachable

SETTINGS = Settings(
    "index",
    Path("/nonexistent/data"),
    Path("/nonexistent/cache"),
    Path("/nonexistent/config"),
    Path("/nonexistent/config/index.yml"),
    vaults=(Vault("notes"),),
    default_vault="notes",
)


class Dying:
    """A daemon client whose daemon stops before (`sent` False) or after sending."""

    pid, port, collection = 7, 1234, "notes"

    def __init__(self, sent: bool) -> None:
        self.sent = sent
        self.asked: list[str] = []

    def request(self, method: str, path: str, body: Any = None, params: Any = None) -> Any:
        self.asked.append(f"{method} {path}")
        raise DaemonUnreachable("connection reset", sent=self.sent)


class Local:
    """The in-process Engram, counting what it ran."""

    def __init__(self) -> None:
        self.ran: list[str] = []

    def fact_get(self, ref: str, vault: str | None = None) -> str:
        self.ran.append("fact_get")
        return "local fact"

    def fact_add(self, *args: Any) -> str:
        self.ran.append("fact_add")
        return "added here"

    def ledger_append(self, *args: Any) -> str:
        self.ran.append("ledger_append")
        return "appended here"

    def close(self) -> None:
        pass


def engram(daemon: Dying, local: Local) -> DaemonEngram:
    return DaemonEngram(lambda: daemon, SETTINGS, lambda: local)  # type: ignore[arg-type,return-value]


@pytest.mark.parametrize("sent", [False, True])
def test_a_read_runs_again_in_process(sent: bool) -> None:
    daemon, local = Dying(sent), Local()
    assert engram(daemon, local).fact_get("abc") == "local fact"
    assert daemon.asked == ["GET /v1/facts/abc"] and local.ran == ["fact_get"]


def test_a_write_the_daemon_may_have_done_is_not_run_again() -> None:
    daemon, local = Dying(sent=True), Local()
    with pytest.raises(UnavailableError, match="may have been done or not") as err:
        engram(daemon, local).fact_add("Oat milk on Fridays.")
    assert daemon.asked == ["POST /v1/facts"] and local.ran == []
    assert err.value.hint and "before running the command again" in err.value.hint


def test_a_write_that_never_left_runs_in_process() -> None:
    daemon, local = Dying(sent=False), Local()
    assert engram(daemon, local).fact_add("Oat milk on Fridays.") == "added here"
    assert local.ran == ["fact_add"]


class Recording:
    """A daemon client that answers with `reply` and keeps what it was sent."""

    pid, port, collection = 7, 1234, "notes"

    def __init__(self, reply: Any) -> None:
        self.reply = reply
        self.sent: list[tuple[str, Any]] = []

    def request(self, method: str, path: str, body: Any = None, params: Any = None) -> Any:
        self.sent.append((f"{method} {path}", body))
        return self.reply


def test_a_recall_by_a_named_agent_is_counted_by_the_daemon() -> None:
    daemon = Recording({"results": []})
    found = engram(daemon, Local()).recall("oat milk", agent="claude")  # type: ignore[arg-type]
    assert found.results == () and found.window is None
    assert daemon.sent[0][0] == "POST /v1/recall" and daemon.sent[0][1]["agent"] == "claude"


def test_ledger_lines_go_to_the_daemon_with_their_numbers() -> None:
    """Line 3 of a file whose first two lines were blank: an error must name line 3."""
    reply = {
        "agent": "bot",
        "appended": 1,
        "skipped": 0,
        "lines": [{"path": "raw.jsonl", "line": 4}],
    }
    daemon, local = Recording(reply), Local()
    line = {"role": "user", "text": "hi"}
    got = engram(daemon, local).ledger_append("bot", [(3, line)])  # type: ignore[arg-type]
    assert encode(got) == reply
    assert daemon.sent == [("POST /v1/ledger/raw", {"agent": "bot", "lines": [[3, line]]})]
    assert local.ran == []
