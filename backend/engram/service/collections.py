"""Collections and contexts (qmd semantics), kept in the config file."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engram.config import DEFAULT_PATTERN, Collection, normalize_prefix
from engram.errors import ConflictError, InvalidInputError, NotFoundError
from engram.store import admin
from engram.store import documents as docs
from engram.store import graph as graph_store

if TYPE_CHECKING:
    from engram.service.core import Core

_NAME = re.compile(r"^[\w][\w.-]*$")
URI_PREFIX = "engram://"


@dataclass(frozen=True)
class PrefixContext:
    """A context text of a collection and the path prefix it applies to."""

    prefix: str
    text: str


@dataclass(frozen=True)
class CollectionInfo:
    """A collection's settings and document count; `contexts` only when one collection is
    shown (None otherwise)."""

    name: str
    path: str
    pattern: str
    ignore: tuple[str, ...]
    documents: int
    last_indexed: str | None
    contexts: tuple[PrefixContext, ...] | None = None


@dataclass(frozen=True)
class ListedFile:
    """An indexed file as `engram ls COLLECTION[/PATH]` lists it."""

    docid: str
    collection: str
    path: str
    title: str
    size: int
    date: str | None
    indexed_at: str


@dataclass(frozen=True)
class Listing:
    """`engram ls`: the collections (no target), or the files under a target (`--json`
    prints one list of either)."""

    collections: tuple[CollectionInfo, ...] = ()
    files: tuple[ListedFile, ...] = ()


@dataclass(frozen=True)
class ContextEntry:
    """A context text and where it applies."""

    target: str  # "/" for global, else engram://collection/prefix
    text: str


class CollectionsService:
    """collection add/list/remove/rename/show, ls, context add/list/rm: over the index
    `core` (its settings, config edits and database)."""

    def __init__(self, core: Core) -> None:
        self._core = core

    def collection_add(
        self,
        path: str,
        name: str | None = None,
        mask: str | None = None,
        ignore: tuple[str, ...] = (),
    ) -> CollectionInfo:
        """Register a folder as a collection (not yet indexed: call update)."""
        root = Path(path).expanduser().resolve()
        if not root.is_dir():
            raise NotFoundError(f"{path} is not a folder")
        name = name or root.name
        refuse_overlap(root, self._core.settings.collections)
        if not _NAME.match(name):
            raise InvalidInputError(f"collection name {name!r}: use letters, digits, - _ .")
        if self._core.settings.collection(name):
            raise ConflictError(
                f"a collection named {name!r} already exists",
                "pick another --name, or remove it first",
            )

        def change(raw: dict[str, Any]) -> None:
            spec: dict[str, Any] = {"path": str(root), "pattern": mask or DEFAULT_PATTERN}
            if ignore:
                spec["ignore"] = list(ignore)
            raw.setdefault("collections", {})
            raw["collections"] = {**(raw["collections"] or {}), name: spec}

        self._core.edit_config(change)
        return self.collection_show(name)

    def collection_list(self) -> list[CollectionInfo]:
        """Every collection with its document count."""
        counts = admin.collection_counts(self._core.db.conn)
        return [_info(c, counts.get(c.name, (0, None))) for c in self._core.settings.collections]

    def collection_show(self, name: str) -> CollectionInfo:
        """One collection's settings, contexts and counts."""
        col = self._core.require_collection(name)
        info = _info(col, admin.collection_counts(self._core.db.conn).get(name, (0, None)))
        return replace(info, contexts=tuple(PrefixContext(p, t) for p, t in col.contexts))

    def collection_remove(self, name: str) -> int:
        """Forget a collection and drop its documents from the index; return how many."""
        self._core.require_collection(name)
        self._core.edit_config(lambda raw: raw["collections"].pop(name, None))
        with self._core.db.write() as conn:
            removed = docs.delete_documents(conn, admin.document_ids(conn, name))
            graph_store.forget(conn, name)
            return removed

    def collection_rename(self, old: str, new: str) -> None:
        """Rename a collection in the config and the index."""
        self._core.require_collection(old)
        if not _NAME.match(new):
            raise InvalidInputError(f"collection name {new!r}: use letters, digits, - _ .")
        if self._core.settings.collection(new):
            raise ConflictError(f"a collection named {new!r} already exists")

        def change(raw: dict[str, Any]) -> None:
            raw["collections"] = {
                (new if k == old else k): v for k, v in raw["collections"].items()
            }
            if old in (raw.get("vaults") or {}):  # a vault follows its collection
                raw["vaults"] = {(new if k == old else k): v for k, v in raw["vaults"].items()}
                if raw.get("default_vault") == old:
                    raw["default_vault"] = new

        self._core.edit_config(change)
        with self._core.db.write() as conn:
            docs.rename_collection(conn, old, new)
            graph_store.forget(conn, old)

    def ls(self, target: str | None = None) -> Listing:
        """Collections, or the indexed files under `collection[/path]`."""
        if not target:
            return Listing(collections=tuple(self.collection_list()))
        target = target.removeprefix(URI_PREFIX)
        name, _, prefix = target.partition("/")
        self._core.require_collection(name)
        rows = admin.list_documents(self._core.db.conn, name, prefix.strip("/"))
        return Listing(
            files=tuple(
                ListedFile(
                    r["hash"][:6],
                    name,
                    r["path"],
                    r["title"],
                    r["size"],
                    r["doc_date"],
                    r["indexed_at"],
                )
                for r in rows
            )
        )

    def context_add(self, target: str, text: str) -> ContextEntry:
        """Attach a description to everything under a target (a path, engram:// URI or /)."""
        if not text.strip():
            raise InvalidInputError("context text is empty")
        col, prefix = self._context_target(target)

        def change(raw: dict[str, Any]) -> None:
            if col is None:
                raw["global_context"] = text
            else:
                spec = raw["collections"][col]
                ctx = spec.get("context") or {}
                spec["context"] = {**({"/": ctx} if isinstance(ctx, str) else ctx), prefix: text}

        self._core.edit_config(change)
        return ContextEntry(_target_uri(col, prefix), text)

    def context_list(self) -> list[ContextEntry]:
        """Every context, global first."""
        out = (
            [ContextEntry("/", self._core.settings.global_context)]
            if self._core.settings.global_context
            else []
        )
        for c in self._core.settings.collections:
            out += [ContextEntry(_target_uri(c.name, p), t) for p, t in c.contexts]
        return out

    def context_rm(self, target: str) -> None:
        """Remove the context set on a target."""
        col, prefix = self._context_target(target)
        entry = _target_uri(col, prefix)
        if entry not in {e.target for e in self.context_list()}:
            raise NotFoundError(
                f"no context on {entry}", [e.target for e in self.context_list()][:5]
            )

        def change(raw: dict[str, Any]) -> None:
            if col is None:
                raw.pop("global_context", None)
                return
            spec = raw["collections"][col]
            ctx = spec.get("context") or {}
            ctx = {"/": ctx} if isinstance(ctx, str) else ctx
            spec["context"] = {k: v for k, v in ctx.items() if normalize_prefix(k) != prefix}
            if not spec["context"]:
                del spec["context"]

        self._core.edit_config(change)

    def _context_target(self, target: str) -> tuple[str | None, str]:
        if target.strip() == "/":
            return None, "/"
        if target.startswith(URI_PREFIX):
            name, _, rest = target.removeprefix(URI_PREFIX).partition("/")
            self._core.require_collection(name)
            return name, normalize_prefix(rest)
        path = Path(target).expanduser().resolve()
        for c in self._core.settings.collections:
            root = c.path.resolve()
            if path == root or root in path.parents:
                return c.name, normalize_prefix(
                    path.relative_to(root).as_posix() if path != root else ""
                )
        raise NotFoundError(
            f"{target} is not inside any collection",
            [f"{URI_PREFIX}{c.name}" for c in self._core.settings.collections][:5],
        )


