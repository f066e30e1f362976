"""Memory, part 1: vaults, keeping the fact index in step with the notes, reading facts."""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engram import config
from engram.errors import ConflictError, InvalidInputError, NotFoundError
from engram.index import indexer
from engram.memory import adopt, daily, props
from engram.memory import format as fmt
from engram.memory.inputs import tier_bounds
from engram.memory.model import Fact
from engram.memory.notes import Notes
from engram.memory.results import VaultInfo
from engram.memory.template import TEMPLATE_NAME, templates_folder, write_template
from engram.service.collections import refuse_overlap
from engram.service.memory_follow import FollowUps
from engram.store import activity, admin
from engram.store import documents as docs
from engram.store import facts as facts_store
from engram.store import sync as sync_store
from engram.store.search import content_text
from engram.sync.outbox import queue_fact
from engram.vault.parse import split_frontmatter

if TYPE_CHECKING:
    from engram.service.core import Core

_NAME = re.compile(r"^[\w][\w.-]*$")
FACTS_SEQ = "facts_seq"  # meta: the change number fact rows are up to date with


@dataclass(frozen=True)
class VaultCtx:
    """A resolved vault: its collection, folders and note I/O."""

    name: str
    root: Path
    facts_root: str
    config_dir: str
    templates: str
    notes: Notes
    syncing: bool = False  # facts sync with Convex (changes are queued as they are indexed)


