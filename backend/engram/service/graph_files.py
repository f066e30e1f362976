"""The graph index file, its exports, typed neighbours, and Obsidian's graph colours: a small
service composed into `Engram` (it receives what it needs; nothing private of the facade)."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from time import monotonic
from typing import TYPE_CHECKING, Any

from engram.codec import arg
from engram.errors import InvalidInputError
from engram.graph import colours
from engram.graph import graph_index as gi
from engram.memory.model import ARCHIVE_FOLDER, DAILY_FOLDER, LEDGER_FOLDER, TYPE_FOLDERS
from engram.service.tags import spellings
from engram.store import graph as store
from engram.store import tags as store_tags
from engram.store.tags import note_tags
from engram.vault.atomic import write_file, write_if_changed
from engram.vault.fsio import UnsafePathError, safe_join, sha256_hex

if TYPE_CHECKING:
    from engram.config import Settings
    from engram.service.memory import VaultCtx
    from engram.store.db import Database

log = logging.getLogger(__name__)

INDEX_FILE = ".engram/graph-index.json"
PARTS_DIR = ".engram/graph-index"
NOTES_PER_PART = 500
MAX_PARTS = 1024
HEAD_MAX_BYTES = 64 * 1024  # the head of MAX_PARTS parts is about 30 KB
DEFER_FACTOR = 10  # with `defer`, a file is rebuilt at most once per 10 x its rebuild time
FORMATS = ("json", "graphml")
# a facts folder, or a vault folder of that name, gives its notes' type
FOLDER_TYPES = {
    "decisions": "decision",
    "lessons": "lesson",
    "projects": "project",
    "people": "person",
    "commitments": "commitment",
    "preferences": "preference",
    "handoffs": "handoff",
    "observations": "observation",
    "facts": "fact",
    "feelings": "feeling",
    DAILY_FOLDER: "daily",
    LEDGER_FOLDER: "ledger",
    ARCHIVE_FOLDER: "archive",
}
COLOUR_FOLDERS = tuple(dict.fromkeys(TYPE_FOLDERS.values()))


@dataclass(frozen=True)
class ColourGroup:
    """A colour group `graph colours` adds: its query and its colour as `#rrggbb`."""

    query: str
    rgb: str


@dataclass(frozen=True)
class ColourPlan:
    """What `graph colours` adds to graph.json (and whether it wrote it)."""

    path: str  # vault-relative
    added: tuple[ColourGroup, ...]
    present: int = arg(wire="alreadyThere")  # groups of ours already there
    written: bool = arg()


@dataclass(frozen=True)
class GraphExport:
    """`graph export`: the typed graph's text, or the file it was written to."""

    format: str
    text: str | None  # None when written to `file`
    file: str | None = None


@dataclass(frozen=True)
class TypedNeighborhood:
    """`graph neighbors --edge-type`: the note and what its typed edges reach."""

    collection: str
    path: str = arg(wire="note")
    depth: int = arg()
    direction: str = arg()
    edge_types: tuple[str, ...] = arg()
    neighbors: tuple[gi.TypedNeighbor, ...] = arg()


def part_count(notes: int, now: int | None) -> int:
    """How many parts the graph file of a vault of `notes` notes has: about one per
    NOTES_PER_PART notes, a power of two; the count it has (`now`) is kept until the vault
    is four times larger or smaller, so a vault that grows is not cut again at every note."""
    ideal = 1
    while ideal * NOTES_PER_PART < notes and ideal < MAX_PARTS:
        ideal *= 2
    return now if now is not None and ideal // 4 <= now <= ideal * 4 else ideal


def recounted(marks: Iterable[tuple[str, str, int]]) -> set[str]:
    """The tag roots (first levels) whose votes `marks` may have changed: those a `t` mark
    names, and those of a tag row (key, note, line, spelling) inserted and deleted a different
    number of times (an edited note's unchanged tags are deleted and inserted once each)."""
    roots = {_root(key) for kind, key, _ in marks if kind == "t"}
    net: dict[str, int] = {}
    for kind, key, n in marks:
        if kind in ("+", "-"):
            net[key] = net.get(key, 0) + (n if kind == "+" else -n)
    return roots | {_root(key.split("\x1f")[0]) for key, count in net.items() if count}


