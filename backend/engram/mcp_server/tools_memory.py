"""Memory tools: store and recall facts, build context, checkpoint / wake / end a session,
deep search, log transcript lines. They act on one vault: `engram mcp --vault`, else the
default vault; facts are stored as created by this server's agent."""

from __future__ import annotations

from typing import Any

from engram import codec
from engram.mcp_server import args
from engram.mcp_server.gateway import Gateway
from engram.mcp_server.output import clip_text, fit_json
from engram.mcp_server.schema import Tool
from engram.service import requests as rq
from engram.service.engram import Engram

TYPES = (
    "decision, observation, plan, project, error, insight, correction, learning, lesson, "
    "steering_rule, preference, session_summary, commitment, relationship, fact, feeling"
)
NOISE = {
    "syncState",
    "convexId",
    "vaultSyncedAt",
    "accessCount",
    "lastAccess",
    "supersedes",
    "supersededBy",
}
NOTHING = "nothing recalled: store facts with memory_store_fact, or try other words"


def compact(item: dict[str, Any]) -> dict[str, Any]:
    """A fact or recall hit (and the fact or hit inside it) without bookkeeping fields and
    empty values."""
    return {
        k: compact(v) if isinstance(v, dict) and k in ("fact", "hit") else v
        for k, v in item.items()
        if k not in NOISE and v not in (None, "", [], {})
    }


async def store_fact(gw: Gateway, r: rq.FactAdd, x: args.Nothing) -> str:
    """Store a fact note (through the daemon's writer when it serves this vault)."""
    fact = await gw.send(
        Engram.fact_add, r, source="mcp", created_by=gw.options.agent, vault=gw.options.vault
    )
    return fit_json({"stored": compact(codec.encode(fact))}, 20_000)


async def recall(gw: Gateway, r: rq.Recall, x: args.Budget) -> str:
    """Facts by relevance × importance × recency."""
    found = await gw.send(Engram.recall, r, vault=gw.options.vault, agent=gw.options.agent)
    data: dict[str, Any] = codec.encode(found)
    payload: dict[str, Any] = {"results": [compact(h) for h in data["results"]]}
    if found.window or found.fact_type:  # what was read from q, so the agent can tell
        payload["read"] = {k: data[k] for k in ("window", "type", "searched") if data[k]}
    if not found.results:
        payload["hint"] = NOTHING
    return fit_json(payload, x.max_chars, "Ask for fewer results (n).")


async def get_context(gw: Gateway, r: rq.MemoryContext, x: args.Nothing) -> str:
    """Context within a token budget."""
    found = await gw.send(Engram.memory_context, r, vault=gw.options.vault)
    head = (
        f"[memory context: profile {found.profile}, {found.used_tokens}/{found.budget} "
        f"tokens, {len(found.items)} items]"
    )
    body = found.text or "(nothing in memory yet: store facts with memory_store_fact)"
    return clip_text(head + "\n\n" + body, r.budget * 4 + len(head) + 2)


async def checkpoint(gw: Gateway, r: args.Checkpoint, x: args.Nothing) -> str:
    """Save where the session is."""
    saved = await gw.run(
        Engram.checkpoint, r.working_on, r.focus, r.blocked, r.urgent, gw.options.vault
    )
    note = "checkpoint saved; call memory_end_session when the work is done"
    return fit_json({"checkpoint": codec.encode(saved), "note": note}, 20_000)


async def wake(gw: Gateway, r: args.Nothing, x: args.Budget) -> str:
    """Start-of-session context."""
    woke = await gw.run(Engram.wake, gw.options.vault)
    data: dict[str, Any] = codec.encode(woke)
    for key in ("handoffs", "commitments", "projects"):
        data[key] = [compact(f) for f in data[key]]
    data["recent"] = [
        {k: v for k, v in item.items() if k != "key" and v not in ("", None)}
        for item in data["recent"]
    ]
    return fit_json(data, x.max_chars)


async def end_session(gw: Gateway, r: args.EndSession, x: args.Nothing) -> str:
    """Clear the dirty-exit flag, maybe storing a handoff."""
    ended = await gw.run(Engram.end_session, r.summary, gw.options.agent, gw.options.vault)
    data: dict[str, Any] = codec.encode(ended)
    if data.get("handoff"):
        data["handoff"] = compact(data["handoff"])
    return fit_json({"ended": True, **data}, 20_000)


async def deep_search(gw: Gateway, r: rq.DeepSearch, x: args.Budget) -> str:
    """Local recall fused with Convex's facts."""
    found = await gw.send(Engram.deep_search, r, vault=gw.options.vault)
    data: dict[str, Any] = codec.encode(found)
    data["results"] = [compact(h) for h in data["results"]]
    if not data["results"]:
        data["hint"] = NOTHING
    return fit_json(data, x.max_chars, "Ask for fewer results (n).")


