"""How clients find the running daemon, and how they tell it from a stale file.

Two files carry the same facts (url, port, token, pid...):
- `<vault>/<config dir>/plugins/engram/discovery.json`, read by the Obsidian plugin;
- `<data dir>/<index>.server.json`, read by the CLI and the MCP server (they know the index,
  not the vault).
Both are written atomically with mode 0600 once the socket is bound, and removed at a clean
shutdown. The daemon holds its index's and its vault's locks (`locks.py`) for as long as it
runs, so a file whose pid is not the lock holder's is stale (the daemon was killed, or its
pid was reused) and is replaced at the next start. The plugin folder gets a `.gitignore`
naming discovery.json, so committing the vault does not commit the token.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engram import __version__, codec
from engram.errors import ConflictError, InvalidInputError
from engram.secrets import write_private
from engram.server.locks import DaemonLock, holder, index_lock_path

PROTOCOL = 2  # 2: one route per search mode, codec-shaped replies (CHANGELOG.md)
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


def document(info: Discovery) -> dict[str, Any]:
    """The file's JSON (protocol 2; readers ignore keys they do not know): who wrote it and
    the URL first, then the fields. The file's format, so written here rather than by the
    codec, which would put the constants last."""
    head = {"name": NAME, "version": __version__, "protocol": PROTOCOL, "url": info.url}
    fields: dict[str, Any] = codec.encode(info)
    return head | fields


def write(path: Path, info: Discovery) -> None:
    """Write a discovery file atomically, mode 0600."""
    write_private(path, json.dumps(document(info), indent=2) + "\n")


def remove_if_ours(path: Path, pid: int) -> None:
    """Delete a discovery file unless another process has replaced it since."""
    data = read(path)
    if data is not None and data.get("pid") == pid:
        path.unlink(missing_ok=True)


def remove_stale(path: Path, pid: int) -> None:
    """Delete a discovery file another process wrote (called with the daemon's locks held:
    whoever wrote it no longer serves this vault or index)."""
    data = read(path)
    if data is not None and data.get("pid") != pid:
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
    parts = [f"pid {data.get('pid')}", data.get("url"), f"vault {data.get('vault')}"]
    parts += [f"index {data.get('index') or '?'}"]
    parts += [f"since {data['startedAt']}"] if data.get("startedAt") else []
    return ", ".join(str(p) for p in parts if p)


class IndexLock(DaemonLock):
    """The lock of one index's daemon slot (held by `engram serve` and `engram rebuild`)."""

    def __init__(self, data_dir: Path, index: str) -> None:
        super().__init__(index_lock_path(data_dir, index))


def from_holder(data: dict[str, Any] | None, lock: Path) -> bool:
    """Was this discovery document written by the process holding `lock` now?"""
    if data is None or not isinstance(data.get("pid"), int):
        return False
    owner = holder(lock)
    return owner is not None and owner.get("pid") == data["pid"]


def refuse_if_running(vault_file: Path, index_file: Path) -> None:
    """ConflictError naming a live daemon that wrote one of these files: one of another data
    dir, whose locks are not ours to see (the locks already refused any of this one)."""
    for path in (index_file, vault_file):
        data = read(path)
        if live(data) and data is not None and data.get("pid") != os.getpid():
            raise ConflictError(
                f"engram serve is already running ({describe(data)}); stop it first or use it"
            )


GITIGNORE_ENTRY = "discovery.json"


def ignore_in_git(folder: Path) -> bool:
    """Make `folder/.gitignore` name discovery.json, keeping what the file holds (the line is
    added atomically, and not over a version changed meanwhile); True when it was written."""
    path = folder / ".gitignore"
    try:
        if path.is_symlink() or (path.exists() and not path.is_file()):
            return False  # someone's own arrangement: leave it alone
        existed = path.exists()
        old = path.read_bytes() if existed else b""
    except OSError:
        return False
    lines = {line.strip().lstrip("!/") for line in old.decode("utf-8", "replace").splitlines()}
    if GITIGNORE_ENTRY in lines:  # ours, or the user's own rule about it (even a `!`)
        return False
    sep = b"" if not old or old.endswith(b"\n") else b"\n"
    new = old + sep + GITIGNORE_ENTRY.encode() + b"\n"
    mode = path.stat().st_mode & 0o777 if existed else 0o644
    fd, tmp = tempfile.mkstemp(prefix=".gitignore.", suffix=".tmp", dir=folder)
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as fh:
            fh.write(new)
            fh.flush()
            os.fsync(fh.fileno())
        if path.exists() != existed or (existed and path.read_bytes() != old):
            return False  # edited while we wrote: theirs stays, the next start tries again
        os.replace(tmp, path)
    finally:
        Path(tmp).unlink(missing_ok=True)
    return True
