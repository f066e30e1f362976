"""Memory, part 2: storing and changing facts (every write names the version it replaces)."""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any

from engram.errors import ConflictError, InvalidInputError, NotFoundError
from engram.memory import adopt, inputs, props
from engram.memory import format as fmt
from engram.memory.infer import infer_importance, infer_type
from engram.memory.inputs import check_type, check_unit, clean_names, clean_tags, plus
from engram.memory.model import (
    ARCHIVE_FOLDER,
    LIFECYCLE_STATES,
    LIVE_STATES,
    TYPE_FOLDERS,
    Fact,
    clean_line,
    file_name,
    folder_for,
    new_id,
    normalize_text,
    title_from_text,
)
from engram.memory.notes import MERGE_ATTEMPTS, NoteText
from engram.memory.ranking import next_state
from engram.memory.results import LifecycleChange, SupersedeResult
from engram.service.memory import MemoryService, VaultCtx
from engram.service.memory_follow import Planned
from engram.store import admin
from engram.store import facts as facts_store
from engram.vault.fsio import sha256_hex

if TYPE_CHECKING:
    from engram.service.core import Core

log = logging.getLogger(__name__)


class FactWriter:
    """fact add / update / archive / supersede / from-note, and the lifecycle sweep; `record`
    and `commit` are what sync's local side shares (service/sync_local.py)."""

    def __init__(self, core: Core, memory: MemoryService) -> None:
        self._core = core
        self._memory = memory
        self._follow = memory.follow_ups

    def fact_add(
        self,
        text: str,
        fact_type: str | None = None,
        title: str | None = None,
        importance: float | None = None,
        confidence: float | None = None,
        tags: Iterable[str] = (),
        entities: Iterable[str] = (),
        scope: str | None = None,
        source: str | None = None,
        created_by: str | None = None,
        supersedes: str | None = None,
        contradicts: Iterable[str] = (),
        vault: str | None = None,
    ) -> Fact:
        """Store a fact as a new note (type and importance inferred when not given)."""
        v = self._vault(vault)
        body = normalize_text(text)
        if not body:
            raise InvalidInputError("the fact's text is empty")
        kind = check_type(fact_type) if fact_type else infer_type(body)
        old = self._memory.fact_row(v, supersedes) if supersedes else None
        others = [self._memory.fact_row(v, c) for c in contradicts]
        linked, found = self._autolink(v, body, entities)
        fid, now = new_id(), self._core.clock()
        fact = Fact(
            id=fid,
            title=clean_line(title or "") or title_from_text(body),
            text=linked,
            fact_type=kind,
            timestamp=now,
            updated_at=now,
            source=source or "engram",
            created_by=created_by or "engram",
            scope=scope or "default",
            tags=clean_tags(tags),
            entities=tuple(dict.fromkeys([*clean_names(entities), *found])),
            importance=check_unit(importance, "importance", infer_importance(body, kind)),
            confidence=check_unit(confidence, "confidence", 1.0),
            supersedes=old["id"] if old else None,
            contradicts_with=tuple(dict.fromkeys(str(o["id"]) for o in others)),
        )
        rel = v.notes.free_name(folder_for(kind, v.facts_root), file_name(fact.title, fid))
        if old is None and not others:
            text = fmt.render(fact)
            planned = Planned(fid, (rel,), _sha(v, rel, text))
            stored, warnings = self._follow.write(
                v, [planned], functools.partial(v.notes.write, rel, text, "")
            )
            return _with(stored[0] or replace(fact, path=rel), warnings)
        # the new note and the notes it supersedes or contradicts change together, or none do
        edits = [(o, _contradicted_by(fid)) for o in others]
        if old is not None:
            edits.insert(0, (old, lambda f: replace(f, superseded_by=fid, lifecycle="merged")))
        self._rewrite_together(v, edits, replace(fact, path=rel))
        return self._memory.fact_get(fid, v.name)

    def fact_update(
        self,
        ref: str,
        text: str | None = None,
        title: str | None = None,
        fact_type: str | None = None,
        importance: float | None = None,
        confidence: float | None = None,
        tags: Iterable[str] | None = None,
        entities: Iterable[str] | None = None,
        scope: str | None = None,
        lifecycle: str | None = None,
        vault: str | None = None,
    ) -> Fact:
        """Change a fact's note: only the named fields; a type change moves it to its folder."""
        given = (text, title, fact_type, importance, confidence, tags, entities, scope, lifecycle)
        if all(x is None for x in given):
            raise InvalidInputError("nothing to change: give at least one field")
        v = self._vault(vault)
        row = self._memory.fact_row(v, ref)
        if lifecycle is not None and lifecycle not in LIFECYCLE_STATES:
            raise InvalidInputError(f"lifecycle must be one of {', '.join(LIFECYCLE_STATES)}")
        kind = check_type(fact_type) if fact_type else None

        def mutate(f: Fact) -> Fact:
            out = f
            if entities is not None:
                out = replace(out, entities=clean_names(entities))
            if text is not None:
                body = normalize_text(text)
                if not body:
                    raise InvalidInputError("the fact's text is empty")
                linked, found = self._autolink(v, body, out.entities)
                out = replace(out, text=linked, entities=plus(out.entities, *found))
            if tags is not None:
                out = replace(out, tags=clean_tags(tags))
            fields: dict[str, Any] = {
                "title": clean_line(title) if title else None,
                "fact_type": kind,
                "importance": None
                if importance is None
                else check_unit(importance, "importance", 0),
                "confidence": None
                if confidence is None
                else check_unit(confidence, "confidence", 0),
                "scope": scope,
                "lifecycle": lifecycle,
            }
            return replace(out, **{k: val for k, val in fields.items() if val is not None})

        folder = str(PurePosixPath(row["path"]).parent)
        move = None
        if kind and folder == folder_for(row["fact_type"], v.facts_root):
            move = folder_for(kind, v.facts_root)
        return self._rewrite(v, row, mutate, move_to=move)

    def fact_archive(self, ref: str, prune: bool = False, vault: str | None = None) -> Fact:
        """Archive a fact (it stays where it is); `prune` also moves it to the archive folder."""
        v = self._vault(vault)
        row = self._memory.fact_row(v, ref)
        state = "pruned" if prune else "archived"
        move = None
        if prune:
            move = f"{v.facts_root}/{ARCHIVE_FOLDER}/{TYPE_FOLDERS.get(row['fact_type'], 'facts')}"
        return self._rewrite(v, row, lambda f: replace(f, lifecycle=state), move_to=move)

    def fact_supersede(
        self,
        ref: str,
        text: str | None = None,
        by: str | None = None,
        vault: str | None = None,
        **fields: Any,
    ) -> SupersedeResult:
        """Replace a fact by a new one (`text`) or an existing one (`by`); both notes say so.

        A new fact inherits the old one's type, tags, entities and scope unless `fields`
        gives them (given ones win)."""
        v = self._vault(vault)
        old_row = self._memory.fact_row(v, ref)
        if (text is None) == (by is None):
            raise InvalidInputError("give either the new fact's text or --by ID, not both")
        if text is not None:
            old = self._memory.fact_from_row(v, old_row, fresh=True)
            inherited = {
                "fact_type": old.fact_type,
                "tags": old.tags,
                "entities": old.entities,
                "scope": old.scope,
            }
            for key, value in inherited.items():
                if not fields.get(key):  # None or empty: not given
                    fields[key] = value
            new = self.fact_add(text, supersedes=old_row["id"], vault=v.name, **fields)
        else:
            if any(fields.values()):
                raise InvalidInputError(
                    "type, tags, entities and scope are for a new fact's TEXT, not --by"
                )
            new_row = self._memory.fact_row(v, str(by))
            if new_row["id"] == old_row["id"]:
                raise InvalidInputError("a fact cannot supersede itself")
            new_id = str(new_row["id"])
            new = self._rewrite_together(
                v,
                [
                    (new_row, lambda f: replace(f, supersedes=old_row["id"])),
                    (old_row, lambda f: replace(f, superseded_by=new_id, lifecycle="merged")),
                ],
            )[0]
        return SupersedeResult(self._memory.fact_get(old_row["id"], v.name), new)

    def fact_from_note(
        self, path: str, selection: str | None = None, vault: str | None = None, **fields: Any
    ) -> Fact:
        """A fact from a selection of a note (a new fact citing it), or the whole note
        (the note itself becomes a fact: properties added, its text untouched)."""
        v = self._memory.vault(vault)
        rel = v.notes.relative(path)
        note = v.notes.read(rel)
        if note is None:
            raise NotFoundError(f"no note {rel} in vault {v.name}")
        if selection is not None and selection.strip():
            link = rel[:-3] if rel.endswith(".md") else rel
            fields.setdefault("source", f"[[{link}]]")
            return self.fact_add(selection, vault=v.name, **fields)
        self._memory.index(v, {rel})
        doc = admin.document_by_path(self._core.db.conn, v.name, rel)
        if doc is not None and (row := facts_store.by_doc(self._core.db.conn, int(doc["id"]))):
            return self._memory.fact_from_row(v, row, fresh=True)
        data, body = props.read(note.text)
        if data is None:
            raise InvalidInputError(f"{rel}: the frontmatter is not valid YAML; fix it first")
        if not body.strip():
            raise InvalidInputError(f"{rel} is empty: write the fact first")
        title = str(doc["title"]) if doc is not None else PurePosixPath(rel).stem
        kind = check_type(fields["fact_type"]) if fields.get("fact_type") else None
        if kind:  # the one field that applies to a whole note
            data = {**data, "factType": kind}
        changes = adopt.adoption_changes(data, body, rel, title, self._core.clock())
        if kind:
            changes["factType"] = kind
        v.notes.write(rel, props.edit(note.text, changes), note.sha256, note.bom)
        self._memory.index(v, {rel})  # a person's words: edits stay theirs (lastEditedBy: human)
        return self._memory.fact_get(rel, v.name)

    def fact_sweep(self, dry_run: bool = False, vault: str | None = None) -> list[LifecycleChange]:
        """Move idle facts active → dormant → archived (and recalled ones back to active)."""
        v = self._vault(vault)
        cfg, now = self._core.settings.memory, self._core.clock()
        q = facts_store.FactQuery(collection=v.name, states=LIVE_STATES)
        changes = []
        for row in facts_store.query(self._core.db.conn, q):
            touched = [fmt.to_time(row["updated_at"]), fmt.to_time(row["last_access"])]
            last = max(t for t in touched if t is not None)
            tier_name = "structural" if row["importance"] >= 0.8 else "other"
            nxt = next_state(
                row["lifecycle"],
                tier_name,
                last,
                now,
                cfg.dormant_after_days,
                cfg.archive_after_days,
            )
            if nxt is None:
                continue
            changes.append(LifecycleChange(row["id"], row["path"], row["lifecycle"], nxt))
            if not dry_run:
                done = self._rewrite(v, row, _set_state(nxt), touch=False)
                for warning in done.warnings:  # a change has no room for them: said here
                    log.warning("%s: %s", row["path"], warning)
        return changes

    def _rewrite(
        self,
        v: VaultCtx,
        row: Any,
        mutate: Callable[[Fact], Fact],
        move_to: str | None = None,
        touch: bool = True,
    ) -> Fact:
        """Apply `mutate` to a fact note, keeping every property and byte it does not change.

        The write names the hash of the version read: a concurrent edit gets a conflict copy.
        """
        e = self._edit(v, row, mutate, move_to, touch)
        if isinstance(e, Fact):
            return e
        sha, write = e.note.sha256, _nothing  # only the follow-ups
        if e.text != e.note.text or e.where != e.rel:
            sha = _sha(v, e.rel, e.text, e.note.bom)
            write = functools.partial(
                v.notes.write, e.rel, e.text, e.note.sha256, e.note.bom, to=e.where
            )
        planned = Planned(e.fact.id, tuple(dict.fromkeys((e.where, e.rel))), sha)
        found, warnings = self._follow.write(v, [planned], write)
        return _with(found[0] or replace(e.fact, path=e.where), warnings)

    def _rewrite_together(
        self,
        v: VaultCtx,
        edits: list[tuple[Any, Callable[[Fact], Fact]]],
        created: Fact | None = None,
    ) -> list[Fact]:
        """`_rewrite` several fact notes (and create `created`) in one all-or-nothing write;
        a note someone changed meanwhile is read again and the write made again."""
        for _ in range(MERGE_ATTEMPTS):
            planned = [self._edit(v, row, mutate) for row, mutate in edits]
            by_fact = [
                (e.fact.id, v.notes.change(e.rel, e.text, e.note.sha256, e.note.bom))
                for e in planned
                if isinstance(e, _Edit) and e.text != e.note.text
            ]
            if created is not None:
                by_fact.append((created.id, v.notes.change(created.path, fmt.render(created), "")))
            plan = [Planned(fid, (c.path,), sha256_hex(c.data or b"")) for fid, c in by_fact]
            changes = [c for _, c in by_fact]
            try:
                found, warnings = self._follow.write(
                    v,
                    plan,
                    functools.partial(v.notes.commit, changes, f"fact write ({len(plan)} notes)"),
                )
            except ConflictError:
                continue
            break
        else:
            raise ConflictError("the notes keep changing; nothing was written, try again")
        by_id = {f.id: f for f in found if f is not None}
        return [
            _with(by_id.get(e.fact.id, replace(e.fact, path=e.rel)), warnings)
            if isinstance(e, _Edit)
            else _with(e, warnings)
            for e in planned
        ]

    def _edit(
        self,
        v: VaultCtx,
        row: Any,
        mutate: Callable[[Fact], Fact],
        move_to: str | None = None,
        touch: bool = True,
    ) -> _Edit | Fact:
        """The new text of a fact note (or the fact, when nothing would change)."""
        rel = str(row["path"])
        note = v.notes.read(rel)
        if note is None:
            raise NotFoundError(f"{rel} is gone from the vault; run engram update")
        data, body = props.read(note.text)
        if data is None:
            raise InvalidInputError(f"{rel}: the frontmatter is not valid YAML; fix it first")
        current = fmt.from_props(data, body, rel)
        current = replace(current, id=current.id or str(row["id"]))
        new = mutate(current)
        moving = move_to is not None and str(PurePosixPath(rel).parent) != move_to
        if new == current and not moving:
            return self._memory.fact_get(current.id, v.name)
        if new != current:
            new = replace(new, last_edited_by="system")
            if touch:
                new = replace(new, updated_at=self._core.clock())
        text = props.edit(note.text, fmt.changes_for(new, data))
        if new.text != current.text:
            text = fmt.with_body(text, new.text)
        where = v.notes.destination(rel, move_to) if moving and move_to else rel
        return _Edit(rel, where, new, note, text)

    def commit(self, v: VaultCtx, rels: set[str], fact_id: str, sha: str) -> None:
        """Index notes Engram just wrote, remembering the hash so it is not taken for a
        person's edit (sync's local side)."""
        self._follow.index(v, [Planned(fact_id, tuple(sorted(rels)), sha)])

    def record(self, v: VaultCtx, *facts: Fact) -> tuple[str, ...]:
        """Keep the ledger lines and the daily notes of the facts' days in step with them;
        never raises: what failed comes back as warnings and is done later."""
        return self._follow.record(v, *facts)

    def _vault(self, vault: str | None) -> VaultCtx:
        """The vault a write acts on, once what earlier writes left undone is done."""
        v = self._memory.vault(vault)
        self._memory.heal(v)
        return v

    def _autolink(
        self, v: VaultCtx, text: str, entities: Iterable[str]
    ) -> tuple[str, tuple[str, ...]]:
        """Link the first mention of each vault note, alias or known entity in `text`."""
        conn = self._core.db.conn
        known = [fmt.link_name(e) for e in facts_store.entity_values(conn, v.name)]
        link = inputs.linker(
            facts_store.note_names(conn, v.name),
            [*known, *clean_names(entities)],
            (v.facts_root + "/", v.templates + "/"),
        ).link(text)
        return link.text, tuple(dict.fromkeys(x.target for x in link.links))


@dataclass(frozen=True)
class _Edit:
    """A fact note's planned new text: where it is, where it goes, the fact it will say."""

    rel: str
    where: str
    fact: Fact
    note: NoteText
    text: str


def _sha(v: VaultCtx, rel: str, text: str, bom: bool = False) -> str:
    """The hash a note will have once `text` is written (size checked as the write does)."""
    return sha256_hex(v.notes.change(rel, text, "", bom).data or b"")


def _with(fact: Fact, warnings: Sequence[str]) -> Fact:
    """The fact a write returns, with what failed after it was stored."""
    return replace(fact, warnings=tuple(warnings)) if warnings else fact


def _nothing() -> object:
    """A write with nothing to write (only the follow-ups)."""
    return None


def _contradicted_by(fid: str) -> Callable[[Fact], Fact]:
    return lambda f: replace(f, contradicts_with=plus(f.contradicts_with, fid))


def _set_state(state: str) -> Callable[[Fact], Fact]:
    return lambda f: replace(f, lifecycle=state)
