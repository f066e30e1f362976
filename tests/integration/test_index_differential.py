"""An index kept up to date incrementally equals an index built from scratch of the same files.

Hypothesis applies random sequences of file changes to a small vault (creates, edits, touches,
renames across folders, folder renames, deletes, attachments, fact notes; links of every kind,
to notes that exist, that appear later, with duplicate names in other folders and other case)
and brings the index up to date after each step through one of the paths the product uses:
the facade's update (`engram update`), the watcher's call for the changed paths
(`update_changed`, what `engram serve` runs), the facade's note move (which rewrites links),
a forced update (`engram update --force`), or an update interrupted halfway.
At the end, every derived table (engram.index.verify.snapshot) must equal that of a new index
built from the same folder, and the graph the facade answers from must match it too.

CI runs a fixed, derandomized set of sequences. For a longer random run:
    ENGRAM_DIFFERENTIAL_EXAMPLES=5000 python -m pytest tests/integration/test_index_differential.py
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engram import config
from engram.errors import EngramError
from engram.index import indexer, links, resolver, verify
from engram.models.fake import FakeEmbedder
from engram.service import Engram

EXAMPLES = int(os.environ.get("ENGRAM_DIFFERENTIAL_EXAMPLES", "0"))
PROFILE = settings(
    max_examples=EXAMPLES or 300,
    derandomize=not EXAMPLES,  # CI: the same sequences on every run
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

FOLDERS = ("", "A/", "B/", "A/Sub/")
NAMES = ("Note", "note", "Plan", "Pricing Model", "Target")
NOTES = tuple(f + n + ".md" for f in FOLDERS for n in NAMES)
ATTACHMENTS = ("img.png", "A/img.png", "B/Spec.pdf")
NEW_FOLDERS = ("C", "B/Deep")
HEADINGS = ("Intro", "Sub: one", "Plan")
TAGS = ("#tag1", "#Tag1", "#TAG1/sub", "#t1/Sub", "#Area")

# --- what a note may say -------------------------------------------------------------------


def _target(data: st.DataObject, world: World) -> str:
    """A link target as a person would write it, mostly to a file that exists: by name, by
    path, with .md, in other case, relative; or to a missing note or an attachment."""
    kind = data.draw(st.sampled_from(("name", "path", "md", "case", "relative", "ghost", "file")))
    path = world.pick(data, NOTES, existing=data.draw(st.integers(0, 3)) > 0)
    return _spell(data, path, kind)


def _spell(data: st.DataObject, path: str, kind: str) -> str:
    stem = path[:-3].rsplit("/", 1)[-1]
    if kind == "name":
        return stem
    if kind == "path":
        return path[:-3]
    if kind == "md":
        return path
    if kind == "case":
        return path[:-3].upper()
    if kind == "relative":
        return data.draw(st.sampled_from(("./", "../"))) + stem
    if kind == "ghost":
        return data.draw(st.sampled_from(("Ghost", "A/Ghost", "Alias")))
    return data.draw(st.sampled_from(ATTACHMENTS))


def _link(data: st.DataObject, world: World) -> str:
    target = _target(data, world)
    form = data.draw(
        st.sampled_from(("wiki", "display", "heading", "block", "embed", "markdown", "self"))
    )
    if form == "display":
        return f"[[{target}|shown text]]"
    if form == "heading":
        return f"[[{target}#{data.draw(st.sampled_from((*HEADINGS, 'Missing')))}]]"
    if form == "block":
        return f"[[{target}#^{data.draw(st.sampled_from(('b1', 'zz')))}]]"
    if form == "embed":
        return f"![[{target}]]"
    if form == "markdown":
        dest = target if "." in target.rsplit("/", 1)[-1] else target + ".md"
        return f"[text]({dest.replace(' ', '%20')})"
    if form == "self":
        return f"[[#{data.draw(st.sampled_from(HEADINGS))}]]"
    return f"[[{target}]]"


def _note(data: st.DataObject, world: World, first_link: str = "") -> str:
    """A note's text: maybe frontmatter (tags, aliases, a link, a fact), headings, links,
    tags, a block id and a field."""
    props = []
    if data.draw(st.booleans()):  # tags differ in case and nest: one tag each way, as Obsidian
        props.append(f"tags: [{data.draw(st.sampled_from(('t1', 'T1')))}, area/t2]")
    if data.draw(st.booleans()):
        props.append("aliases: [Alias, Home]")
    if data.draw(st.integers(0, 3)) == 0:
        props.append(f'related: "[[{_target(data, world)}]]"')
    if data.draw(st.integers(0, 2)) == 0:
        world.facts += 1  # a new id each time: two notes never claim the same fact
        props += ["factType: decision", f"id: fact{world.facts:04d}"]
    lines = ["---", *props, "---"] if props else []
    if data.draw(st.booleans()):
        lines.append(f"# {data.draw(st.sampled_from((*HEADINGS, 'Target', 'Note')))}")
    if data.draw(st.booleans()):
        lines.append(f"## {data.draw(st.sampled_from(HEADINGS))}")
    links = [first_link] if first_link else []
    links += [_link(data, world) for _ in range(data.draw(st.integers(0, 4)))]
    lines.append("Text " + " and ".join(links) + " " + data.draw(st.sampled_from(TAGS)))
    if data.draw(st.booleans()):
        lines.append("A paragraph to point at. ^b1")
    if data.draw(st.booleans()):
        lines.append("status:: open")
    return "\n".join(lines) + "\n"


# --- the vault and its changes -------------------------------------------------------------


@dataclass
class World:
    """The vault folder, the facade over its incremental index, and what changed since the
    index was last brought up to date (the paths a watcher would report)."""

    root: Path
    engram: Engram
    changed: set[str]
    facts: int = 0

    def pick(self, data: st.DataObject, pool: tuple[str, ...], existing: bool) -> str:
        """A path of the pool: one that exists (when asked and there is one), or any."""
        there = sorted(p for p in pool if self.exists(p))
        return data.draw(st.sampled_from(there if existing and there else pool))

    def write(self, rel: str, text: str | bytes) -> None:
        self._mkdirs(rel)
        path = self.root / rel
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8")
        self.changed.add(rel)

    def rename(self, src: str, dst: str) -> None:
        self._mkdirs(dst)
        (self.root / src).rename(self.root / dst)  # keeps the modification time, as mv does
        self.changed.update((src, dst))

    def delete(self, rel: str) -> None:
        (self.root / rel).unlink()
        self.changed.add(rel)

    def _mkdirs(self, rel: str) -> None:
        parts = rel.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            folder = "/".join(parts[:i])
            if not (self.root / folder).is_dir():
                (self.root / folder).mkdir()
                self.changed.add(folder)

    def exists(self, rel: str) -> bool:
        return (self.root / rel).exists()


def _step(world: World, data: st.DataObject) -> None:
    """One change to the vault's files."""
    kind = data.draw(
        st.sampled_from(
            ("write", "write", "write", "touch", "rename", "relink", "delete", "attach",
             "detach", "folder")
        )
    )  # fmt: skip
    if kind == "write":
        rel = world.pick(data, NOTES, existing=data.draw(st.booleans()))
        how = data.draw(st.sampled_from(("note", "note", "broken", "binary")))
        if how == "binary":  # not a note while it stays binary, still a link target
            world.write(rel, b"%PDF-1.4\n\x00\x01 binary")
        elif how == "broken":
            world.write(rel, "---\ntitle: [unclosed\n---\n" + _note(data, world))
        else:
            world.write(rel, _note(data, world))
    elif kind == "touch":
        rel = world.pick(data, NOTES, existing=True)
        if world.exists(rel):
            st_ = (world.root / rel).stat()
            os.utime(world.root / rel, ns=(st_.st_atime_ns, st_.st_mtime_ns + 2_000_000_000))
            world.changed.add(rel)
    elif kind == "rename":
        src = world.pick(data, NOTES + ATTACHMENTS, existing=True)
        dst = data.draw(st.sampled_from(NOTES if src.endswith(".md") else ATTACHMENTS))
        if world.exists(src) and not world.exists(dst):
            world.rename(src, dst)
    elif kind == "relink":  # a rename by an app that then rewrites a note to link there
        src, dst = world.pick(data, NOTES, existing=True), data.draw(st.sampled_from(NOTES))
        if world.exists(src) and not world.exists(dst):
            world.rename(src, dst)
            kind = data.draw(st.sampled_from(("name", "path", "md", "case")))
            link = f"[[{_spell(data, dst, kind)}{data.draw(st.sampled_from(('', '#Intro')))}]]"
            world.write(world.pick(data, NOTES, existing=True), _note(data, world, link))
    elif kind in ("delete", "detach"):
        rel = world.pick(data, NOTES if kind == "delete" else ATTACHMENTS, existing=True)
        if world.exists(rel):
            world.delete(rel)
    elif kind == "attach":
        world.write(data.draw(st.sampled_from(ATTACHMENTS)), b"\x89PNG\r\n\x1a\n")
    else:  # a whole folder moves (one event per folder for a watcher)
        src = data.draw(st.sampled_from(("A", "B", "A/Sub")))
        dst = data.draw(st.sampled_from(NEW_FOLDERS))
        if (world.root / src).is_dir() and not world.exists(dst) and not dst.startswith(src):
            world.rename(src, dst)


