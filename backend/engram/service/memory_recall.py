"""Memory, part 3: recall, context building, daily notes, checkpoint / wake / end-session."""

from __future__ import annotations

import datetime as dt
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from engram.errors import InvalidInputError
from engram.memory import context as ctx
from engram.memory import daily, dates, ledger, props, questions, ranking, reflect, timewords
from engram.memory import format as fmt
from engram.memory import wake as wk
from engram.memory.inputs import check_type, tier_bounds
from engram.memory.model import DAILY_FOLDER, LEDGER_FOLDER, LIVE_STATES, Fact, iso
from engram.memory.neighbours import Neighbour, Neighbours
from engram.memory.results import (
    ContextResult,
    DailyResult,
    RecallHit,
    RecallResult,
    Reflection,
    SessionEnd,
    TimeWindow,
    WakeResult,
)
from engram.service.memory import MemoryService, VaultCtx
from engram.store import activity, admin
from engram.store import facts as facts_store
from engram.store.filters import KINDS, Filters

if TYPE_CHECKING:
    from engram.search.results import SearchResult
    from engram.service.core import Core
    from engram.service.graph import GraphService

MAX_ID_FILTER = 20_000  # beyond this many candidate facts, filter after searching
CONTEXT_LIMITS = {"structural": 40, "potential": 30, "contextual": 15, "search": 12}


