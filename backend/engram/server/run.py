"""Serving: take the index's and the vault's locks, bind 127.0.0.1, write discovery files,
run until a signal, then remove the files and close everything (`engram serve` calls `serve`)."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import errno
import logging
import os
import signal
import socket
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError

from engram.errors import ConflictError
from engram.secrets import KeyringLike, private_dir
from engram.server import discovery, locks
from engram.server.app import create_app
from engram.server.connections import (
    CONNECTIONS,
    Connections,
    GuardedSite,
    connection_limit,
    open_file_limit,
)
from engram.server.discovery import Discovery, IndexLock, document
from engram.server.locks import DaemonLock, vault_lock_path
from engram.server.mcp import Factory
from engram.server.middleware import AccessLogger
from engram.server.state import Runtime, ServerConfig, now_iso
from engram.server.tokens import TokenStore
from engram.service import Engram
from engram.service.operations import CAPABILITIES

log = logging.getLogger("engram.server")
SHUTDOWN_SECONDS = 5.0
MAX_LINE = 65536
IDLE_SECONDS = 75.0


@dataclass(frozen=True)
class ServeOptions:
    """What `engram serve` was asked for."""

    vault: Path
    port: int = 0
    watch: bool = True
    config_dir: str = ".obsidian"
    debounce: float = 2.0
    index_on_start: bool = True
    mcp: Factory | None = None  # MCP at /mcp (the composition root gives mcp_server's)


# An optional capability and the operation that provides it (service/operations.py; a test
# checks each is an operation the daemon serves, so none can drop out of discovery unseen).
OPTIONAL_CAPABILITIES = CAPABILITIES


def capabilities(engram: Engram, watch: bool) -> tuple[str, ...]:
    """What this daemon can do, for clients deciding which features to show."""
    caps = ["search", "status", "index", "documents", "notes.metadata", "active-note"]
    caps += [cap for cap, method in OPTIONAL_CAPABILITIES.items() if hasattr(engram, method)]
    return (*caps, "watch") if watch else tuple(caps)


def bind(port: int) -> socket.socket:
    """A listening socket on 127.0.0.1 (a free port when `port` is 0)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", port))
        sock.listen(128)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise ConflictError(
                f"port {port} on 127.0.0.1 is in use", "pick another --port, or omit it"
            ) from None
        raise
    sock.setblocking(False)
    return sock


def serve(
    engram: Engram,
    options: ServeOptions,
    keyring: KeyringLike | None,
    announce: Callable[[str], None] = print,
) -> None:
    """Run the daemon for `options.vault` until SIGINT or SIGTERM."""
    settings = engram.settings
    vault = options.vault.expanduser().resolve()
    vault_file = discovery.discovery_path(vault, options.config_dir)
    index_file = discovery.server_file(settings.data_dir, settings.index_name)
    with claimed(settings.data_dir, settings.index_name, vault) as held:
        discovery.refuse_if_running(vault_file, index_file)
        for path in (vault_file, index_file):  # we hold the locks: whoever wrote them is gone
            discovery.remove_stale(path, os.getpid())
        collection = engram.vault_collection(vault)
        if engram.settings.vault(collection) is None:  # memory (facts) for the plugin's panel
            engram.init_vault(
                str(vault),
                name=collection,
                config_dir=options.config_dir,
                index=False,
                template=False,  # never write into a vault just because it is served
            )
        store = TokenStore(settings.data_dir, vault, keyring)
        # a new token at every start: one copied out of the vault (a commit, a sync) is only
        # good until the daemon that wrote it stops
        runtime = Runtime(store.rotate(), store)
        sock = bind(options.port)
        config = ServerConfig(
            vault=vault,
            collection=collection,
            config_dir=options.config_dir,
            watch=options.watch,
            index_on_start=options.index_on_start,
            debounce=options.debounce,
        )
        app = create_app(engram, config, runtime, options.mcp)
        app[CONNECTIONS] = Connections(connection_limit(open_file_limit()))
        info = Discovery(
            port=sock.getsockname()[1],
            token=runtime.token,
            pid=os.getpid(),
            started_at=now_iso(),
            vault=str(vault),
            capabilities=capabilities(engram, options.watch),
            index=settings.index_name,
            config=str(settings.config_file),
            collection=collection,
        )
        for lock in held:
            lock.describe(lock_note(info))
        protect(vault_file.parent)
        asyncio.run(_run(app, sock, info, (vault_file, index_file), runtime, announce))