@dataclass(frozen=True)
class Overlap:
    """Two collections over the same notes: `inner`'s folder is, or lies inside, `outer`'s."""

    outer: str
    inner: str
    same: bool  # one folder under two names

    def describe(self) -> str:
        """One line a person can act on (doctor, status)."""
        if self.same:
            return (
                f"collections {self.outer!r} and {self.inner!r} are the same folder: every "
                f"note is indexed twice (engram collection remove {self.inner})"
            )
        return (
            f"collection {self.inner!r} lies inside collection {self.outer!r}: its notes are "
            f"indexed twice (engram collection remove {self.inner}, or add --ignore to "
            f"{self.outer!r})"
        )


def _root(c: Collection) -> Path:
    """A collection's folder with `~`, symlinks and `..` resolved."""
    try:
        return c.path.expanduser().resolve()
    except (OSError, RuntimeError):  # a symlink loop, ~user of nobody: compare as written
        return c.path


def _overlap(a: Path, b: Path) -> str | None:
    """How folder `a` stands to folder `b`: "same", "inside", "contains", or None."""
    if a == b:
        return "same"
    if b in a.parents:
        return "inside"
    if a in b.parents:
        return "contains"
    return None


def refuse_overlap(root: Path, collections: tuple[Collection, ...]) -> None:
    """Raise ConflictError when folder `root` (resolved) is, lies inside or holds the folder
    of a configured collection: its notes would be indexed, and found, twice."""
    for c in collections:
        how = _overlap(root, _root(c))
        if how == "same":
            raise ConflictError(
                f"collection {c.name!r} already exists for this folder ({_root(c)})",
                f"it is indexed already; to give it another name: engram collection rename "
                f"{c.name} NEW, or engram collection remove {c.name} first",
            )
        if how == "inside":
            raise ConflictError(
                f"{root} lies inside collection {c.name!r} ({_root(c)}): its notes are "
                "indexed already",
                f"search them with -c {c.name} and path:{root.relative_to(_root(c)).as_posix()}"
                f"/, or engram collection remove {c.name} first",
            )
        if how == "contains":
            raise ConflictError(
                f"{root} holds collection {c.name!r} ({_root(c)}): its notes would be "
                "indexed twice",
                f"engram collection remove {c.name} first, then add {root}",
            )