class RecallService:
    """recall, memory context, daily, checkpoint, wake, end-session; ranks facts with the
    facade's hybrid `query`, finds notes with its keyword `search`, walks the graph."""

    def __init__(
        self,
        core: Core,
        memory: MemoryService,
        fact_add: Callable[..., Fact],
        query: Callable[..., list[SearchResult]],
        search: Callable[..., list[SearchResult]],
        graph: GraphService,
    ) -> None:
        self._core = core
        self._memory = memory
        self._fact_add = fact_add
        self._query = query
        self._search = search
        self._graph = graph

    def fact_relevance(
        self, v: VaultCtx, query: str, n: int, doc_ids: Sequence[int]
    ) -> dict[int, tuple[float, str]]:
        """Hybrid (keyword + vector, fused) relevance of fact documents; no expansion or
        reranking, so recall stays interactive. A fact the keywords miss counts only when its
        passage is at least `memory.min_similarity` similar to the query (docs/memory.md)."""
        if not doc_ids:
            return {}
        ids = tuple(doc_ids) if len(doc_ids) <= 20_000 else None
        results = self._query(
            query,
            n=n,
            collections=[v.name],
            filters=Filters(doc_ids=ids) if ids else Filters(kinds=KINDS),  # facts: memory
            expand=False,
            rerank=False,
            min_similarity=self._core.settings.memory.min_similarity,
        )
        wanted = set(doc_ids)
        return {
            r.doc_id: (r.score, r.snippet) for r in results if r.doc_id in wanted and r.score > 0
        }

    def neighbours_for(self, v: VaultCtx) -> Neighbours:
        """Neighbours over the resolved link graph, never walking through daily notes or
        the ledger (they link to everything of a day)."""
        skip = tuple(f"{v.facts_root}/{folder}/" for folder in (DAILY_FOLDER, LEDGER_FOLDER))
        graph = self._graph.vault_graph(v.name)[1].graph

        def neighbours(seeds: Sequence[int], hops: int) -> list[Neighbour]:
            out: list[Neighbour] = []
            seen = set(seeds)
            queue = deque((s, s, 0) for s in seeds if s in graph.info)
            while queue:
                node, seed, depth = queue.popleft()
                if depth >= hops:
                    continue
                around = set(graph.g.successors(node)) | set(graph.g.predecessors(node))
                for nxt in sorted(around, key=graph.path_of):
                    path = graph.path_of(nxt)
                    if nxt in seen or path.startswith(skip):
                        continue
                    seen.add(nxt)
                    out.append(Neighbour(nxt, path, graph.title_of(nxt), depth + 1, seed))
                    queue.append((nxt, seed, depth + 1))
            return out

        return neighbours

    def recall(
        self,
        query: str = "",
        n: int = 10,
        fact_type: str | None = None,
        tags: Iterable[str] = (),
        scope: str | None = None,
        since: str | None = None,
        until: str | None = None,
        tier_name: str | None = None,
        include_notes: bool = False,
        states: tuple[str, ...] | None = None,
        vault: str | None = None,
        agent: str | None = None,
        literal: bool = False,
    ) -> RecallResult:
        """Facts ranked by relevance × importance × recency (docs/memory.md has the formula).

        Unless `literal`, the query's time words ("last week", "since Monday", "vorige
        Woche") become a date window over the local calendar and its question ("what did we
        decide") a fact type; neither is searched as words. A recall by a named `agent` is
        counted (daily notes, reflections).
        """
        v = self._memory.vault(vault)
        now = self._core.clock()
        local = now.astimezone(self._core.zone)
        found = timewords.Reading(query, dates.DateRange(), ())
        if not literal:
            found = timewords.read(query, local.date())
        span = dates.bounded(found.range, since, until, local.date())
        asked, rest = (None, found.rest)
        if not literal and not fact_type:
            asked, rest = questions.asked_type(found.rest)
        low, high = tier_bounds(tier_name)
        q = facts_store.FactQuery(
            collection=v.name,
            types=(check_type(fact_type or asked or ""),) if fact_type or asked else (),
            states=states or LIVE_STATES,
            scope=scope,
            tags=tuple(t.lstrip("#") for t in tags),
            min_importance=low,
            max_importance=high,
            since=_instant(span.since, local.tzinfo),
            until=_instant(span.until, local.tzinfo),
        )
        rows = {int(r["doc_id"]): r for r in facts_store.query(self._core.db.conn, q)}
        # within a window, age counts from its end: last March's facts are not all "old"
        anchor = now if span.until is None else min(now, _moment(span.until, local.tzinfo))
        out = self._fact_hits(v, rest, n, rows, anchor)
        if include_notes and rest.strip():
            out = sorted(
                out + self._note_hits(v, rest, n, span, rows, anchor), key=lambda h: -h.score
            )[:n]
        if out or agent:
            with self._core.db.write() as conn:
                facts_store.bump_access(conn, [h.fact.id for h in out if h.fact], iso(now))
                if agent:
                    activity.record_recall(conn, v.name, now.date().isoformat(), agent[:128])
        window = None if span.is_open() else TimeWindow(span.since, span.until, found.phrases)
        return RecallResult(tuple(out), rest, window, asked)

    def _fact_hits(
        self, v: VaultCtx, query: str, n: int, rows: dict[int, Any], now: dt.datetime
    ) -> list[RecallHit]:
        """The best `n` of the candidate fact rows by relevance × importance × recency
        (without query words every candidate is equally relevant)."""
        if query.strip():
            relevance = self.fact_relevance(v, query, max(n * 5, 50), list(rows))
        else:
            relevance = {doc_id: (1.0, "") for doc_id in rows}
        half = self._core.settings.memory.half_life_days
        hits = []
        for doc_id, (rel, snippet) in relevance.items():
            row = rows[doc_id]
            changed = fmt.to_time(row["updated_at"]) or now
            recent = ranking.recency(ranking.age_days(changed, now), half)
            score = ranking.recall_score(rel, row["importance"], recent, row["lifecycle"])
            hits.append((score, rel, recent, snippet, row))
        hits.sort(key=lambda h: (-h[0], h[4]["id"]))
        return [
            RecallHit(
                "fact",
                str(r["path"]),
                str(r["title"]),
                s,
                rel,
                float(r["importance"]),
                rec,
                self._memory.fact_from_row(v, r),
                snippet,
            )
            for s, rel, rec, snippet, r in hits[:n]
        ]

    def _note_hits(
        self,
        v: VaultCtx,
        query: str,
        n: int,
        span: dates.DateRange,
        facts: dict[int, Any],
        now: dt.datetime,
    ) -> list[RecallHit]:
        filters = Filters(
            after=span.since.isoformat() if span.since else None,
            before=span.until.isoformat() if span.until else None,
        )
        out = []
        half = self._core.settings.memory.half_life_days
        for r in self._search(query, n=n * 3, collections=[v.name], filters=filters):
            if r.doc_id in facts or r.path.startswith(v.facts_root + "/"):
                continue
            doc = admin.document_by_id(self._core.db.conn, r.doc_id)
            when = fmt.to_time(doc["doc_date"] if doc else None) or now
            recent = ranking.recency(ranking.age_days(when, now), half)
            score = ranking.recall_score(r.score, ranking.NOTE_IMPORTANCE, recent)
            out.append(
                RecallHit(
                    "note",
                    r.path,
                    r.title,
                    score,
                    r.score,
                    ranking.NOTE_IMPORTANCE,
                    recent,
                    None,
                    r.snippet,
                )
            )
        return out

    def memory_context(
        self,
        query: str | None = None,
        profile: str = "default",
        budget: int = 4000,
        vault: str | None = None,
        neighbours: Neighbours | None = None,
    ) -> ContextResult:
        """Context for an agent: facts by tier, daily notes, search hits and their graph
        neighbours, in the profile's order, never over `budget` tokens (chars/4)."""
        ctx.profile_order(profile)
        v = self._memory.vault(vault)
        items: list[ctx.ContextItem] = []
        q = facts_store.FactQuery(collection=v.name, states=LIVE_STATES)
        counts: dict[str, int] = {}
        for row in facts_store.query(self._core.db.conn, q, order="importance", limit=500):
            fact = self._memory.fact_from_row(v, row)
            counts[fact.tier] = counts.get(fact.tier, 0) + 1
            if counts[fact.tier] <= CONTEXT_LIMITS[fact.tier]:
                items.append(_fact_item(fact.tier, fact, fact.importance))
        today = self._core.clock().date()
        for age, day in enumerate((today, today - dt.timedelta(days=1))):
            rel = f"{v.facts_root}/daily/{day.isoformat()}.md"
            note = v.notes.read(rel)
            if note is not None:
                body = daily.readable(props.read(note.text)[1])
                items.append(
                    ctx.ContextItem("daily", body.strip(), 1.0 - 0.1 * age, rel, day.isoformat())
                )
        if newest := reflect.latest_readable(v.root, v.facts_root):
            week, rel, text = newest
            items.append(ctx.ContextItem("reflection", text, 1.0, rel, f"Week {week}"))
        seeds: list[int] = []
        if query and query.strip():
            for hit in self.recall(
                query, n=CONTEXT_LIMITS["search"], include_notes=True, vault=v.name
            ).results:
                if hit.fact is not None:
                    items.append(_fact_item("search", hit.fact, hit.score))
                else:
                    text = f"{hit.title} ({hit.path}): {hit.snippet}"
                    items.append(ctx.ContextItem("search", text, hit.score, hit.path, hit.title))
                doc = admin.document_by_path(self._core.db.conn, v.name, hit.path)
                if doc is not None:
                    seeds.append(int(doc["id"]))
        walk = neighbours or self.neighbours_for(v)
        for nb in walk(seeds, 2):
            if facts_store.by_doc(self._core.db.conn, nb.doc_id) is not None:
                continue  # facts come in through their tier
            text = f"{nb.title} ({nb.path}), {nb.hops} link{'s' if nb.hops > 1 else ''} away"
            items.append(ctx.ContextItem("graph", text, 1.0 / (nb.hops + 1), nb.path, nb.title))
        return ContextResult(profile, budget, query, tuple(ctx.fit(items, profile, budget)))

    def daily(self, day: str | None = None, vault: str | None = None) -> DailyResult:
        """Regenerate a day's note (today by default; a date or phrase like yesterday)."""
        v = self._memory.vault(vault)
        today = self._core.clock().date()
        when = dates.parse_range(day, today).since if day else today
        if when is None:
            raise InvalidInputError(f"{day!r} is not a single day")
        rel, count, written = self._memory.write_daily(v, when)
        return DailyResult(when, rel, count, written)

    def checkpoint(
        self,
        working_on: str,
        focus: str | None = None,
        blocked: str | None = None,
        urgent: bool = False,
        vault: str | None = None,
    ) -> wk.Checkpoint:
        """Save what the agent is doing and raise the dirty-exit flag."""
        if not working_on.strip():
            raise InvalidInputError("say what you are working on (--working-on)")
        v = self._memory.vault(vault)
        cp = wk.Checkpoint(working_on.strip(), focus, blocked, urgent, timestamp=self._core.clock())
        wk.save_checkpoint(v.root, cp)
        return cp

    def wake(self, vault: str | None = None) -> WakeResult:
        """Bootstrap context: dirty exit?, last checkpoint, recent observations (decayed),
        recent handoffs, open commitments and active projects."""
        v = self._memory.vault(vault)
        today = self._core.clock().date()
        days = [today - dt.timedelta(days=age) for age in range(wk.WAKE_DAYS)]
        ledgers = {}
        for day in days:
            note = v.notes.read(ledger.ledger_path(v.facts_root, day))
            if note is not None:
                ledgers[day] = note.text
        q = facts_store.FactQuery(v.name, states=LIVE_STATES, since=days[-1].isoformat())
        facts = [
            self._memory.fact_from_row(v, row) for row in facts_store.query(self._core.db.conn, q)
        ]
        recent = wk.gather(ledgers, self._live_refs(v), facts)
        week = reflect.latest_readable(v.root, v.facts_root)
        return WakeResult(
            dirty=wk.is_dirty(v.root),
            checkpoint=wk.load_checkpoint(v.root),
            recent=tuple(wk.decay_select(recent, today)),
            handoffs=tuple(self._memory.fact_list("session_summary", limit=3, vault=v.name)),
            commitments=tuple(
                self._memory.fact_list(
                    "commitment", states=("active",), limit=10, vault=v.name, order="importance"
                )
            ),
            projects=tuple(self._projects(v)),
            reflection=Reflection(*week) if week else None,
        )

    def end_session(
        self,
        summary: str | None = None,
        created_by: str | None = None,
        vault: str | None = None,
    ) -> SessionEnd:
        """Clear the dirty-exit flag; with a summary, store it as a handoff fact first."""
        v = self._memory.vault(vault)
        handoff = None
        if summary and summary.strip():
            handoff = self._fact_add(
                summary,
                fact_type="session_summary",
                tags=["handoff"],
                created_by=created_by,
                source="end-session",
                vault=v.name,
            )
        return SessionEnd(wk.clear_dirty(v.root), handoff)

    def _live_refs(self, v: VaultCtx) -> dict[str, str]:
        q = facts_store.FactQuery(collection=v.name, states=LIVE_STATES)
        return {str(r["id"])[:8]: str(r["path"]) for r in facts_store.query(self._core.db.conn, q)}

    def _projects(self, v: VaultCtx) -> list[Fact]:
        q = facts_store.FactQuery(collection=v.name, types=("project", "plan"), states=("active",))
        rows = facts_store.query(self._core.db.conn, q, order="importance", limit=5)
        return [self._memory.fact_from_row(v, r) for r in rows]


def _moment(day: dt.date, zone: dt.tzinfo | None) -> dt.datetime:
    """The start of a local calendar day, as an aware datetime."""
    return dt.datetime.combine(day, dt.time(), tzinfo=zone or dt.UTC)


def _instant(day: dt.date | None, zone: dt.tzinfo | None) -> str | None:
    """The start of a local day as the UTC timestamp facts are stored with (None: open)."""
    return iso(_moment(day, zone)) if day else None


def _fact_item(source: str, fact: Fact, score: float) -> ctx.ContextItem:
    line = ledger.format_line(
        ledger.Observation(fact.fact_type, fact.confidence, fact.importance, fact.text)
    )
    return ctx.ContextItem(source, f"{line} ({fact.path})", score, fact.path, fact.title)