class Interrupted(Exception):
    """Raised from an update's progress report: the process stops there (Ctrl-C, shutdown)."""


def _sync(world: World, data: st.DataObject) -> bool:
    """Bring the index up to date the way the product does, in one of its ways; False when
    the update was interrupted (what changed is still to be indexed)."""
    e = world.engram
    how = data.draw(
        st.sampled_from(
            ("update", "watcher", "watcher", "move", "move", "embed", "force", "interrupted")
        )
    )
    if how == "update":
        e.update()
    elif how == "force":
        e.update(force=True)
    elif how == "interrupted":
        stop_at = data.draw(st.integers(1, 3))
        calls = []

        def progress(done: int, total: int) -> None:
            calls.append(done)
            if len(calls) == stop_at:
                raise Interrupted

        try:
            e.update(progress=progress)
        except Interrupted:
            return False
    elif how == "watcher":
        e.update_changed("v", sorted(world.changed))
    elif how == "embed":
        e.update()
        e.embed()
    else:  # the move brings the index up to date first, then moves and rewrites links
        src = world.pick(data, NOTES + ATTACHMENTS, existing=True)
        dst = data.draw(st.sampled_from((*NOTES, "C/", "B/Deep/Moved.md")))
        try:
            e.note_move(src, dst)
        except EngramError:  # no such note, or the target exists: nothing written
            e.update()
    world.changed.clear()
    e.orphans()  # the graph is built now, and must be rebuilt when the index changes
    return True