async def log(gw: Gateway, r: args.Log, x: args.Nothing) -> str:
    """Append messages to ledger/raw/<agent>/YYYY/MM/DD.jsonl (through the daemon when it
    serves this vault)."""
    if not r.messages:
        from engram.errors import InvalidInputError

        raise InvalidInputError("messages: give at least one")
    lines = [(i, _message(m)) for i, m in enumerate(r.messages, 1)]
    result = await gw.run(Engram.ledger_append, gw.options.agent, lines, gw.options.vault)
    return fit_json(codec.encode(result), 20_000)


def _message(m: args.Message) -> dict[str, Any]:
    out = {"role": m.role, "text": m.text}
    return out | {k: v for k, v in (("ts", m.ts), ("id", m.id)) if v is not None}


FACT_DOCS = {"type": "fact type (inferred when left out): " + TYPES}
TOOLS: tuple[Tool[Any, Any], ...] = (
    Tool(
        "memory_store_fact",
        "Store a fact",
        "Remember something for later sessions (a decision, preference, lesson, commitment...): "
        "stored as a markdown note in the vault's facts folder, linked to notes it mentions, "
        "found again by memory_recall. Type and importance are inferred when not given. Returns "
        "the stored fact (id, path, type, importance).",
        rq.FactAdd,
        args.Nothing,
        store_fact,
        omit=("source", "createdBy"),
        docs={
            **FACT_DOCS,
            "text": "the fact, in a sentence or a short paragraph",
            "entities": "people, projects or things it is about (become [[links]])",
        },
        read_only=False,
    ),
    Tool(
        "memory_recall",
        "Recall facts",
        "Recall stored facts ranked by relevance × importance × recency (time words in q like "
        '"last week" or "since May" filter by date, "what did we decide" by type, both said in '
        "`read`; an empty query lists the most important recent facts). Use it before "
        "answering questions about past decisions, preferences or work. Returns JSON "
        "{results: [{kind, score, fact: {id, title, text, factType, path...}}], read}.",
        rq.Recall,
        args.Budget,
        recall,
        omit=("agent",),
        docs={
            "q": "what to recall; empty: the most important recent facts",
            "type": "only this fact type (decision, preference, lesson...)",
        },
    ),
    Tool(
        "memory_get_context",
        "Memory context",
        "A ready-to-read context block for the current task: structural facts, today's and "
        "yesterday's daily notes, facts and notes matching the query and their graph "
        "neighbours, ordered by profile and never over the token budget. Use at the start of "
        "a task.",
        rq.MemoryContext,
        args.Nothing,
        get_context,
        docs={
            "q": "what the task is about",
            "profile": "planning: search first; incident: structural facts, then search; "
            "handoff: daily notes first",
        },
    ),
    Tool(
        "memory_checkpoint",
        "Save a checkpoint",
        "Save what you are working on so the next session can resume (memory_wake shows it). "
        "Raises the dirty-exit flag until memory_end_session.",
        args.Checkpoint,
        args.Nothing,
        checkpoint,
        read_only=False,
    ),
    Tool(
        "memory_wake",
        "Start a session",
        "Call first in a new session: whether the last one ended without memory_end_session "
        "(dirty exit), the last checkpoint, recent observations (older ones decay), recent "
        "handoffs, open commitments and active projects.",
        args.Nothing,
        args.Budget,
        wake,
    ),
    Tool(
        "memory_end_session",
        "End the session",
        "Call when the work is done: clears the dirty-exit flag; a summary is stored as a "
        "handoff fact the next session's memory_wake shows.",
        args.EndSession,
        args.Nothing,
        end_session,
        read_only=False,
    ),
    Tool(
        "memory_deep_search",
        "Deep search",
        "The widest recall: local hybrid recall over facts and notes, fused by reciprocal rank "
        "with the facts other machines synced to Convex. Without sync configured it searches "
        'locally and says "local only". Returns JSON {sources, notes, results}.',
        rq.DeepSearch,
        args.Budget,
        deep_search,
    ),
    Tool(
        "memory_log",
        "Log transcript lines",
        "Append messages of this session to your raw transcript ledger (one JSON line each in "
        "ledger/raw/<agent>/YYYY/MM/DD.jsonl, never rewritten). Log what matters as you go; "
        "`engram ledger observe` later scores the lines into observations that memory_wake "
        "shows. Returns JSON {agent, appended, lines: [{path, line}]}.",
        args.Log,
        args.Nothing,
        log,
        read_only=False,
    ),
)
