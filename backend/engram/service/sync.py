"""Convex sync for the facade: set up, run, report, and Convex's half of deep search.

Credentials (the deployment's sync token, and a deploy key or user token when the deployment
wants one) are kept with keyring, else in 0600 files; the config file only holds the URL.
"""

from __future__ import annotations

import asyncio
import functools
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from engram.config import DEFAULT_SYNC_INTERVAL, SyncSettings
from engram.errors import InvalidInputError, NotFoundError, UnavailableError
from engram.memory.model import LIFECYCLE_STATES
from engram.secrets import KeyringLike, Secret, secret_file
from engram.service.memory import VaultCtx
from engram.service.sync_local import VaultSync, indexed_fact
from engram.store import facts as facts_store
from engram.store import sync as sync_store
from engram.store import sync_rejected
from engram.sync.client import Backoff, ConvexClient, Malformed
from engram.sync.engine import SyncEngine, SyncReport
from engram.sync.pager import Pager, PullLimits
from engram.sync.payload import content_hash, normalized, payload_of, remote_fields
from engram.sync.remote import change_problem, kind

if TYPE_CHECKING:
    from engram.service.core import Core
    from engram.service.memory import MemoryService
    from engram.service.memory_write import FactWriter

SERVICE = "engram-convex"
NOT_CONFIGURED = "sync is not configured: run engram sync init --url URL (docs/convex.md)"
FUNCTIONS = Path(__file__).resolve().parents[3] / "convex"


@dataclass(frozen=True)
class ParkedOp:
    """An op Convex refused: it waits until the fact is fixed."""

    fact_id: str
    kind: str
    error: str | None


@dataclass(frozen=True)
class RejectedChange:
    """A change Convex sent that sync could not apply (kept aside; the pull went on)."""

    external_id: str  # as it may be shown: escaped and cut short
    reason: str
    at: str


@dataclass(frozen=True)
class SyncConflict:
    """A conflict copy sync wrote: the note it copies and the fields that differed."""

    fact_id: str
    path: str
    copy: str
    fields: tuple[str, ...]
    at: str


@dataclass(frozen=True)
class SyncStatus:
    """A vault's sync state. Not configured: `reason` says why, and the fields after it are
    empty (null, or no items)."""

    configured: bool
    state: str  # off, idle, error (the daemon adds syncing)
    pending: int
    last_sync: str | None
    reason: str | None = None
    vault: str | None = None
    url: str | None = None
    device: str | None = None
    interval: int | None = None
    parked: tuple[ParkedOp, ...] = ()
    conflicts: tuple[SyncConflict, ...] = ()
    last_error: str | None = None
    cursor: str | None = None
    stopped: str | None = None  # why the last pull ended before Convex said it was done
    rejected: tuple[RejectedChange, ...] = ()


@dataclass(frozen=True)
class SyncCheck:
    """Every fact note compared with Convex; lists hold fact ids."""

    same: int
    differ: tuple[str, ...]
    only_here: tuple[str, ...]
    only_in_convex: tuple[str, ...]
    deleted_in_convex_live_here: tuple[str, ...]
    pending: int  # ops waiting in the outbox
    tombstones: int  # facts deleted in Convex

    WIRE_EXTRA: ClassVar[dict[str, str]] = {"inStep": "in_step"}

    @property
    def in_step(self) -> bool:
        """Nothing differs and nothing waits."""
        return not (
            self.differ
            or self.only_in_convex
            or self.only_here
            or self.deleted_in_convex_live_here
            or self.pending
        )


async def _inline(fn: Callable[[], Any]) -> Any:
    return fn()


@dataclass(frozen=True)
class SyncSetup:
    """What `engram sync init` set up for a vault."""

    vault: str
    url: str
    device: str
    interval: int
    credentials: str  # where the token is kept: "keyring" or "file"
    checked: bool  # the deployment answered before anything was kept
    functions: str | None  # the Convex functions folder to deploy, when it is installed


