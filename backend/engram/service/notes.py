"""Writing notes safely: create, edit, link and delete (move is in notes_move.py).

Every operation reads the file, checks the caller's `expected_hash` (a full sha256 or a
docid prefix of at least 6 hex digits), computes the new text with the pure functions of
`vault.edit`, and either returns the diff (`dry_run`) or writes through `vault.journal.commit`
(locked, atomic, precondition re-checked, all-or-nothing). The index and the link graph are
updated for the touched paths before the method returns. See docs/notes.md.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from engram.errors import ConflictError, InvalidInputError, NotFoundError
from engram.memory import props
from engram.service.notes_base import exists, plural
from engram.store import edits as edit_store
from engram.vault import edit as text_edit
from engram.vault import journal, names, rewrite
from engram.vault.changes import FileChange, NoteChange, unified
from engram.vault.fsio import sha256_hex
from engram.vault.journal import Change
from engram.vault.names import DEFAULT_SECTION
from engram.vault.resolve import LinkIndex, link_key, resolve
from engram.vault.spans import link_spans

if TYPE_CHECKING:
    from engram.service.core import Core
    from engram.service.notes_base import NoteAccess


class NoteWriter:
    """note_create, note_edit, note_link, note_delete: over the index `core`, through the
    note `access` every write shares."""

    def __init__(self, core: Core, access: NoteAccess) -> None:
        self._core = core
        self._access = access

    def note_create(
        self,
        path: str | None = None,
        *,
        title: str | None = None,
        body: str = "",
        frontmatter: Mapping[str, Any] | None = None,
        folder: str | None = None,
        dry_run: bool = False,
        collection: str | None = None,
    ) -> NoteChange:
        """Create a note at `path` (or `folder`/`title`.md) with a body and frontmatter;
        an existing file is never overwritten (ConflictError)."""
        col = self._access.notes_collection(collection)
        if path:
            rel = names.note_file(names.check_path(path))
        elif title and title.strip():
            where = (folder or "").rstrip("/")
            rel = names.check_path(
                f"{where}/{names.from_title(title)}" if where else names.from_title(title)
            )
        else:
            raise InvalidInputError("give the new note a path or a title")
        if exists(self._access.vault_file(col, rel)):
            raise ConflictError(f"{rel} already exists", "edit it with note edit, or pick a path")
        text = _new_text(body, frontmatter)
        data = self._access.bounded(rel, text.encode("utf-8"))
        sha = sha256_hex(data)
        change = FileChange("create", rel, None, None, sha, unified(None, text, rel, rel))
        if not dry_run:
            journal.commit(col.path, [Change(rel, data, "")], f"note create {rel}")
            self._access.reindex(col, {rel})
        return NoteChange("create", col.name, rel, None, sha, dry_run, True, (change,))

    def note_edit(
        self,
        note: str,
        *,
        append: str | None = None,
        prepend: str | None = None,
        heading: str | None = None,
        section: str | None = None,
        find: str | None = None,
        replace: str | None = None,
        regex: bool = False,
        count: int = 0,
        properties: Mapping[str, Any] | None = None,
        remove_properties: Iterable[str] = (),
        expected_hash: str | None = None,
        dry_run: bool = False,
        collection: str | None = None,
    ) -> NoteChange:
        """Edit a note. Applied in this order: set `properties` / `remove_properties`
        (frontmatter, other keys untouched); `find` -> `replace` (exact, or `regex`, at most
        `count` times if > 0); `section` replaces the lines under `heading`; `prepend` /
        `append` go at the top / end of the body, or of the `heading`'s section."""
        col = self._access.notes_collection(collection)
        rel = self._access.existing_note(col, note)
        snap = self._access.snapshot(col, rel, expected_hash, editable=True)
        text = new = snap.text or ""
        removed = list(remove_properties)
        _check_edit(bool(properties or removed), append, prepend, heading, section, find, replace)
        if properties or removed:
            changes: dict[str, Any] = dict(properties or {})
            changes.update({key: props.DELETE for key in removed})
            new = props.edit(new, changes)
        replacements = None
        if find is not None and replace is not None:
            limit = self._core.settings.max_file_bytes
            new, replacements = text_edit.find_replace(new, find, replace, regex, count, limit)
        if section is not None and heading is not None:
            new = text_edit.replace_section(new, heading, section)
        in_section = heading is not None and section is None
        if prepend is not None:
            new = (
                text_edit.prepend_to_section(new, heading, prepend)
                if in_section and heading
                else text_edit.prepend(new, prepend)
            )
        if append is not None:
            new = (
                text_edit.append_to_section(new, heading, append)
                if in_section and heading
                else text_edit.append(new, append)
            )
        return self._access.write_one(col, "edit", rel, snap, text, new, dry_run, replacements)

    def note_link(
        self,
        source: str,
        target: str,
        *,
        section: str = DEFAULT_SECTION,
        display: str | None = None,
        expected_hash: str | None = None,
        dry_run: bool = False,
        collection: str | None = None,
    ) -> NoteChange:
        """Add `- [[target]]` at the end of `section` in `source` (the section is created
        when missing); nothing changes when that section already links to `target`."""
        col = self._access.notes_collection(collection)
        src = self._access.existing_note(col, source)
        dst = self._access.existing_note(col, target)
        if display is not None and (not display.strip() or re.search(r"[\[\]|\n]", display)):
            raise InvalidInputError("display text must be one line without [, ] or |")
        snap = self._access.snapshot(col, src, expected_hash, editable=True)
        text = snap.text or ""
        index = self._access.vault_index(col)
        if _section_links_to(text, section, src, dst, index):
            return NoteChange(
                "link", col.name, src, None, snap.sha256, dry_run, False,
                message=f"{src} already links to {dst} under {section!r}",
            )  # fmt: skip
        written = rewrite.link_to(dst, src, index)
        link = f"[[{written}|{display.strip()}]]" if display else f"[[{written}]]"
        new = text_edit.append_to_section(text, section, f"- {link}")
        return self._access.write_one(col, "link", src, snap, text, new, dry_run)

    def note_delete(
        self,
        note: str,
        *,
        expected_hash: str | None = None,
        dry_run: bool = False,
        collection: str | None = None,
    ) -> NoteChange:
        """Move a note (or any vault file) to the vault's `.trash/` folder, as Obsidian does;
        it is never erased. `broken_links` lists the notes whose links now point nowhere."""
        col = self._access.notes_collection(collection)
        rel = self._access.existing_note(col, note)
        snap = self._access.snapshot(col, rel, expected_hash, editable=False)
        trash = names.trash_path(rel, lambda p: exists(self._access.vault_file(col, p)))
        broken = edit_store.linking_notes(self._core.db.conn, col.name, rel, link_key(rel))
        change = FileChange(
            "trash", trash, rel, snap.sha256, snap.sha256, unified("", "", rel, trash)
        )
        if not dry_run:
            journal.commit(
                col.path, [Change(trash, None, snap.sha256, source=rel)], f"note delete {rel}"
            )
            self._access.reindex(col, {rel})
        return NoteChange(
            "delete", col.name, trash, rel, snap.sha256, dry_run, True, (change,),
            broken_links=tuple(broken),
            message=f"{rel} moved to {trash}" + (
                f"; {plural(len(broken), 'note')} still linking to it" if broken else ""
            ),
        )  # fmt: skip