@contextmanager
def _thresholds(small: bool) -> Iterator[None]:
    """With `small`, the code paths of big updates run on this small vault: one shared link
    index for all notes, every file listed instead of those with matching names, one note
    per committed batch."""
    saved = (resolver.SHARED_INDEX_OVER, links.ALL_FILES_OVER, indexer.BATCH_MAX)
    if small:
        resolver.SHARED_INDEX_OVER, links.ALL_FILES_OVER, indexer.BATCH_MAX = 0, 0, 1
    try:
        yield
    finally:
        resolver.SHARED_INDEX_OVER, links.ALL_FILES_OVER, indexer.BATCH_MAX = saved


@contextmanager
def _facade(tmp: Path, index: str) -> Iterator[Engram]:
    env = {
        "XDG_DATA_HOME": str(tmp / "data"),
        "XDG_CONFIG_HOME": str(tmp / "config"),
        "XDG_CACHE_HOME": str(tmp / "cache"),
    }
    e = Engram(config.resolve(env, index=index), embedder=FakeEmbedder(dim=8))
    try:
        yield e
    finally:
        e.close()


def _graph(e: Engram) -> list[tuple[Any, ...]]:
    """Each note with its backlink and link counts, from the graph the facade keeps."""
    return sorted((n.path, n.backlinks, n.links) for n in e.rank(n=1000).notes)


def fresh_drift(e: Engram, tmp: Path, root: Path) -> list[verify.Drift]:
    """How the index differs from a new index built from the same folder."""
    with _facade(tmp, "fresh") as fresh:
        fresh.init_vault(str(root), "v", index=False, template=False)
        fresh.update()
        e.embed()
        fresh.embed()
        drift = verify.compare(verify.snapshot(e.db.conn, "v"), verify.snapshot(fresh.db.conn, "v"))
        mine, theirs = _graph(e), _graph(fresh)
        if mine != theirs:
            drift.append(verify.Drift("graph", tuple(mine), tuple(theirs)))
        if e.tags() != fresh.tags():  # the spelling shown depends on every note's tags
            drift.append(verify.Drift("tag list", (e.tags(),), (fresh.tags(),)))
        return drift


@PROFILE
@given(data=st.data())
def test_incremental_index_equals_a_fresh_one(data: st.DataObject) -> None:
    with tempfile.TemporaryDirectory(prefix="engram-diff-") as name:
        tmp = Path(name)
        root = tmp / "vault"
        root.mkdir()
        with _facade(tmp, "index") as e:
            e.init_vault(str(root), "v", index=False, template=False)
            world = World(root, e, set())
            for _ in range(3):  # a few notes to start with, so links find notes
                world.write(data.draw(st.sampled_from(NOTES)), _note(data, world))
            with _thresholds(data.draw(st.booleans(), label="big-update code paths")):
                for _ in range(data.draw(st.integers(1, 4), label="steps")):
                    for _ in range(data.draw(st.integers(1, 4))):
                        _step(world, data)
                    done = _sync(world, data)
                if not done:  # the next update finishes what the interrupted one left
                    e.update()
            drift = fresh_drift(e, tmp, root)
            assert not drift, "\n".join(d.describe() for d in drift)
