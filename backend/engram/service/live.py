"""What a long-running daemon needs from the facade: its vault collection, safe note paths,
which changed files to index, and a note's metadata for the fact panel."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from engram.errors import InvalidInputError, NotFoundError
from engram.store import admin
from engram.store import links as links_store
from engram.vault.fsio import UnsafePathError, safe_join
from engram.vault.scan import hidden_or_ignored_dir

if TYPE_CHECKING:
    from engram.index import indexer
    from engram.service.collections import CollectionsService
    from engram.service.core import Core

_BAD_NAME_CHARS = re.compile(r"[^\w.-]+")
MAX_BACKLINKS = 200
MAX_PATH_CHARS = 4096
MAX_NAME_BYTES = 255
CONTEXT_CHARS = 240


class LiveService:
    """vault_collection, note_path, note_title, update_changed, expand_changes: over the
    index `core`, adding collections through `collections`, indexing with `update` (the
    facade's, which does the derived work after it)."""

    def __init__(
        self,
        core: Core,
        collections: CollectionsService,
        update: Callable[..., indexer.UpdateReport],
    ) -> None:
        self._core = core
        self._collections = collections
        self._update = update

    def vault_collection(self, folder: str | Path) -> str:
        """The collection rooted at `folder`; added (named after the folder) when there is none."""
        root = Path(folder).expanduser().resolve()
        if not root.is_dir():
            raise NotFoundError(f"{folder} is not a folder")
        for c in self._core.settings.collections:
            if c.path.expanduser().resolve() == root:
                return c.name
        base = _BAD_NAME_CHARS.sub("-", root.name).strip("-.") or "vault"
        if not base[0].isalnum():
            base = "vault-" + base
        name, n = base, 1
        while self._core.settings.collection(name):
            n += 1
            name = f"{base}-{n}"
        self._collections.collection_add(str(root), name)
        return name

    def note_path(self, collection: str, path: str) -> str:
        """A collection-relative note path, normalized; anything leaving the folder is refused."""
        if not isinstance(path, str) or not path.strip():
            raise InvalidInputError("a note path is required")
        root = self._core.require_collection(collection).path
        try:
            parts = [part.encode("utf-8") for part in path.replace("\\", "/").split("/")]
        except UnicodeEncodeError:
            raise UnsafePathError("the path is not valid Unicode") from None
        if len(path) > MAX_PATH_CHARS or any(len(part) > MAX_NAME_BYTES for part in parts):
            raise UnsafePathError("path too long for a file system")
        try:
            target = safe_join(root, path.replace("\\", "/"))
        except (OSError, ValueError) as exc:  # names the OS cannot even look up
            raise UnsafePathError(f"unusable path: {exc}") from None
        rel = target.relative_to(root.resolve()).as_posix()
        if rel == ".":
            raise UnsafePathError("the path names the vault folder itself, not a note")
        return rel

    def note_title(self, collection: str, rel: str) -> str:
        """A note's title as the index has it (frontmatter title, first heading, file name);
        the file name when the note is not indexed yet."""
        row = admin.document_by_path(self._core.db.conn, collection, rel)
        if row is not None and row["title"]:
            return str(row["title"])
        name = rel.rsplit("/", 1)[-1]
        return name[:-3] if name.lower().endswith(".md") else name

    def update_changed(
        self, collection: str, rels: Iterable[str], progress: indexer.Progress | None = None
    ) -> indexer.UpdateReport:
        """Index what changed at these paths (the watcher's and the plugin's reindex call)."""
        paths = self.expand_changes(collection, rels)
        return self._update([collection], progress=progress, only_paths={collection: paths})

    def expand_changes(self, collection: str, rels: Iterable[str]) -> set[str]:
        """The vault files to look at again for changed paths, attachments included (links
        resolve to them; the indexer picks the notes): a folder stands for what it holds on
        disk and in the index (a folder moved in or out of the vault is one event)."""
        root = self._core.require_collection(collection).path.resolve()
        conn = self._core.db.conn
        out: set[str] = set()
        for rel in rels:
            full = root / rel
            try:
                is_dir, is_file = full.is_dir(), full.is_file()
            except (OSError, ValueError):  # e.g. a name too long to look up: not on disk
                is_dir = is_file = False
            if is_dir:
                for f in full.rglob("*"):
                    sub = f.relative_to(root).as_posix()
                    if f.is_file() and _visible(sub):
                        out.add(sub)
            elif is_file and _visible(rel):
                out.add(rel)
            if not is_file:  # gone (a file or a folder): what the index knows there
                prefix = rel.strip("/")
                out.update(r["path"] for r in admin.list_documents(conn, collection, prefix))
                out.update(links_store.files_under(conn, collection, prefix))
        return out


def _visible(rel: str) -> bool:
    """Is this a path the vault shows (not in a dot-folder or tool folder, not a dot-file)?"""
    parts = rel.split("/")
    return not (any(hidden_or_ignored_dir(p) for p in parts[:-1]) or parts[-1].startswith("."))
