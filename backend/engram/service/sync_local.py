"""The vault half of Convex sync for one vault: the outbox, and bringing fact notes in step
with remote changes.

The rules (docs/convex.md "How conflicts resolve") are sync/rules.py's `decide`; this module
reads the note, carries the decision out and records it. Every write names the hash of the
note it read; if a person saves in between, the decision is made again on what they saved.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from dataclasses import replace
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any

from engram.errors import ConflictError
from engram.memory import format as fmt
from engram.memory import props
from engram.memory.model import Fact, file_name, folder_for, iso
from engram.store import facts as facts_store
from engram.store import sync as sync_store
from engram.store import sync_rejected
from engram.store.search import content_text
from engram.store.sync import Op
from engram.sync.outbox import queue_fact
from engram.sync.payload import content_hash, fact_of, normalized, payload_of, remote_fields
from engram.sync.remote import shown
from engram.sync.rules import decide
from engram.vault.fsio import sha256_hex as content_sha
from engram.vault.journal import Change
from engram.vault.parse import split_frontmatter

if TYPE_CHECKING:
    from engram.service.core import Core
    from engram.service.memory import MemoryService, VaultCtx
    from engram.service.memory_write import FactWriter

RACE_ATTEMPTS = 3
KEEP_REJECTED = 500  # remote changes kept aside per vault, newest first
RECORD_CHARS = 4_000  # of a kept change's JSON (enough to see what was wrong)


class _Raced(Exception):
    """The note changed between reading and writing it: decide again."""


class _Blocked(Exception):
    """A remote change cannot be applied before a write in flight is confirmed."""


class VaultSync:
    """`LocalSide` of the sync engine for one vault (blocking calls on the index and notes)."""

    def __init__(
        self, core: Core, memory: MemoryService, writer: FactWriter, v: VaultCtx, device: str
    ) -> None:
        self.core = core
        self.memory = memory
        self.writer = writer
        self.v = v
        self.device = device

    @property
    def conn(self) -> Any:
        return self.core.db.conn

    def _now(self) -> str:
        return iso(self.core.clock())

    # -- push ---------------------------------------------------------------------------

    def prepare(self) -> None:
        """Queue fact notes that never synced (written before sync was set up)."""
        with self.core.db.write() as conn:
            for row in sync_store.unsynced_facts(conn, self.v.name):
                fact = indexed_fact(conn, row)
                if fact.id:
                    queue_fact(conn, self.v.name, fact, row["last_edited_by"])

    def outbox(self, limit: int) -> list[Op]:
        """Ops to send, oldest first."""
        return sync_store.pending(self.conn, self.v.name, limit)

    def attempt(self, op: Op) -> None:
        """The op is about to be sent: its id and payload are fixed from now on."""
        with self.core.db.write() as conn:
            sync_store.attempted(conn, op.seq)

    def base_version(self, fact_id: str) -> int:
        """The version both sides last agreed on (0: Convex must not have the fact)."""
        state = sync_store.agreed(self.conn, fact_id)
        return state.version if state else 0

    def delete_wanted(self, op: Op) -> bool:
        """A queued delete still stands: the fact is not back and its note is really gone
        (not moved, not merely unreadable, not in a collection that was just removed)."""
        if facts_store.by_id(self.conn, op.fact_id) is not None:
            return False
        state = sync_store.agreed(self.conn, op.fact_id)
        return not (state and state.path and self.v.notes.exists(state.path))

    def acknowledged(self, op: Op, result: dict[str, Any]) -> dict[str, int]:
        """Convex accepted the op (or it was moot): record the new agreed state."""
        status = result.get("status")
        with self.core.db.write() as conn:
            state = sync_store.agreed(conn, op.fact_id)
            version = _version(result, state.version if state else 0)
            if status != "moot" and op.kind == "delete":
                sync_store.set_agreed(
                    conn,
                    self.v.name,
                    op.fact_id,
                    version,
                    state.synced_hash if state else "",
                    state.base if state else {},
                    None,
                    True,
                    self._now(),
                )
            elif status != "moot" and op.payload is not None and op.hash is not None:
                row = facts_store.by_id(conn, op.fact_id)
                path = str(row["path"]) if row is not None else None
                sync_store.set_agreed(
                    conn,
                    self.v.name,
                    op.fact_id,
                    version,
                    op.hash,
                    op.payload,
                    path,
                    False,
                    self._now(),
                )
            sync_store.done(conn, op.seq)
        if op.kind == "upsert":
            self._requeue(op)  # the note may have changed again while the op was in flight
        if status == "moot":
            return {}
        if op.kind == "delete":
            return {"deleted": 1}
        return {"pushed": 1} if result.get("changed", True) else {"unchanged": 1}

    def conflict(self, op: Op, current: dict[str, Any] | None) -> dict[str, int]:
        """Convex has another version than the one we last agreed on (the op id is spent):
        merge it in, then queue whatever the note still says that Convex lacks."""
        with self.core.db.write() as conn:
            sync_store.done(conn, op.seq)
            sync_store.drop_unsent(conn, op.fact_id)
            if current is None:  # Convex lost it (a new deployment?): start this fact over
                sync_store.forget(conn, op.fact_id)
        counts = {} if current is None else self._reconcile(current, pushing=True)
        self._requeue(op)
        return counts

    def park(self, op: Op, error: str) -> None:
        """Keep a refused op aside (shown by `engram sync status`)."""
        with self.core.db.write() as conn:
            sync_store.park(conn, op.seq, error)

    def _requeue(self, op: Op) -> None:
        """Queue the fact's note again if it differs from what is now agreed."""
        with self.core.db.write() as conn:
            row = facts_store.by_id(conn, op.fact_id)
            if row is not None:
                queue_fact(conn, self.v.name, indexed_fact(conn, row), row["last_edited_by"])

    # -- pull ---------------------------------------------------------------------------

    def cursor(self) -> str | None:
        """Where the last pull stopped."""
        return sync_store.cursor(self.conn, self.v.name)

    def reject(self, bad: list[tuple[dict[str, Any], str]]) -> None:
        """Keep remote changes that cannot be applied aside, with why (`sync status`)."""
        with self.core.db.write() as conn:
            for change, reason in bad:
                record = json.dumps(change, sort_keys=True, default=str)
                digest = hashlib.sha256(record.encode("utf-8", "replace")).hexdigest()
                fid = shown(change.get("externalId"))
                when = self._now()
                sync_rejected.add(
                    conn, self.v.name, fid, reason, record[:RECORD_CHARS], digest, when
                )
            sync_rejected.prune(conn, self.v.name, KEEP_REJECTED)

    def apply(self, changes: list[dict[str, Any]], next_cursor: str) -> dict[str, int]:
        """Apply a page of remote changes (checked by sync/remote.py), then move the cursor
        past it."""
        counts: Counter[str] = Counter()
        applied: list[Fact] = []
        cursor, done = next_cursor, len(changes)
        for i, change in enumerate(changes):
            try:
                counts.update(self._reconcile(change, pushing=False, applied=applied))
            except _Blocked:
                # stop just before this change; the next run, after the push, resumes here
                cursor = _position(changes[i - 1]) if i else self.cursor() or ""
                counts["deferred"] += 1
                done = i
                break
            counts["pulled"] += 1
        with self.core.db.write() as conn:
            sync_store.set_cursor(conn, self.v.name, cursor or None)
            sync_rejected.clear(conn, self.v.name, (c["externalId"] for c in changes[:done]))
        if applied:
            self.writer.record(self.v, *applied)
        return dict(counts)

    def finish(self, error: str | None, stopped: str | None) -> None:
        """Record the end of a run: its error, or why its pull stopped early."""
        with self.core.db.write() as conn:
            when = None if error else self._now()
            sync_store.finish(conn, self.v.name, when, error, stopped)

    def _reconcile(
        self, remote: dict[str, Any], pushing: bool, applied: list[Fact] | None = None
    ) -> dict[str, int]:
        for _ in range(RACE_ATTEMPTS):
            try:
                return self._reconcile_once(remote, pushing, [] if applied is None else applied)
            except _Raced:
                continue
        # a person keeps saving this note: their edit is queued and will meet this
        # remote version as a conflict on push
        return {"skipped": 1}

    def _reconcile_once(
        self, remote: dict[str, Any], pushing: bool, applied: list[Fact]
    ) -> dict[str, int]:
        conn, v = self.conn, self.v
        fid = str(remote.get("externalId") or "")
        version = _version(remote, 0)
        state = sync_store.agreed(conn, fid)
        if not fid:
            return {"skipped": 1}
        if not pushing and state is not None and state.version >= version:
            return {}  # our own write coming back, or older than what we have
        if not pushing and sync_store.in_flight(conn, fid):
            raise _Blocked  # a write we sent may be this very change: wait for its outcome
        theirs = normalized(remote_fields(remote))
        theirs_hash = content_hash(theirs)
        tomb = remote.get("deletedAt") is not None
        row = facts_store.by_id(conn, fid)
        if row is not None and row["collection"] != v.name:
            return {"skipped": 1}
        if row is None:
            if tomb:
                self._agree(fid, version, theirs_hash, theirs, state.path if state else None, True)
                return {}
            applied.append(self._create(fid, theirs, version, theirs_hash))
            return {"created": 1}
        rel = str(row["path"])
        note = v.notes.read(rel)
        if note is None:  # the index is behind the files: catch up, then decide again
            self.memory.index(v, {rel})
            raise _Raced
        data, body = props.read(note.text)
        if data is None:  # unreadable frontmatter: keep the person's note, save theirs beside
            copy = self._copy(rel, fmt.render(fact_of(theirs)), False)
            self._agree(fid, version, theirs_hash, theirs, rel, tomb)
            self._conflict(fid, rel, copy, ["frontmatter"])
            return {"conflicts": 1}
        local_fact = fmt.from_props(data, body, rel)
        mine = payload_of(local_fact, _editor(row, note.sha256))
        synced_hash, base = (state.synced_hash, state.base) if state else (None, None)
        d = decide(mine, theirs, synced_hash, base, tomb)
        if d.kind == "agree":
            self._agree(fid, version, d.agreed_hash, theirs, rel)
            return {}
        keep, copy = None, ""
        if d.kind == "conflict":  # the local version, saved in the same write
            copy = v.notes.conflict_name(rel)
            keep = v.notes.change(copy, note.text, "", note.bom)
        fact = self._apply(fid, rel, note, data, d.payload, version, d.agreed_hash, tomb, keep)
        if d.kind == "archive":
            return {"archived": 1}
        applied.append(fact)
        if d.kind == "conflict":
            self._conflict(fid, rel, copy, list(d.conflicts))
            return {"conflicts": 1, "updated": 1}
        return {"merged": 1, "updated": 1} if d.kind == "merge" else {"updated": 1}

    def _apply(
        self,
        fid: str,
        rel: str,
        note: Any,
        data: dict[str, Any],
        payload: dict[str, Any],
        version: int,
        agreed_hash: str,
        deleted: bool = False,
        keep: Change | None = None,
    ) -> Fact:
        """Make an existing note say `payload` (its other properties and bytes kept), move it
        to its type's folder if its type changed (and write `keep`, a conflict copy, in the
        same all-or-nothing write), record the agreed state and index it."""
        fact = fact_of(payload, rel)
        text = props.edit(note.text, fmt.changes_for(fact, data))
        if fact.text != fmt.from_props(data, props.read(note.text)[1]).text:
            text = fmt.with_body(text, fact.text)
        where = rel
        old_type = fmt.fact_type(data.get("factType", data.get("type")))
        folder = str(PurePosixPath(rel).parent)
        if fact.fact_type != old_type and folder == folder_for(old_type, self.v.facts_root):
            where = self.v.notes.destination(rel, folder_for(fact.fact_type, self.v.facts_root))
        change = self.v.notes.change(where, text, note.sha256, note.bom)
        if where != rel:
            change = replace(change, source=rel)
        changes = [c for c in (change, keep) if c is not None]
        if text != note.text or where != rel or keep is not None:
            try:
                self.v.notes.commit(changes, f"sync {rel}")
            except ConflictError:
                raise _Raced from None
        sha = content_sha(change.data or b"") if text != note.text else note.sha256
        self._agree(fid, version, agreed_hash, payload, where, deleted)
        self.writer.commit(self.v, {rel, where}, fid, sha)
        return replace(fact, path=where)

    def _create(self, fid: str, payload: dict[str, Any], version: int, digest: str) -> Fact:
        """A note for a fact this vault has not seen (or deleted after Convex changed it)."""
        fact = fact_of(payload)
        folder = folder_for(fact.fact_type, self.v.facts_root)
        rel = self.v.notes.free_name(folder, file_name(fact.title, fid))
        try:
            sha = self.v.notes.commit_one(rel, fmt.render(fact), "")
        except ConflictError:
            raise _Raced from None
        self._agree(fid, version, digest, payload, rel)
        self.writer.commit(self.v, {rel}, fid, sha)
        return replace(fact, path=rel)

    def _agree(
        self,
        fid: str,
        version: int,
        digest: str,
        payload: dict[str, Any],
        path: str | None,
        deleted: bool = False,
    ) -> None:
        with self.core.db.write() as conn:
            sync_store.set_agreed(
                conn, self.v.name, fid, version, digest, payload, path, deleted, self._now()
            )

    def _copy(self, rel: str, text: str, bom: bool) -> str:
        """Save a version beside the note as `<name> (conflict ...).md`."""
        copy = self.v.notes.conflict_name(rel)
        self.v.notes.commit_one(copy, text, "", bom)
        return copy

    def _conflict(self, fid: str, rel: str, copy: str, fields: list[str]) -> None:
        with self.core.db.write() as conn:
            sync_store.add_conflict(conn, self.v.name, fid, rel, copy, fields, self._now())


def indexed_fact(conn: Any, row: Any) -> Fact:
    """The fact as the index read its note (what `update` queues): a fact or document row
    with `frontmatter`, `hash` and `path`."""
    data = json.loads(row["frontmatter"] or "{}")
    body = split_frontmatter(content_text(conn, row["hash"]) or "")[1]
    return fmt.from_props(data, body, str(row["path"]))


def _position(change: dict[str, Any]) -> str:
    """The pull cursor just after a change (`<changeSeq>:<externalId>`, docs/convex.md)."""
    return f"{change['changeSeq']}:{change['externalId']}"


def _version(value: dict[str, Any], default: int) -> int:
    raw = value.get("version")
    try:
        return int(float(raw)) if raw is not None else default
    except (TypeError, ValueError):
        return default


def _editor(row: Any, sha: str) -> str | None:
    """Who last changed a note with this hash, as the index would say (None: the note's
    own `lastEditedBy`)."""
    written = row["written_hash"]
    if written is None:
        return None
    return "system" if written == sha else "human"
