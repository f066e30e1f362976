"""The graph service: link resolution after each update, and graph questions about notes.

A collection is a vault: links resolve within it, and each question is about one collection
(the only one, or the one named). The networkx graph is built once per index generation (links
and notes changed) and kept in this process, so questions after the first cost no rebuild.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from engram.errors import InvalidInputError, NotFoundError
from engram.graph.results import (
    Neighbor,
    Neighborhood,
    NoteLinks,
    NotePath,
    NoteRef,
    PathStep,
    RankedNote,
    Ranking,
    Theme,
    ThemeTag,
    UnresolvedLink,
)
from engram.service.collections import covering
from engram.service.lanes import generated_paths

if TYPE_CHECKING:
    from engram.graph.model import VaultGraph
    from engram.graph.notes import NoteFinder
    from engram.index import indexer
    from engram.search.results import SearchResult
    from engram.service.core import Core
    from engram.store.db import Database

ABOUT_HITS = 30  # search hits that seed "influential notes about X"
RANK_BY = ("influence", "bridging")
DIRECTIONS = ("both", "out", "in")
THEME_NOTES = 5
THEME_TAGS = 5


class _Vault:
    """A collection's note finder, and its graph, built on first use (backlinks, links and
    unresolved links need only the finder)."""

    def __init__(
        self, key: tuple[Any, ...], finder: NoteFinder, load: Callable[[], VaultGraph]
    ) -> None:
        self.key = key
        self.finder = finder
        self._load = load
        self._graph: VaultGraph | None = None
        self._lock = threading.Lock()

    @property
    def graph(self) -> VaultGraph:
        """The networkx graph of the collection."""
        with self._lock:
            if self._graph is None:
                self._graph = self._load()
            return self._graph


class Search(Protocol):
    """Keyword search, which seeds "influential notes about X"."""

    def __call__(
        self,
        query: str,
        n: int | None = 10,
        collections: Iterable[str] = (),
        min_score: float = 0.0,
        full: bool = False,
        filters: None = None,
        with_snippets: bool = True,
    ) -> list[SearchResult]: ...


class GraphService:
    """backlinks, links, unresolved, orphans, neighbors, path, rank, themes: over the index
    (`core`: its settings, database and collections) and keyword `search`."""

    def __init__(self, core: Core, search: Search) -> None:
        self._core = core
        self._search = search
        self._cache: dict[str, _Vault] = {}
        self._lock = threading.Lock()

    @property
    def db(self) -> Database:
        """The index (opened by the core on first use)."""
        return self._core.db

    def forget(self) -> None:
        """Drop the graphs kept in this process (the index file was replaced)."""
        with self._lock:
            self._cache.clear()

    def resolve_links(self, specs: list[indexer.CollectionSpec]) -> None:
        """Resolve the links an update left pending (see index/links.py)."""
        from engram.index import links as resolution

        # the update listed the files of each collection it indexed; no folder walk here
        found = resolution.scopes([(s.name, s.root) for s in specs], synced=True)
        resolution.refresh(self.db, found, [c.name for c in self._core.settings.collections])

    def backlinks(self, note: str, collection: str | None = None) -> NoteLinks:
        """Links to a note from the vault, each with its line and that line's text."""
        from engram.graph import links

        name, vault = self.vault_graph(collection, note)
        ref = self._find_note(name, vault, note)
        generated = generated_paths(self._core.settings, name)  # restatements, not links
        return NoteLinks(
            name, ref, tuple(links.backlinks(self.db.conn, ref.doc_id, None, generated))
        )

    def links(self, note: str, collection: str | None = None) -> NoteLinks:
        """Links written in a note, with where each resolves (None: nowhere)."""
        from engram.graph import links

        name, vault = self.vault_graph(collection, note)
        ref = self._find_note(name, vault, note)
        return NoteLinks(name, ref, tuple(links.outgoing(self.db.conn, ref.doc_id)))

    def unresolved(
        self, collection: str | None = None, subpaths: bool = False
    ) -> list[UnresolvedLink]:
        """Links to files that do not exist (with `subpaths`, also to missing headings/blocks)."""
        from engram.graph import links

        name, vault = self.vault_graph(collection)
        return links.unresolved(self.db.conn, name, subpaths, vault.finder.alias_holder)

    def orphans(self, collection: str | None = None) -> list[NoteRef]:
        """Notes with no link to or from another note (Engram's daily notes and ledger are
        not in question: their links are not counted)."""
        name, vault = self.vault_graph(collection)
        g = vault.graph
        generated = generated_paths(self._core.settings, name)
        return [
            NoteRef(g.path_of(n), g.title_of(n), n)
            for n in g.orphans()
            if not g.path_of(n).startswith(generated)
        ]

    def neighbors(
        self, note: str, depth: int = 1, collection: str | None = None, direction: str = "both"
    ) -> Neighborhood:
        """Notes up to `depth` hops from a note, following links, backlinks or both."""
        if depth < 1:
            raise InvalidInputError("depth must be 1 or more")
        if direction not in DIRECTIONS:
            raise InvalidInputError(f"direction must be one of {', '.join(DIRECTIONS)}")
        name, vault = self.vault_graph(collection, note)
        ref = self._find_note(name, vault, note)
        g = vault.graph
        found = tuple(
            Neighbor(g.path_of(n), g.title_of(n), hops, how)
            for n, hops, how in g.neighbors(ref.doc_id, depth, direction)
        )
        return Neighborhood(name, ref, depth, direction, found)

    def path(
        self, source: str, target: str, collection: str | None = None, directed: bool = False
    ) -> NotePath:
        """The shortest chain of links between two notes (either direction unless `directed`)."""
        name, vault = self.vault_graph(collection, source)
        a, b = self._find_note(name, vault, source), self._find_note(name, vault, target)
        g = vault.graph
        steps = tuple(
            PathStep(g.path_of(n), g.title_of(n), how)
            for n, how in g.shortest_path(a.doc_id, b.doc_id, directed)
        )
        return NotePath(a.path, b.path, directed, steps)

    def rank(
        self,
        about: str | None = None,
        by: str = "influence",
        n: int = 20,
        collection: str | None = None,
    ) -> Ranking:
        """The most influential (PageRank) or bridging (betweenness) notes, maybe about a query.

        With `about`, the query's keyword hits are the topic's notes: influence is PageRank
        among them weighted by relevance (VaultGraph.topic_rank), and bridging is betweenness
        within them and the notes one link away. Each note says how well it matches and how
        many of the topic's notes link to it.
        """
        if by not in RANK_BY:
            raise InvalidInputError(f"--by must be one of {', '.join(RANK_BY)}")
        name, vault = self.vault_graph(collection)
        g = vault.graph
        seeds: dict[int, float] = {}
        if about is not None:
            hits = self._search(about, n=ABOUT_HITS, collections=[name], with_snippets=False)
            seeds = {h.doc_id: h.score for h in hits if h.doc_id in g.info and h.score > 0}
            if not seeds:
                return Ranking(by, about, "no note matches the query", ())
        if by == "influence" and seeds:
            scores = g.topic_rank(seeds)
            method = f"PageRank among the {len(seeds)} notes matching the query, times relevance"
        elif by == "influence":
            scores, method = g.pagerank(), "PageRank"
        else:
            around = _around(g, seeds) if seeds else None
            scores, method = g.betweenness(around)
        ranked = sorted(scores.items(), key=lambda kv: (-kv[1], g.path_of(kv[0])))[: max(n, 0)]
        top = ranked[0][1] if ranked and ranked[0][1] > 0 else 1.0
        notes = tuple(
            RankedNote(
                i,
                g.path_of(node),
                g.title_of(node),
                round(score / top, 4),
                *g.degrees(node),
                hit=node in seeds,
                relevance=round(seeds[node], 4) if node in seeds else None,
                topic_backlinks=g.linked_from(node, seeds) if seeds else None,
            )
            for i, (node, score) in enumerate(ranked, 1)
        )
        return Ranking(by, about, method, notes, len(seeds))

    def themes(self, collection: str | None = None, min_size: int = 2) -> list[Theme]:
        """Louvain communities of linked notes, largest first, with top notes and tags."""
        from engram.service.tags import spellings
        from engram.store.tags import note_tags

        name, vault = self.vault_graph(collection)
        g = vault.graph
        groups = [c for c in g.communities() if len(c) >= max(min_size, 1)]
        pagerank = g.pagerank()
        rows = note_tags(self.db.conn, (name,))
        names = spellings(rows)  # `#Tag` and `#tag` are one tag, shown as the vault writes it most
        tags: dict[int, set[str]] = {}
        for doc_id, key, _tag, _line in rows:
            if key:
                tags.setdefault(doc_id, set()).add(names[key])
        out = []
        for i, group in enumerate(groups, 1):
            best = sorted(group, key=lambda n: (-pagerank.get(n, 0.0), g.path_of(n)))
            counts = Counter(t for n in group for t in tags.get(n, ()))
            top_tags = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:THEME_TAGS]
            notes = tuple(NoteRef(g.path_of(n), g.title_of(n), n) for n in best[:THEME_NOTES])
            tagged = tuple(ThemeTag(tag, n) for tag, n in top_tags)
            out.append(Theme(i, notes[0].title, len(group), notes, tagged))
        return out

    def graph_collection(self, collection: str | None = None, note: str | None = None) -> str:
        """The collection a graph question is about: the named one, the only one, or the one
        where `note` (an engram://collection/... URI) lives."""
        core = self._core
        if collection:
            return core.require_collection(collection).name
        if note and note.startswith("engram://"):
            return core.require_collection(note.removeprefix("engram://").partition("/")[0]).name
        names = [c.name for c in core.settings.collections]
        if len(names) == 1:
            return names[0]
        if not names:
            raise NotFoundError("no collections yet (add one with: engram collection add PATH)")
        # one vault under several names (or with a folder of it added too) has one graph
        whole = covering(core.settings.collections, core.settings.default_vault)
        if whole is not None:
            return whole
        raise InvalidInputError(
            "several collections: choose one with -c/--collection", hint=", ".join(names)
        )

    def _find_note(self, collection: str, vault: _Vault, note: str) -> NoteRef:
        """A note of the collection from a path, URI, file-system path, name, title or alias."""
        text = note.strip()
        prefix = f"engram://{collection}/"
        if text.startswith(prefix):
            text = text.removeprefix(prefix)
        elif text.startswith(("/", "~", "./", "../")) and not text.startswith("//"):
            root = self._core.require_collection(collection).path.resolve()
            try:
                full = Path(text).expanduser().resolve()
            except (OSError, RuntimeError):  # ~user of nobody here: an unknown name
                full = Path(text)
            if root in full.parents:
                text = full.relative_to(root).as_posix()
        return vault.finder.find(text)

    def vault_graph(self, collection: str | None, note: str | None = None) -> tuple[str, _Vault]:
        """The collection's name, graph and note finder, rebuilt only when the index changed."""
        from engram.graph.model import VaultGraph
        from engram.graph.notes import NoteFinder
        from engram.index import links as resolution
        from engram.store import graph as store
        from engram.store.links import pending_count

        name = self.graph_collection(collection, note)
        conn = self.db.conn
        if pending_count(conn):  # links stored before resolution existed
            cols = [(c.name, c.path) for c in self._core.settings.collections]
            resolution.refresh(self.db, resolution.scopes(cols), [c for c, _ in cols])
        generated = generated_paths(self._core.settings, name)
        key = (*resolution.generation(conn), store.note_count(conn, name), generated)

        def load() -> VaultGraph:
            # links in Engram's daily notes and ledger restate facts: they are not edges
            with self.db.read() as snapshot:
                edges = store.edges(snapshot, name, generated)
                return VaultGraph(store.notes(snapshot, name), edges)

        with self._lock:
            vault = self._cache.get(name)
            if vault is None or vault.key != key:
                finder = NoteFinder(store.lookup_rows(conn, name))
                vault = self._cache[name] = _Vault(key, finder, load)
        return name, vault


def _around(g: VaultGraph, seeds: dict[int, float]) -> set[int]:
    """The seed notes and every note one link away from them, either direction."""
    u = g.undirected()
    nodes = set(seeds)
    for node in seeds:
        nodes.update(u.neighbors(node))
    return nodes
