"""The composition root of a CLI process (and of `engram mcp`, which runs in one): settings
read once, and the Engram every command gets, backed by the daemon of this index when one
is live (service/daemon.py decides per call and handles a daemon that stops), else local.

The daemon of an index announces itself in `<data dir>/<index>.server.json` (mode 0600, with
its port and token); it is used when that file was written by the process that holds the
index's daemon lock now (a killed daemon's file, or one whose pid was reused, is ignored at
once) and it serves the same index with the same config file. Only the standard library is
imported until a command runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from engram.config import Settings
    from engram.service import Engram
    from engram.service.daemon import DaemonClient, DaemonEngram


def local_engram(settings: Settings) -> Engram:
    """The in-process Engram (what `engram serve` itself runs on)."""
    from engram.secrets import system_keyring
    from engram.service import Engram

    return Engram(settings, keyring_source=system_keyring)  # asked only when sync needs it


def open_engram(settings: Settings, use_daemon: bool) -> DaemonEngram:
    """The Engram a command gets: the daemon-backed one (every call not for the daemon, and
    every call when none runs, goes to a local Engram opened on first need); it has every
    name of the local one, its own or through it."""
    from engram.service.daemon import DaemonEngram

    def find() -> DaemonClient | None:
        return running_daemon(settings) if use_daemon else None

    return DaemonEngram(find, settings, lambda: local_engram(settings))


def running_daemon(settings: Settings) -> DaemonClient | None:
    """The live daemon of this index, if any (to tell the user about it)."""
    from engram.server.discovery import server_file
    from engram.server.locks import index_lock_path

    path = server_file(settings.data_dir, settings.index_name)
    lock = index_lock_path(settings.data_dir, settings.index_name)
    return daemon_at(path, settings.config_file, lock)


def daemon_at(
    path: Path, config_file: Path | None = None, lock: Path | None = None
) -> DaemonClient | None:
    """The client for a server file when its process is alive — the holder of `lock`, when
    given — and uses `config_file`."""
    from engram.server import discovery
    from engram.service.daemon import DaemonClient

    data = discovery.read(path)
    if data is None or not discovery.pid_alive(data.get("pid")):
        return None
    if lock is not None and not discovery.from_holder(data, lock):
        return None
    if config_file is not None and data.get("config") != str(config_file):
        return None
    port, token = data.get("port"), data.get("token")
    if not isinstance(port, int) or not isinstance(token, str) or not token:
        return None
    collection = data.get("collection")
    pid = data.get("pid")
    return DaemonClient(
        port,
        token,
        pid if isinstance(pid, int) else None,
        collection if isinstance(collection, str) else None,
    )


def rotate_token(settings: Settings, vault: Path, config_dir: str) -> str:
    """Replace a vault's daemon token: by the running daemon when there is one (it switches
    at once), else in the token store; returns what happened, for the user."""
    from engram.secrets import system_keyring
    from engram.server import discovery
    from engram.server.tokens import TokenStore
    from engram.service.daemon import DaemonClient

    path = discovery.discovery_path(vault, discovery.check_config_dir(config_dir))
    data = discovery.read(path)
    if discovery.live(data) and data is not None and data.get("vault") == str(vault):
        client = DaemonClient(int(data["port"]), str(data["token"]), data.get("pid"))
        if client.rotate_token():  # else it stopped since: the store is the only holder left
            return f"token rotated; the daemon (pid {data.get('pid')}) uses the new one"
    TokenStore(settings.data_dir, vault, system_keyring()).rotate()
    return "token rotated; a daemon started from now on uses the new one"