class SyncService:
    """sync init / now / status, and searching the facts in Convex: over the index `core`,
    with the `memory` that finds the vault a call names and the fact notes a sync reads, and
    the `writer` that records what it writes; credentials in the keyring `core` was given."""

    sync_timeout: float = 15.0
    sync_backoff: Backoff = Backoff()
    sync_limits: PullLimits = PullLimits()

    def __init__(
        self,
        core: Core,
        memory: MemoryService,
        writer: FactWriter,
    ) -> None:
        self._core = core
        self._memory = memory
        self._writer = writer

    def sync_configured(self, vault: str | None = None) -> bool:
        """True when the vault's facts sync with Convex."""
        try:
            return self._sync_setup(vault) is not None
        except (NotFoundError, UnavailableError):
            return False

    def sync_init(
        self,
        url: str,
        token: str,
        auth: str | None = None,
        device: str | None = None,
        interval: int | None = None,
        vault: str | None = None,
        check: bool = True,
    ) -> SyncSetup:
        """Point a vault at a Convex deployment and keep its credentials; `check` first asks
        the deployment for one change, so a wrong URL, token or missing function is caught
        now. Existing facts are pushed by the next sync."""
        v = self._memory.vault(vault)
        url = url.strip().rstrip("/")
        if not url.startswith(("https://", "http://")):
            raise InvalidInputError(f"the deployment URL must start with https:// ({url!r})")
        if not token.strip():
            raise InvalidInputError("the sync token is empty (the deployment's ENGRAM_SYNC_TOKEN)")
        if interval is not None and interval <= 0:
            raise InvalidInputError("the sync interval must be a positive number of seconds")
        if check:
            asyncio.run(self._probe(ConvexClient(url, token.strip(), auth, self.sync_timeout)))
        self._secret(url, "token").set(token.strip())
        if auth:
            self._secret(url, "auth").set(auth.strip())
        else:
            self._secret(url, "auth").delete()
        device = device or socket.gethostname()
        interval = interval or DEFAULT_SYNC_INTERVAL
        spec = {"url": url, "device": device, "interval": interval}

        def change(raw: dict[str, Any]) -> None:
            vaults = dict(raw.get("vaults") or {})
            vaults[v.name] = {**(vaults.get(v.name) or {}), "sync": spec}
            raw["vaults"] = vaults

        self._core.edit_config(change)
        return SyncSetup(
            v.name,
            url,
            device,
            interval,
            self._secret(url, "token").kind,
            check,
            str(FUNCTIONS) if FUNCTIONS.is_dir() else None,
        )

    def sync_engine(
        self,
        vault: str | None = None,
        run_local: Callable[..., Awaitable[Any]] | None = None,
    ) -> SyncEngine:
        """A sync run for a vault; `run_local` runs its index and note work (the daemon
        passes its writer), inline by default."""
        v, s = self._require_sync(vault)
        local = VaultSync(
            self._core, self._memory, self._writer, v, s.device or socket.gethostname()
        )
        return SyncEngine(self._client(s), local, run_local or _inline, self.sync_limits)

    def sync_now(
        self, vault: str | None = None, push: bool = True, pull: bool = True
    ) -> SyncReport:
        """Push the outbox and pull Convex's changes now (blocking)."""
        return asyncio.run(self.sync_engine(vault).run(push=push, pull=pull))

    def sync_status(self, vault: str | None = None) -> SyncStatus:
        """Configured?, pending ops, parked errors, conflicts, last sync and last error."""
        try:
            found = self._sync_setup(vault)
        except NotFoundError as exc:
            found, reason = None, exc.message
        else:
            reason = NOT_CONFIGURED
        if found is None:
            return SyncStatus(False, "off", 0, None, reason)
        v, s = found
        conn = self._core.db.conn
        meta = sync_store.meta(conn, v.name)
        return SyncStatus(
            configured=True,
            state="error" if meta["last_error"] else "idle",
            pending=sync_store.count_pending(conn, v.name),
            last_sync=meta["last_sync"],
            vault=v.name,
            url=s.url,
            device=s.device,
            interval=s.interval,
            parked=tuple(
                ParkedOp(op.fact_id, op.kind, op.last_error)
                for op in sync_store.parked(conn, v.name)
            ),
            conflicts=tuple(
                SyncConflict(c["factId"], c["path"], c["copy"], tuple(c["fields"]), c["at"])
                for c in sync_store.conflicts(conn, v.name)
                if v.notes.exists(c["copy"])
            ),
            last_error=meta["last_error"],
            cursor=meta["cursor"],
            stopped=meta["stopped"],
            rejected=tuple(
                RejectedChange(r["externalId"], r["reason"], r["at"])
                for r in sync_rejected.listed(conn, v.name)
            ),
        )

    def sync_pending(self, vault: str | None = None) -> int:
        """How many ops wait to be sent (0 when sync is not configured)."""
        try:
            found = self._sync_setup(vault)
        except NotFoundError:
            return 0
        return 0 if found is None else sync_store.count_pending(self._core.db.conn, found[0].name)

    def sync_check(self, vault: str | None = None) -> SyncCheck:
        """Compare every fact note with Convex, changing nothing: which agree, which differ,
        which exist on one side only. In step when nothing differs and nothing waits."""
        v, s = self._require_sync(vault)
        client = self._client(s)

        async def everything() -> list[dict[str, Any]]:
            docs: list[dict[str, Any]] = []
            pager = Pager(client, None, 500, self.sync_limits)
            async with client:
                async for page in pager.pages():
                    docs += [d for d in page.changes if change_problem(d) is None]
            if pager.stopped:
                raise UnavailableError(f"the check read only part of Convex ({pager.stopped})")
            return docs

        remote = asyncio.run(everything())
        conn = self._core.db.conn
        q = facts_store.FactQuery(collection=v.name, states=LIFECYCLE_STATES)
        local = {
            str(row["id"]): (
                content_hash(payload_of(indexed_fact(conn, row), row["last_edited_by"])),
                str(row["lifecycle"]),
            )
            for row in facts_store.query(conn, q)
        }
        same, differ, only_remote, live_here = [], [], [], []
        for doc in remote:
            fid = str(doc.get("externalId"))
            if doc.get("deletedAt") is not None:
                if fid in local and local[fid][1] not in ("archived", "pruned"):
                    live_here.append(fid)
            elif fid not in local:
                only_remote.append(fid)
            elif local[fid][0] != content_hash(normalized(remote_fields(doc))):
                differ.append(fid)
            else:
                same.append(fid)
        only_here = sorted(set(local) - {str(d.get("externalId")) for d in remote})
        pending = sync_store.count_pending(conn, v.name)
        return SyncCheck(
            same=len(same),
            differ=tuple(differ),
            only_here=tuple(only_here),
            only_in_convex=tuple(only_remote),
            deleted_in_convex_live_here=tuple(live_here),
            pending=pending,
            tombstones=sum(1 for d in remote if d.get("deletedAt") is not None),
        )

    def cloud_search(self, query: str, n: int = 10, vault: str | None = None) -> list[Any]:
        """Live facts in Convex matching `query`, best first (deep search's cloud half)."""
        _, s = self._require_sync(vault)
        client = self._client(s)

        async def search() -> list[Any]:
            async with client:
                found = await client.query("facts:search", {"query": query, "limit": n})
            if not isinstance(found, list):
                raise Malformed(f"facts:search returned {kind(found)}, not a list")
            return [f for f in found if isinstance(f, dict) and change_problem(f) is None]

        return asyncio.run(search())

    def _sync_setup(self, vault: str | None) -> tuple[VaultCtx, SyncSettings] | None:
        v = self._memory.vault(vault)
        spec = self._core.settings.vault(v.name)
        return None if spec is None or spec.sync is None else (v, spec.sync)

    def _require_sync(self, vault: str | None) -> tuple[VaultCtx, SyncSettings]:
        found = self._sync_setup(vault)
        if found is None:
            raise UnavailableError(NOT_CONFIGURED)
        return found

    def _client(self, s: SyncSettings) -> ConvexClient:
        token = self._secret(s.url, "token").get()
        if token is None:
            raise UnavailableError(
                f"no sync token stored for {s.url}", "run engram sync init --url URL again"
            )
        auth = self._secret(s.url, "auth").get()
        return ConvexClient(s.url, token, auth, self.sync_timeout, self.sync_backoff)

    def _secret(self, url: str, which: str) -> Secret:
        account = f"{url}#{which}"
        folder = self._core.settings.data_dir / "secrets"
        return Secret(SERVICE, account, secret_file(folder, account, ".secret"), self.keyring)

    @functools.cached_property
    def keyring(self) -> KeyringLike | None:
        """The platform keyring, looked up once, when a credential is first needed."""
        return self._core.keyring_source()

    @staticmethod
    async def _probe(client: ConvexClient) -> None:
        async with client:
            await client.query("facts:listChangedSince", {"cursor": None, "limit": 1}, False)