def _root(key: str) -> str:
    return key.split("/")[0]


def _head(collection: str, count: int) -> str:
    """graph-index.json: the format's version and the parts to read (docs/graph.md)."""
    parts = [f"graph-index/{i:04d}.json" for i in range(count)]
    head = {"version": gi.VERSION_PARTS, "collection": collection}
    return json.dumps(head | {"edgeTypes": list(gi.EDGE_TYPES), "parts": parts}, indent=1) + "\n"


def _part_file(root: Path, number: int) -> Path:
    return safe_join(root, f"{PARTS_DIR}/{number:04d}.json")


def _parts_on_disk(root: Path, head: Path, collection: str) -> int | None:
    """How many parts the graph file on disk has, None when it is not whole in this format
    (missing, an older version, another collection's, not as Engram writes it, a part gone):
    then it is made again. Only a head of the size Engram writes is read."""
    try:
        if head.stat().st_size > HEAD_MAX_BYTES:
            return None
        data = json.loads(head.read_bytes())
        count = len(data["parts"])
        if not 0 < count <= MAX_PARTS or data != json.loads(_head(collection, count)):
            return None
        if all(_part_file(root, i).is_file() for i in range(count)):
            return count
    except (OSError, ValueError, KeyError, TypeError):
        pass
    return None


def type_of(facts_root: str | None) -> Callable[[str, str], str]:
    """A note's type: its fact type's folder, else a known folder on its path, else note."""

    def kind(path: str, fact_type: str) -> str:
        if fact_type:
            return FOLDER_TYPES.get(TYPE_FOLDERS.get(fact_type, ""), fact_type)
        parts = [p.lower() for p in PurePosixPath(path).parts[:-1]]
        if facts_root and path.startswith(facts_root + "/"):
            parts = [p.lower() for p in PurePosixPath(path[len(facts_root) + 1 :]).parts[:-1]]
        for part in parts:
            if part in FOLDER_TYPES:
                return FOLDER_TYPES[part]
        return "note"

    return kind