def _check_edit(
    props_change: bool,
    append: str | None,
    prepend: str | None,
    heading: str | None,
    section: str | None,
    find: str | None,
    replace: str | None,
) -> None:
    """Refuse an edit that asks for nothing, or for half of a pair (find/replace,
    section/heading)."""
    if not (props_change or find is not None or section is not None) and (
        append is None and prepend is None
    ):
        raise InvalidInputError(
            "nothing to edit: give append, prepend, section, find or properties"
        )
    if (replace is None) != (find is None):
        raise InvalidInputError("find and replace go together")
    if section is not None and heading is None:
        raise InvalidInputError("section replaces the lines under a heading: give heading")


def _new_text(body: str, frontmatter: Mapping[str, Any] | None) -> str:
    text = body.replace("\r\n", "\n")
    if text and not text.endswith("\n"):
        text += "\n"
    if not frontmatter:
        return text
    if not all(isinstance(k, str) and k.strip() for k in frontmatter):
        raise InvalidInputError("frontmatter keys must be non-empty strings")
    return "---\n" + props.dump(dict(frontmatter)) + "\n---\n" + text


def _section_links_to(text: str, heading: str, source: str, target: str, index: LinkIndex) -> bool:
    """Does the section under `heading` already hold a link resolving to `target`?"""
    try:
        sec = text_edit.find_section(text, heading)
    except (NotFoundError, InvalidInputError):
        return False
    lines = text_edit.split_lines(text)
    start = sum(len(line) for line in lines[: sec.body_start])
    end = sum(len(line) for line in lines[: sec.end])
    return any(
        start <= s.start < end
        and resolve(s.link.target, source, index, markdown=s.link.kind == "markdown").path == target
        for s in link_spans(text)
    )