class MemoryService:
    """init, the fact index (adoption on update), fact show/list/recent; what the other
    memory parts share: a vault by name, a fact's row and Fact, indexing just-written files,
    a day's daily note."""

    def __init__(self, core: Core, update: Callable[..., indexer.UpdateReport]) -> None:
        self._core = core
        self._update = update
        self._healed = False  # whether this process looked for unfinished fact writes yet

    @cached_property
    def follow_ups(self) -> FollowUps:
        """What follows each fact write, and what interrupted ones left (memory_follow.py)."""
        return FollowUps(self._core, self)

    def heal(self, v: VaultCtx | None = None) -> None:
        """Do the follow-ups (ledger lines, daily notes) that interrupted fact writes left."""
        self._healed = True
        self.follow_ups.heal(v)

    def init_vault(
        self,
        path: str,
        name: str | None = None,
        facts_root: str | None = None,
        config_dir: str | None = None,
        index: bool = True,
        template: bool = True,
    ) -> VaultInfo:
        """Register a folder as the default vault (a collection with a facts root) and
        write the new-fact template into its templates folder (unless `template` is off)."""
        root = Path(path).expanduser().resolve()
        if not root.is_dir():
            raise NotFoundError(f"{path} is not a folder")
        cols = self._core.settings.collections
        same = next((c for c in cols if c.path.expanduser().resolve() == root), None)
        if same is None:  # a folder inside or above a collection would index notes twice
            refuse_overlap(root, cols)
        name = same.name if same else (name or root.name)
        if not _NAME.match(name):
            raise InvalidInputError(f"vault name {name!r}: use letters, digits, - _ .")
        if same is None and self._core.settings.collection(name):
            raise ConflictError(f"a collection named {name!r} already exists", "pick --name")
        old = self._core.settings.vault(name)
        spec = {
            "facts_root": facts_root or (old.facts_root if old else config.DEFAULT_FACTS_ROOT),
            "config_dir": config_dir or (old.config_dir if old else config.DEFAULT_CONFIG_DIR),
        }

        def change(raw: dict[str, Any]) -> None:
            if same is None:
                cols = dict(raw.get("collections") or {})
                cols[name] = {"path": str(root), "pattern": config.DEFAULT_PATTERN}
                raw["collections"] = cols
            vaults = dict(raw.get("vaults") or {})
            vaults[name] = {**(vaults.get(name) or {}), **spec}  # keeps its sync settings
            raw["vaults"] = vaults
            raw["default_vault"] = name

        self._core.edit_config(change)
        v = self.vault(name)
        v.notes.path(v.facts_root).mkdir(parents=True, exist_ok=True)
        rel = f"{v.templates}/{TEMPLATE_NAME}"
        status = write_template(v.notes, rel) if template else "not written"
        if index:
            self._update([name])
        return VaultInfo(
            name=name,
            path=str(root),
            facts_root=v.facts_root,
            config_dir=v.config_dir,
            is_default=True,
            template=rel,
            template_status=status,
            templates_source=templates_folder(root, v.config_dir)[1],
            documents=admin.collection_counts(self._core.db.conn).get(name, (0, None))[0],
        )

    def vault(self, vault: str | None = None) -> VaultCtx:
        """The named vault (name or folder path), else the default one; the first in a
        process also finishes what interrupted fact writes left."""
        v = self._resolve(vault)
        if not self._healed:
            self.heal()
        return v

    def _resolve(self, vault: str | None = None) -> VaultCtx:
        name = vault or self._core.settings.default_vault
        if name is None:
            raise NotFoundError("no vault yet: run engram init VAULT_FOLDER")
        v = self._core.settings.find_vault(name)
        if v is None:
            raise NotFoundError(
                f"no vault {name!r} (register one with engram init PATH)",
                [x.name for x in self._core.settings.vaults],
            )
        root = self._core.require_collection(v.name).path.resolve()
        folder, _ = templates_folder(root, v.config_dir)
        notes = Notes(root, self._core.clock, self._core.settings.max_file_bytes)
        return VaultCtx(v.name, root, v.facts_root, v.config_dir, folder, notes, v.sync is not None)

    def refresh_facts(self, report: indexer.UpdateReport) -> None:
        """Bring the fact rows in step with the documents stored since the last refresh (by
        their change number: an update interrupted before this step leaves them to the next)."""
        if not self._core.settings.vaults:
            return
        vaults = {
            v.name: self._resolve(v.name)
            for v in self._core.settings.vaults
            if self._core.settings.collection(v.name)
        }
        todo: dict[str, list[tuple[str, str, str, dt.datetime]]] = {}
        with self._core.db.write() as conn:
            changed = docs.changed_since(conn, int(docs.get_meta(conn, FACTS_SEQ) or 0))
            for doc_id, _ in changed:
                row = facts_store.document(conn, doc_id)
                v = vaults.get(row["collection"]) if row is not None else None
                if v is None:
                    continue
                found = self._refresh_one(conn, v, row, report)
                if found is not None:
                    todo.setdefault(v.name, []).append(found)
            if changed:
                docs.set_meta(conn, FACTS_SEQ, str(changed[-1][1]))
        for name, items in todo.items():
            self._adopt(vaults[name], items)
        self.heal()  # so `engram update` and the daemon's index jobs finish them too

    def _refresh_one(
        self, conn: Any, v: VaultCtx, row: Any, report: indexer.UpdateReport
    ) -> tuple[str, str, str, dt.datetime] | None:
        """Upsert or drop one document's fact row; a note to adopt is returned instead."""
        doc_id, rel = int(row["id"]), str(row["path"])
        indexed = json.loads(row["frontmatter"] or "{}")
        if not adopt.is_candidate(rel, indexed, v.facts_root, v.templates):
            facts_store.delete_doc(conn, doc_id)
            return None
        if not indexed and "frontmatter" in str(row["warnings"]):
            facts_store.delete_doc(conn, doc_id)
            warning = "fact note with broken frontmatter: ignored"
            report.warnings.append(indexer.IndexWarning(v.name, rel, warning))
            return None
        _, body, _ = split_frontmatter(content_text(conn, row["hash"]) or "")
        fact = fmt.from_props(indexed, body, rel)  # the indexer already parsed the YAML
        mtime = dt.datetime.fromtimestamp(row["mtime_ns"] / 1e9, dt.UTC).replace(microsecond=0)
        if not fact.id:
            facts_store.delete_doc(conn, doc_id)
            return rel, str(row["hash"]), str(row["title"]), mtime
        other = facts_store.by_id(conn, fact.id)
        if other is not None and other["doc_id"] != doc_id:
            facts_store.delete_doc(conn, doc_id)
            report.warnings.append(
                indexer.IndexWarning(
                    v.name,
                    rel,
                    f"fact id {fact.id} is already {other['path']}; this copy is "
                    "ignored (delete its id: line to make it a fact of its own)",
                )
            )
            return None
        written = facts_store.written_hash(conn, fact.id)
        fact_row = adopt.row_for(fact, doc_id, row["hash"], mtime, written)
        facts_store.upsert(conn, fact_row)
        if v.syncing:
            queue_fact(conn, v.name, fact, fact_row.last_edited_by)
        return None

    def _adopt(self, v: VaultCtx, items: list[tuple[str, str, str, dt.datetime]]) -> None:
        """Complete the properties of fact notes people made; skip any that changed since."""
        written: set[str] = set()
        for rel, sha, title, mtime in items:
            note = v.notes.read(rel)
            if note is None or note.sha256 != sha:
                continue  # edited since it was indexed: the next update adopts it
            try:
                new = adopt.adopt_text(note.text, rel, title, mtime)
                if new is None or new == note.text:
                    continue
                v.notes.commit_one(rel, new, sha, note.bom)
            except (ConflictError, InvalidInputError):
                continue
            written.add(rel)
        if written:
            self.index(v, written)

    def index(self, v: VaultCtx, rels: Iterable[str]) -> None:
        """Index files just written so the index and the notes agree at once."""
        self._update([v.name], only_paths={v.name: set(rels)})

    def index_generated(self, v: VaultCtx, rels: Iterable[str]) -> None:
        """Index Engram's generated notes (ledger, daily notes) just written; a daemon embeds
        them in its next job: they restate facts whose own notes are embedded at once, and
        embedding a day's growing note again on every fact took a second (70 facts in a day).
        Without a daemon they are embedded before the write returns."""
        self._update([v.name], only_paths={v.name: set(rels)}, embed=False)

    def fact_row(self, v: VaultCtx, ref: str) -> Any:
        """The index row of a fact by id, id prefix, file name or vault path."""
        conn, ref = self._core.db.conn, ref.strip()
        row = facts_store.by_id(conn, ref)
        if row is not None and row["collection"] == v.name:
            return row
        rel = ref
        if Path(ref).is_absolute():
            try:
                rel = Path(ref).resolve().relative_to(v.root).as_posix()
            except ValueError:
                rel = ref
        for cand in (rel, rel + ".md"):
            doc = admin.document_by_path(conn, v.name, cand)
            if doc is not None and (row := facts_store.by_doc(conn, int(doc["id"]))):
                return row
        stem = Path(rel).stem
        prefix = stem.rsplit("-", 1)[-1] if "-" in stem else stem
        if re.fullmatch(r"[0-9a-fA-F]{4,64}", prefix):
            rows = facts_store.by_prefix(conn, v.name, prefix.lower())
            if len(rows) == 1:
                return rows[0]
            if len(rows) > 1:
                raise InvalidInputError(
                    f"{ref!r} matches several facts: " + ", ".join(r["id"] for r in rows)
                )
        raise NotFoundError(f"no fact {ref!r} in vault {v.name} (list them: engram fact list)")

    def fact_from_row(self, v: VaultCtx, row: Any, fresh: bool = False) -> Fact:
        """A Fact from its note (`fresh`: the file on disk; else the indexed copy)."""
        note = v.notes.read(str(row["path"])) if fresh else None
        if note is not None:
            data, body = props.read(note.text)
        else:  # the indexed copy: its frontmatter is already parsed, as JSON
            data = json.loads(row["frontmatter"] or "{}")
            body = split_frontmatter(content_text(self._core.db.conn, row["hash"]) or "")[1]
        fact = fmt.from_props(data or {}, body, str(row["path"]))
        last = fmt.to_time(row["last_access"])
        updated = fmt.to_time(row["updated_at"])
        return replace(
            fact,
            id=fact.id or str(row["id"]),
            last_edited_by=str(row["last_edited_by"]),
            updated_at=updated if updated and updated > fact.changed_at else fact.updated_at,
            access_count=int(row["access_count"]),
            last_access=last,
            sync_status=self._sync_status(v, str(row["id"])),
        )

    def _sync_status(self, v: VaultCtx, fact_id: str) -> str | None:
        """local / synced / pending / conflict from the sync bookkeeping (None: no sync)."""
        if not v.syncing:
            return None
        conn = self._core.db.conn
        if any(v.notes.exists(c) for c in sync_store.conflict_copies(conn, fact_id)):
            return "conflict"
        if sync_store.has_pending(conn, fact_id):
            return "pending"
        return "synced" if sync_store.agreed(conn, fact_id) is not None else "local"

    def fact_get(self, ref: str, vault: str | None = None) -> Fact:
        """One fact by id (or unique id prefix, file name, vault path), as its note says now."""
        v = self.vault(vault)
        return self.fact_from_row(v, self.fact_row(v, ref), fresh=True)

    def fact_list(
        self,
        fact_type: str | None = None,
        tag: str | None = None,
        scope: str | None = None,
        states: tuple[str, ...] = ("active", "dormant"),
        tier_name: str | None = None,
        limit: int | None = 50,
        vault: str | None = None,
        order: str = "created",
    ) -> list[Fact]:
        """Facts, newest first (or by importance), filtered by type, tag, scope, state, tier."""
        v = self.vault(vault)
        low, high = tier_bounds(tier_name)
        q = facts_store.FactQuery(
            collection=v.name,
            types=(fmt.fact_type(fact_type),) if fact_type else (),
            states=states,
            scope=scope,
            tags=(tag,) if tag else (),
            min_importance=low,
            max_importance=high,
        )
        rows = facts_store.query(self._core.db.conn, q, order=order, limit=limit)
        return [self.fact_from_row(v, r) for r in rows]

    def recent_facts(
        self, limit: int = 20, fact_type: str | None = None, vault: str | None = None
    ) -> list[Fact]:
        """The newest live facts (for the plugin's panel and agents)."""
        return self.fact_list(fact_type=fact_type, limit=limit, vault=vault)

    def write_daily(self, v: VaultCtx, day: dt.date, index: bool = True) -> tuple[str, int, bool]:
        """Regenerate one daily note; (path, facts listed, whether the file changed)."""
        since, until = daily.day_bounds(day)
        states = ("active", "dormant", "merged", "archived")
        q = facts_store.FactQuery(collection=v.name, states=states, since=since, until=until)
        rows = facts_store.query(self._core.db.conn, q)
        entries = [daily.entry_for(self.fact_from_row(v, row)) for row in rows]
        rel = daily.daily_path(v.facts_root, day)
        nxt = (day + dt.timedelta(days=1)).isoformat()
        recalls = activity.recalls(self._core.db.conn, v.name, day.isoformat(), nxt)
        if not entries and not recalls and not v.notes.exists(rel):
            return rel, 0, False  # nothing happened that day: no empty note
        changed = (
            v.notes.merge(rel, lambda old: daily.merge(old, entries, day, recalls)) is not None
        )
        if changed and index:
            self.index_generated(v, {rel})
        return rel, len(entries), changed