def lock_note(info: Discovery) -> dict[str, object]:
    """What a lock file says about its daemon (no token: a refused daemon prints it)."""
    data = document(info)
    return {k: data[k] for k in ("pid", "url", "vault", "index", "startedAt")}


@contextlib.contextmanager
def claimed(data_dir: Path, index: str, vault: Path) -> Iterator[list[DaemonLock]]:
    """Hold the index's and the vault's daemon locks, else ConflictError naming the holder."""
    wanted = [
        ("index", repr(index), IndexLock(data_dir, index)),
        ("vault", str(vault), DaemonLock(vault_lock_path(data_dir, vault))),
    ]
    taken: list[DaemonLock] = []
    try:
        for kind, name, lock in wanted:
            if not lock.acquire():
                raise ConflictError(refusal(kind, name, lock.path))
            lock.describe({"pid": os.getpid(), "vault": str(vault), "index": index})
            taken.append(lock)
        yield taken
    finally:
        for lock in reversed(taken):
            lock.release()


def refusal(kind: str, name: str, lock: Path) -> str:
    """One line naming the daemon that holds `lock` (it may have taken it an instant ago)."""
    running = locks.holder(lock, wait=1.0)
    if running is None:  # `engram rebuild`, or a daemon gone in the meantime
        return f"the {kind} {name} is in use by another engram process (serve or rebuild)"
    return (
        f"engram serve is already running for this {kind} "
        f"({discovery.describe(running)}); stop it first or use it"
    )


def protect(folder: Path) -> None:
    """The discovery file's folder, with a .gitignore naming discovery.json, before the file
    (a vault it cannot write fails here as it would when writing the file: one line, exit 1)."""
    private_dir(folder)
    discovery.ignore_in_git(folder)


def quiet_bad_requests(record: logging.LogRecord) -> bool:
    """Malformed HTTP (bad bytes in a header, a body that does not decode...) is refused by
    aiohttp with a 400 before any route runs, or when it drains a body after the answer; log
    it as one line without the offending bytes (they may hold the token)."""
    exc = record.exc_info[1] if record.exc_info else None
    if isinstance(exc, HttpProcessingError | web.RequestPayloadError):
        record.msg, record.args = "malformed HTTP request refused (%s)", (type(exc).__name__,)
        record.exc_info, record.exc_text = None, None
        record.levelno, record.levelname = logging.INFO, "INFO"
    return True


async def _run(
    app: web.Application,
    sock: socket.socket,
    info: Discovery,
    files: tuple[Path, ...],
    runtime: Runtime,
    announce: Callable[[str], None],
) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    runner = web.AppRunner(
        app,
        access_log_class=AccessLogger,
        handle_signals=False,
        shutdown_timeout=SHUTDOWN_SECONDS,
        # long lines reach the middleware, which answers 414 in JSON; only lines over
        # this get aiohttp's own plain-text 400
        max_line_size=MAX_LINE,
        max_field_size=MAX_LINE,
        # a connection idle (or stuck in its headers) this long is closed; aiohttp's own
        # default without run_app is an hour
        keepalive_timeout=IDLE_SECONDS,
    )
    await runner.setup()
    logging.getLogger("aiohttp.server").addFilter(quiet_bad_requests)
    try:
        await GuardedSite(runner, sock, app[CONNECTIONS]).start()

        def publish(token: str) -> None:
            current = dataclasses.replace(info, token=token)
            for path in reversed(files):  # the plugin's file last: it means "ready"
                discovery.write(path, current)

        publish(info.token)
        runtime.on_rotate.append(publish)
        announce(
            f"engram serve: {info.url} for {info.vault} (collection {info.collection}, "
            f"index {info.index}); discovery file {files[0]}"
        )
        await stop.wait()
        log.info("shutting down")
    finally:
        for path in files:
            with contextlib.suppress(OSError):
                discovery.remove_if_ours(path, info.pid)
        await runner.cleanup()