def overlaps(collections: tuple[Collection, ...]) -> list[Overlap]:
    """Each configured collection whose notes another one holds too, once, with the first
    such (configs written before overlaps were refused, or edited by hand)."""
    out: dict[str, Overlap] = {}
    for i, a in enumerate(collections):
        for b in collections[i + 1 :]:
            how = _overlap(_root(a), _root(b))
            found = (
                Overlap(b.name, a.name, False)
                if how == "inside"
                else Overlap(a.name, b.name, how == "same")
                if how
                else None
            )
            if found is not None and found.inner not in out:
                out[found.inner] = found
    return list(out.values())


def covering(collections: tuple[Collection, ...], prefer: str | None = None) -> str | None:
    """The collection that holds every configured collection's notes, when there is one
    (duplicates and nested folders of one vault): `prefer` if it is such, else the first."""
    roots = {c.name: _root(c) for c in collections}
    outer = [n for n, r in roots.items() if not any(o in r.parents for o in roots.values())]
    if not outer or len({roots[n] for n in outer}) != 1:
        return None
    return prefer if prefer in outer else outer[0]


def _target_uri(col: str | None, prefix: str) -> str:
    if col is None:
        return "/"
    return f"{URI_PREFIX}{col}" + ("" if prefix == "/" else prefix)


def _info(c: Any, counts: tuple[int, str | None]) -> CollectionInfo:
    return CollectionInfo(c.name, str(c.path), c.pattern, tuple(c.ignore), counts[0], counts[1])