class GraphFiles:
    """graph-index.json, exports, typed neighbours, graph view colours."""

    def __init__(
        self,
        db: Callable[[], Database],
        settings: Callable[[], Settings],
        collection: Callable[[str | None, str | None], str],
        note_path: Callable[[str, str], str],
        vault: Callable[[str | None], VaultCtx],
    ) -> None:
        self._db = db
        self._settings = settings
        self._collection = collection
        self._note_path = note_path
        self._vault = vault
        self._built: dict[str, tuple[int, ...]] = {}  # index generation each file was made at
        # The daemon sets `defer`: a file is then rebuilt at most once per DEFER_FACTOR times
        # what its last rebuild took, the changes in between written by `flush_due` (a
        # 100,000-note vault's file takes ~20 s to rebuild; a burst of saves must not pay
        # that for each). One-off commands always write it at once.
        self.defer = False
        self._cost: dict[str, float] = {}  # seconds the last rebuild of each file took
        self._done: dict[str, float] = {}  # when it finished (monotonic)
        self._stale: set[str] = set()

    def build(self, collection: str | None = None) -> gi.GraphIndex:
        """The typed graph of a collection, from the index."""
        name = self._collection(collection, None)
        with self._db().read() as conn:
            return self._graph(conn, name, None, spellings(note_tags(conn, (name,))))

    def _graph(
        self, conn: Any, name: str, ids: list[int] | None, names: dict[str, str]
    ) -> gi.GraphIndex:
        """The typed graph of the notes `ids` of a collection (all: None) and of the links
        written in them; `names` holds the name of each of their tags, by key."""
        vault = self._settings().vault(name)
        tags = sorted({(d, names[k]) for d, k in store_tags.doc_tags(conn, name, ids) if k})
        return gi.build(
            name,
            store.typed_documents(conn, name, ids),
            store.typed_links(conn, name, ids),
            tags,
            type_of(vault.facts_root if vault else None),
            store.fact_paths(conn, name),
        )

    def export(
        self, fmt: str = "json", collection: str | None = None, output: str | None = None
    ) -> GraphExport:
        """The typed graph as JSON (the graph-index.json format) or GraphML text; with
        `output`, written atomically to that file anywhere (not a note: no precondition)."""
        if fmt not in FORMATS:
            raise InvalidInputError(f"--format must be one of {', '.join(FORMATS)}")
        index = self.build(collection)
        text = index.to_json() if fmt == "json" else index.to_graphml()
        if output is None:
            return GraphExport(fmt, text)
        path = Path(output).expanduser()
        write_file(path, text.encode("utf-8"))
        return GraphExport(fmt, None, str(path))

    def due(self) -> float | None:
        """Seconds until a deferred rebuild is due (0: now), None when none waits."""
        stale = tuple(self._stale)  # the event loop asks while the writer thread may add
        if not stale:
            return None
        now = monotonic()
        return max(0.0, min(self._next(name) - now for name in stale))

    def flush_due(self) -> list[str]:
        """Rebuild the deferred files whose time has come; the paths written."""
        now = monotonic()
        ready = [name for name in self._stale if self._next(name) <= now]
        self._stale -= set(ready)
        return self.refresh(ready, defer=False)

    def _next(self, name: str) -> float:
        return self._done.get(name, 0.0) + DEFER_FACTOR * self._cost.get(name, 0.0)

    def refresh(self, collections: Iterable[str], defer: bool | None = None) -> list[str]:
        """Bring `<vault>/.engram/graph-index.json` and its parts up to date for each vault
        among `collections` whose graph changed; the paths written. Deferred (see `defer`)
        when one was rewritten too recently for what that cost."""
        written: list[str] = []
        settings = self._settings()
        defer = self.defer if defer is None else defer
        for name in collections:
            if defer and self._next(name) > monotonic():
                self._stale.add(name)
                continue
            self._stale.discard(name)
            col = settings.collection(name)
            conn = self._db().conn
            if col is None or settings.vault(name) is None:  # only vaults keep the file
                if col is not None and store.graph_file_kept(conn, name):
                    with self._db().write() as conn:
                        store.forget(conn, name)
                continue
            marks = store.graph_dirty(conn, name)
            started = monotonic()
            try:
                root = Path(col.path)
                head = safe_join(root, INDEX_FILE)
                kept = store.graph_file_kept(conn, name)
                count = _parts_on_disk(root, head, name) if kept else None
                if count is not None and not marks:
                    continue  # nothing changed since it was written
                want = part_count(store.note_count(conn, name), count)
                if count != want:
                    if not kept:  # changes are marked from here on: none is missed
                        with self._db().write() as conn:
                            store.keep_graph_file(conn, name)
                    written += self._write_whole(name, root, head, want)
                else:
                    written += self._write_changed(name, root, count, marks)
            except UnsafePathError as exc:  # a symlink out of the vault: neither read nor written
                log.warning("graph-index.json not written: %s", exc.message)
                continue
            with self._db().write() as conn:
                store.clear_graph_dirty(conn, name, marks)
            self._done[name] = monotonic()
            self._cost[name] = self._done[name] - started
        return written

    def _write_whole(self, name: str, root: Path, head: Path, count: int) -> list[str]:
        """Write every part and the head file listing them; drop parts of another count."""
        conn = self._db().conn
        names = spellings(note_tags(conn, (name,)))
        parts = gi.split(self._graph(conn, name, None, names), count)
        # no head while the parts are rewritten: a crash now leaves the file to be made whole
        # again, never parts of two cuts listed as one
        head.unlink(missing_ok=True)
        written = self._write_parts(name, root, parts, range(count))
        keep = {_part_file(root, i).name for i in range(count)}
        for old in safe_join(root, PARTS_DIR).glob("*.json"):
            if old.name not in keep:
                old.unlink(missing_ok=True)
        if write_if_changed(head, [_head(name, count).encode("utf-8")]):
            written.append(str(head))
        with self._db().write() as conn:
            store.set_tag_names(conn, name, names)
        return written

    def _write_changed(
        self, name: str, root: Path, count: int, marks: list[tuple[str, str, int]]
    ) -> list[str]:
        """Rewrite the parts holding what `marks` name: the notes changed, those citing a
        changed fact, and those carrying a tag whose name changed."""
        conn = self._db().conn
        paths = {key for kind, key, _ in marks if kind == "p"}
        paths |= store.citing(conn, name, [key for kind, key, _ in marks if kind == "f"])
        roots = recounted(marks)
        names = spellings(store_tags.tags_under(conn, name, roots))
        shown = store.tag_names(conn, name)
        under = [k for k in shown if _root(k) in roots]
        renamed = {k for k in {*names, *under} if names.get(k) != shown.get(k)}
        paths |= store.tagged(conn, name, renamed)
        todo = {gi.part_of(p, count) for p in paths}
        ids = store.documents_where(conn, name, lambda p: gi.part_of(p, count) in todo)
        keys = {k for _, k in store_tags.doc_tags(conn, name, ids)}
        names |= {k: shown[k] for k in keys if k not in names and k in shown}  # votes unchanged
        unknown = {_root(k) for k in keys if k not in names}
        names |= spellings(store_tags.tags_under(conn, name, unknown)) if unknown else {}
        parts = gi.split(self._graph(conn, name, ids, names), count)
        written = self._write_parts(name, root, parts, sorted(todo))
        recount = roots | unknown
        shown_now = {k: v for k, v in names.items() if _root(k) in recount}
        with self._db().write() as conn:
            store.set_tag_names(conn, name, shown_now, recount)
        return written

    def _write_parts(
        self, name: str, root: Path, parts: dict[int, gi.GraphIndex], numbers: Iterable[int]
    ) -> list[str]:
        written = []
        for i in numbers:
            part = parts.get(i) or gi.GraphIndex(name, (), ())
            path = _part_file(root, i)
            path.parent.mkdir(parents=True, exist_ok=True)
            if write_if_changed(path, (p.encode("utf-8") for p in part.json_pieces())):
                written.append(str(path))
        return written

    def neighbors(
        self,
        note: str,
        edge_types: Iterable[str],
        depth: int = 1,
        direction: str = "both",
        collection: str | None = None,
    ) -> TypedNeighborhood:
        """Nodes (notes, tags, unresolved targets) within `depth` edges of the chosen types."""
        types = tuple(dict.fromkeys(edge_types))
        bad = [t for t in types if t not in gi.EDGE_TYPES]
        if bad or not types:
            raise InvalidInputError(
                f"edge type {bad[0] if bad else ''!r} is not one of {', '.join(gi.EDGE_TYPES)}"
            )
        if direction not in ("both", "out", "in"):
            raise InvalidInputError("direction must be one of both, out, in")
        if depth < 1:
            raise InvalidInputError("depth must be 1 or more")
        name = self._collection(collection, note)
        path = self._note_path(note, name)
        found = gi.neighbors(self.build(name), gi.note_id(path), depth, types, direction)
        return TypedNeighborhood(name, path, depth, direction, types, tuple(found))

    def colours(self, write: bool = False, vault: str | None = None) -> ColourPlan:
        """Colour groups per facts folder for Obsidian's graph view; previewed unless `write`."""
        v = self._vault(vault)
        rel = f"{v.config_dir}/graph.json"
        path = safe_join(v.root, rel)
        try:
            data = path.read_bytes()
            text: str | None = data.decode("utf-8")
            expected = sha256_hex(data)
        except FileNotFoundError:
            text, expected = None, ""
        except UnicodeDecodeError:
            raise InvalidInputError(f"{rel} is not UTF-8; not touched") from None
        wanted = colours.folder_groups(v.facts_root, COLOUR_FOLDERS)
        todo = colours.missing(text, wanted)
        new = colours.add(text, todo)
        if write and todo:
            write_file(path, new.encode("utf-8"), expected)  # ConflictError if it changed
        added = tuple(ColourGroup(g.query, f"#{g.rgb:06x}") for g in todo)
        return ColourPlan(rel, added, len(wanted) - len(todo), write and bool(todo))
