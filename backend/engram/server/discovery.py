"""How clients find the running daemon, and how a second daemon is refused.

Two files carry the same facts (url, port, token, pid...):
- `<vault>/<config dir>/plugins/engram/discovery.json`, read by the Obsidian plugin;
- `<data dir>/<index>.server.json`, read by the CLI and the MCP server (they know the index,
  not the vault).
Both are written atomically with mode 0600 once the socket is bound, and removed at a clean
shutdown. A file whose pid is dead, or whose server does not answer, is stale and replaced.
An exclusive `flock` on `<data dir>/<index>.server.lock`, held for the daemon's lifetime, makes
"one daemon per index" hold even when two start at the same moment.
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from engram import __version__
from engram.errors import ConflictError, InvalidInputError
from engram.secrets import write_private

PROTOCOL = 1
NAME = "engram"


@dataclass(frozen=True)
class Discovery:
    """What a client needs to reach and trust the daemon."""

    port: int
    token: str
    pid: int
    started_at: str
    vault: str
    capabilities: tuple[str, ...]
    index: str = ""
    config: str = ""
    collection: str = ""

    @property
    def url(self) -> str:
        """The loopback base URL."""
        return f"http://127.0.0.1:{self.port}"

    def to_dict(self) -> dict[str, Any]:
        """The JSON document (protocol 1; extra keys are ignored by readers)."""
        return {
            "name": NAME,
            "version": __version__,
            "protocol": PROTOCOL,
            "url": self.url,
            "port": self.port,
            "token": self.token,
            "pid": self.pid,
            "startedAt": self.started_at,
            "vault": self.vault,
            "capabilities": list(self.capabilities),
            "index": self.index,
            "config": self.config,
            "collection": self.collection,
        }


def check_config_dir(name: str) -> str:
    """The vault's config folder name (`.obsidian` unless the user renamed it)."""
    if not name or "/" in name or "\\" in name or name in {".", ".."} or "\x00" in name:
        raise InvalidInputError(f"--config-dir must be a folder name like .obsidian, got {name!r}")
    return name


def discovery_path(vault: Path, config_dir: str = ".obsidian") -> Path:
    """`<vault>/<config dir>/plugins/engram/discovery.json`."""
    return vault / check_config_dir(config_dir) / "plugins" / "engram" / "discovery.json"


def server_file(data_dir: Path, index: str) -> Path:
    """`<data dir>/<index>.server.json`: the daemon of an index, for the CLI and MCP."""
    return data_dir / f"{index}.server.json"


def read(path: Path) -> dict[str, Any] | None:
    """A discovery document, or None when missing, unreadable or not ours."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("name") != NAME:
        return None
    return data


def write(path: Path, info: Discovery) -> None:
    """Write a discovery file atomically, mode 0600."""
    write_private(path, json.dumps(info.to_dict(), indent=2) + "\n")


def remove_if_ours(path: Path, pid: int) -> None:
    """Delete a discovery file unless another process has replaced it since."""
    data = read(path)
    if data is not None and data.get("pid") == pid:
        path.unlink(missing_ok=True)


def pid_alive(pid: Any) -> bool:
    """Is there a process with this id (on this machine)?"""
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by someone else
    except OSError:
        return False
    return True


def answers(data: dict[str, Any], timeout: float = 1.0) -> bool:
    """Does an Engram daemon answer `GET /v1/health` on the file's port?"""
    port = data.get("port")
    if not isinstance(port, int) or not 0 < port < 65536:
        return False
    import http.client  # only when a discovery file names a port: it brings ssl and email

    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", "/v1/health", headers={"Host": f"127.0.0.1:{port}"})
        resp = conn.getresponse()
        body = json.loads(resp.read() or b"{}")
        return resp.status == 200 and isinstance(body, dict) and body.get("name") == NAME
    except (OSError, ValueError, http.client.HTTPException):
        return False
    finally:
        conn.close()


def live(data: dict[str, Any] | None) -> bool:
    """A discovery document whose process is alive and answering."""
    return data is not None and pid_alive(data.get("pid")) and answers(data)


def describe(data: dict[str, Any]) -> str:
    """One line naming a running daemon."""
    return (
        f"pid {data.get('pid')}, {data.get('url')}, vault {data.get('vault')}, "
        f"index {data.get('index') or '?'}, since {data.get('startedAt')}"
    )


class IndexLock:
    """An exclusive, process-lifetime lock on one index's daemon slot."""

    def __init__(self, data_dir: Path, index: str) -> None:
        self.path = data_dir / f"{index}.server.lock"
        self._fh: IO[str] | None = None

    def acquire(self) -> bool:
        """Take the lock without waiting; False when another daemon holds it."""
        import fcntl

        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)  # private, like the index
        fh = open(fd, "a+", encoding="utf-8")  # noqa: SIM115 (held for the lifetime)
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            fh.close()
            return False
        self._fh = fh
        return True

    def release(self) -> None:
        """Give the lock back (closing the file releases it)."""
        if self._fh is not None:
            with contextlib.suppress(OSError):
                self._fh.close()
            self._fh = None


def refuse_if_running(vault_file: Path, index_file: Path) -> None:
    """ConflictError naming the daemon already serving this vault; stale files are ignored."""
    for path in (index_file, vault_file):
        data = read(path)
        if live(data) and data is not None and data.get("pid") != os.getpid():
            raise ConflictError(
                f"engram serve is already running ({describe(data)})",
                "stop it first (Ctrl-C in its terminal, or kill that pid)",
            )
