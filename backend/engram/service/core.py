"""The facade's shared state: settings, the index, config edits, contexts."""

from __future__ import annotations

import datetime as dt
import logging
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engram import config
from engram.config import Collection, Settings
from engram.errors import ConflictError, NotFoundError
from engram.memory.model import utc_now
from engram.secrets import KeyringLike, private_dir
from engram.store.db import Database
from engram.vault import journal
from engram.vault.atomic import write_file
from engram.vault.fsio import sha256_hex

if TYPE_CHECKING:
    from engram.index.loader import ParsePool

log = logging.getLogger(__name__)
CONFIG_CHECK_SECONDS = 1.0
MODEL_FIELDS = ("embed_model", "rerank_model", "generate_model", "n_threads")


@dataclass(frozen=True)
class Check:
    """One doctor finding: ok / warn / fail, what was seen, and how to fix it."""

    name: str
    status: str
    detail: str
    fix: str | None = None


class Core:
    """Holds settings, the lazily opened index and the clock; every facade part builds on it."""

    clock: Callable[[], dt.datetime] = staticmethod(utc_now)  # facts' time (tests set it)
    # the zone of the local calendar time words are read in ("yesterday"); None: the system's
    zone: dt.tzinfo | None = None

    def __init__(
        self,
        settings: Settings,
        keyring_source: Callable[[], KeyringLike | None] | None = None,
    ) -> None:
        self._settings = settings
        self._config_seen = _signature(settings.config_file)
        self._config_due = time.monotonic() + CONFIG_CHECK_SECONDS
        self._config_lock = threading.Lock()
        # the platform keyring, asked for on first use (composition roots pass it; without
        # one, credentials go to 0600 files)
        self.keyring_source = keyring_source or (lambda: None)
        self._db: Database | None = None
        self.recovered: list[journal.Recovered] = []  # writes a dead process left, settled
        if settings.crash_after_renames is not None:
            journal.crash_after(settings.crash_after_renames)
        if settings.test_now is not None:  # a stopped clock, in its own zone
            fixed = settings.test_now
            self.clock = lambda: fixed
            self.zone = fixed.tzinfo
        # by role: the daemon's index job parses in workers of its own, at nice 19, so a
        # write never waits behind a big note's parse (index/turns.py)
        self._parse_pools: dict[bool, ParsePool] = {}
        self._isolate_parsing = False

    @property
    def settings(self) -> Settings:
        """The settings, with changes another process made to the config file taken in (looked
        for at most once a second): a daemon or MCP server never serves a stale config."""
        if time.monotonic() >= self._config_due:
            self._check_config()
        return self._settings

    @settings.setter
    def settings(self, value: Settings) -> None:
        self._settings = value

    def _check_config(self) -> None:
        with self._config_lock:
            self._config_due = time.monotonic() + CONFIG_CHECK_SECONDS
            path = self._settings.config_file
            seen = _signature(path)
            if seen == self._config_seen:
                return
            self._config_seen = seen
            try:
                fresh = config.reread(self._settings, config.load_config_file(path))
            except config.ConfigError as exc:  # a person mid-edit: keep what works
                log.warning("%s; keeping the settings read before", exc)
                return
            self._apply(fresh)

    def _apply(self, fresh: Settings) -> None:
        """Adopt new settings; a model that changed is loaded again when next needed."""
        old, self._settings = self._settings, fresh
        if any(getattr(old, f) != getattr(fresh, f) for f in MODEL_FIELDS):
            self._models_changed()

    def _models_changed(self) -> None:
        """Drop loaded models (the facade does: models are loaded by its parts)."""

    @property
    def parse_pool(self) -> ParsePool:
        """Where notes are parsed outside this process (index/loader.py says when)."""
        from engram.index import turns

        background = turns.in_background()
        pool = self._parse_pools.get(background)
        if pool is None:
            from engram.index.loader import ParsePool  # no multiprocessing for a search

            pool = ParsePool(isolate=self._isolate_parsing, background=background)
            self._parse_pools[background] = pool
        return pool

    @property
    def db(self) -> Database:
        """The index, opened (and migrated) on first use; a multi-file write a crashed
        process left unfinished is then finished or undone (vault.journal)."""
        if self._db is None:
            private_dir(self.settings.data_dir)  # the index holds every note's text
            self._db = Database(self.settings.db_path)
            self._recover_writes()
        return self._db

    def _recover_writes(self) -> None:
        touched: dict[str, set[str]] = {}
        for col in self.settings.collections:
            try:
                done = journal.recover(col.path)
            except OSError as exc:  # an unreadable folder: the doctor reports the journal
                log.warning("could not check %s for unfinished writes: %s", col.path, exc)
                continue
            for r in done:
                log.warning(
                    "%s: an interrupted %s was %s (%d files)%s",
                    col.name,
                    r.label,
                    r.outcome,
                    len(r.paths),
                    f"; changed since, left as they are: {', '.join(r.changed)}"
                    if r.changed
                    else "",
                )
                touched.setdefault(col.name, set()).update(r.paths)
            self.recovered += done
        if touched:
            self.update(list(touched), only_paths=touched)

    if TYPE_CHECKING:  # the facade's update operation (service/retrieval.py)

        def update(
            self,
            collections: Iterable[str] = (),
            progress: Callable[[int, int], None] | None = None,
            only_paths: dict[str, set[str]] | None = None,
        ) -> Any: ...

    def isolate_parsing(self) -> None:
        """Parse every note in a worker process under a deadline (the daemon: no note may
        hold its writer thread). The workers' fork server starts here, at the caller's
        priority, which every worker inherits (the index job's lower their own)."""
        from engram.index.loader import start_server

        start_server()
        self._isolate_parsing = True
        for pool in self._parse_pools.values():
            pool.isolate = True

    def stop_parsing(self) -> None:
        """Stop the parsing worker now (shutdown): an update waiting on it fails at once."""
        for pool in list(self._parse_pools.values()):
            pool.close()

    def close(self) -> None:
        """Release the index and anything else this facade opened."""
        self.stop_parsing()
        if self._db is not None:
            self._db.close()
            self._db = None

    def __enter__(self) -> Core:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def require_collection(self, name: str) -> Collection:
        """The named collection, or NotFoundError with suggestions."""
        found = self.settings.collection(name)
        if found is None:
            import difflib

            names = [c.name for c in self.settings.collections]
            raise NotFoundError(
                f"no collection named {name!r}"
                + ("" if names else " (add one with: engram collection add PATH --name NAME)"),
                difflib.get_close_matches(name, names, n=3) or names[:5],
            )
        return found

    def edit_config(self, change: Callable[[dict[str, Any]], None]) -> None:
        """Apply `change` to the config file atomically and reload the settings from it."""
        path = self.settings.config_file
        before = _sha_of(path)
        raw = config.load_config_file(path)
        change(raw)
        config.from_raw(raw)  # validate before writing
        if path.parent == self.settings.config_dir:  # ours (a --config file's folder is not)
            private_dir(path.parent)
        try:  # another command may have changed the file since: never undo its change
            write_file(path, config.dump_config(raw).encode("utf-8"), before, private=True)
        except ConflictError:
            raise ConflictError(
                f"{path} changed while this command ran; nothing was written", "run it again"
            ) from None
        with self._config_lock:
            self._config_seen = _signature(path)
            self._apply(config.reread(self._settings, raw))

    def context_for(self, collection: str, path: str) -> str | None:
        """Every context that applies to a document, general to specific, one per line."""
        parts = [self.settings.global_context] if self.settings.global_context else []
        col = self.settings.collection(collection)
        if col is not None:
            full = "/" + path
            for prefix, text in col.contexts:  # sorted, so shorter prefixes come first
                if prefix == "/" or full == prefix or full.startswith(prefix + "/"):
                    parts.append(text)
        return "\n".join(parts) or None


def _signature(path: Path) -> tuple[int, int, int] | None:
    """What tells a changed config file from the one read: inode, size, modification time
    (an atomic replace gives a new inode even within the clock's resolution)."""
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def _sha_of(path: Path) -> str:
    """The file's hash, "" when there is none (what `write_file` expects)."""
    try:
        return sha256_hex(path.read_bytes())
    except FileNotFoundError:
        return ""
