"""Memory tools: store and recall facts, build context, checkpoint / wake / end a session,
deep search. They act on one vault: `engram mcp --vault`, else the default vault."""

from __future__ import annotations

from typing import Any

from engram.mcp_server import schema as s
from engram.mcp_server.gateway import Gateway
from engram.mcp_server.output import clip_text, fit_json
from engram.mcp_server.schema import Tool

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


async def store_fact(gw: Gateway, a: dict[str, Any]) -> str:
    """Store a fact note (through the daemon's writer when it serves this vault)."""
    vault, agent = gw.options.vault, gw.options.agent

    def store(e: Any) -> dict[str, Any]:
        fact = e.fact_add(
            a["text"],
            fact_type=a.get("type"),
            title=a.get("title"),
            importance=a.get("importance"),
            confidence=a.get("confidence"),
            tags=a.get("tags") or (),
            entities=a.get("entities") or (),
            scope=a.get("scope"),
            source="mcp",
            created_by=agent,
            supersedes=a.get("supersedes"),
            vault=vault,
        )
        data: dict[str, Any] = fact.to_dict()
        return data

    fact = await gw.run(store)
    return fit_json({"stored": compact(fact)}, 20_000)


async def recall(gw: Gateway, a: dict[str, Any]) -> str:
    """Facts by relevance × importance × recency."""
    q, n, vault = a["query"], a["limit"], gw.options.vault

    def recall(e: Any) -> list[dict[str, Any]]:
        hits = e.recall(
            q,
            n=n,
            fact_type=a.get("type"),
            tags=a.get("tags") or (),
            since=a.get("since"),
            until=a.get("until"),
            include_notes=a["include_notes"],
            vault=vault,
            agent=gw.options.agent,
        )
        return [h.to_dict() for h in hits]

    hits = await gw.run(recall)
    payload: dict[str, Any] = {"results": [compact(h) for h in hits]}
    if not hits:
        payload["hint"] = NOTHING
    return fit_json(payload, a["max_chars"], "Ask for fewer results (limit).")


async def get_context(gw: Gateway, a: dict[str, Any]) -> str:
    """Context within a token budget."""
    q, profile, budget, vault = a.get("query"), a["profile"], a["budget"], gw.options.vault
    data = await gw.run(lambda e: e.memory_context(q, profile, budget, vault).to_dict())
    head = (
        f"[memory context: profile {data['profile']}, {data['usedTokens']}/{data['budget']} "
        f"tokens, {len(data['items'])} items]"
    )
    body = data["text"] or "(nothing in memory yet: store facts with memory_store_fact)"
    return clip_text(head + "\n\n" + body, budget * 4 + len(head) + 2)


async def checkpoint(gw: Gateway, a: dict[str, Any]) -> str:
    """Save where the session is."""
    vault = gw.options.vault
    cp = await gw.run(
        lambda e: e.checkpoint(
            a["working_on"], a.get("focus"), a.get("blocked"), a["urgent"], vault
        ).to_dict()
    )
    note = "checkpoint saved; call memory_end_session when the work is done"
    return fit_json({"checkpoint": cp, "note": note}, 20_000)


async def wake(gw: Gateway, a: dict[str, Any]) -> str:
    """Start-of-session context."""
    vault = gw.options.vault
    data = await gw.run(lambda e: e.wake(vault).to_dict())
    for key in ("handoffs", "commitments", "projects"):
        data[key] = [compact(f) for f in data[key]]
    return fit_json(data, a["max_chars"])


async def end_session(gw: Gateway, a: dict[str, Any]) -> str:
    """Clear the dirty-exit flag, maybe storing a handoff."""
    vault, agent = gw.options.vault, gw.options.agent
    data = await gw.run(lambda e: e.end_session(a.get("summary"), agent, vault).to_dict())
    if data.get("handoff"):
        data["handoff"] = compact(data["handoff"])
    return fit_json({"ended": True, **data}, 20_000)


async def deep_search(gw: Gateway, a: dict[str, Any]) -> str:
    """Local recall fused with Convex's facts."""
    q, n, vault = a["query"], a["limit"], gw.options.vault
    data = await gw.run(lambda e: e.deep_search(q, n, vault).to_dict())
    data["results"] = [compact(h) for h in data["results"]]
    if not data["results"]:
        data["hint"] = NOTHING
    return fit_json(data, a["max_chars"], "Ask for fewer results (limit).")


FILTER_ARGS = {
    "type": s.text("Only this fact type: " + TYPES + ".", 64),
    "tags": s.texts("Only facts with every one of these tags.", 50, 200),
    "since": s.text("From this date or phrase (2026-01-01, last week, yesterday).", 100),
    "until": s.text("Up to this date or phrase.", 100),
}
TOOLS = (
    Tool(
        "memory_store_fact",
        "Store a fact",
        "Remember something for later sessions (a decision, preference, lesson, commitment...): "
        "stored as a markdown note in the vault's facts folder, linked to notes it mentions, "
        "found again by memory_recall. Type and importance are inferred when not given. Returns "
        "the stored fact (id, path, type, importance).",
        s.obj(
            ["text"],
            text=s.text("The fact, in a sentence or a short paragraph.", 100_000, 1),
            type=s.text("Fact type (inferred if omitted): " + TYPES + ".", 64),
            title=s.text("Title (default: the first line of the text).", 500),
            importance=s.number("0..1; 0.8+ is structural, kept longest.", 0.0, 1.0),
            confidence=s.number("0..1 (default 1).", 0.0, 1.0),
            tags=s.texts("Tags.", 50, 200),
            entities=s.texts("People, projects or things it is about (become links).", 50, 200),
            scope=s.text("Scope (default: default).", 128),
            supersedes=s.text("Id of a fact this one replaces (that one is marked merged).", 128),
        ),
        store_fact,
        read_only=False,
    ),
    Tool(
        "memory_recall",
        "Recall facts",
        "Recall stored facts ranked by relevance × importance × recency (date phrases in the "
        'query like "last week" filter by date; an empty query lists the most important recent '
        "facts). Use it before answering questions about past decisions, preferences or work. "
        "Returns JSON {results: [{id, title, text, factType, path, score...}]}.",
        s.obj(
            query=s.text("What to recall (may be empty).", 2000, 0, default=""),
            limit=s.integer("How many results.", 1, 50, 10),
            include_notes=s.flag("Include ordinary notes, not only facts."),
            **FILTER_ARGS,
            max_chars=s.max_chars(),
        ),
        recall,
    ),
    Tool(
        "memory_get_context",
        "Memory context",
        "A ready-to-read context block for the current task: structural facts, today's and "
        "yesterday's daily notes, facts and notes matching the query and their graph "
        "neighbours, ordered by profile and never over the token budget. Use at the start of "
        "a task.",
        s.obj(
            query=s.text("What the task is about (optional).", 2000),
            profile=s.choice(
                "default; planning (search first); incident (structural, then search); "
                "handoff (daily notes first).",
                ["default", "planning", "incident", "handoff"],
                "default",
            ),
            budget=s.integer("Token budget (characters / 4); never exceeded.", 100, 50_000, 4000),
        ),
        get_context,
    ),
    Tool(
        "memory_checkpoint",
        "Save a checkpoint",
        "Save what you are working on so the next session can resume (memory_wake shows it). "
        "Raises the dirty-exit flag until memory_end_session.",
        s.obj(
            ["working_on"],
            working_on=s.text("What you are doing now.", 2000, 1),
            focus=s.text("What matters most right now.", 2000),
            blocked=s.text("What is in the way.", 2000),
            urgent=s.flag("Mark the work urgent."),
        ),
        checkpoint,
        read_only=False,
    ),
    Tool(
        "memory_wake",
        "Start a session",
        "Call first in a new session: whether the last one ended without memory_end_session "
        "(dirty exit), the last checkpoint, recent observations (older ones decay), recent "
        "handoffs, open commitments and active projects.",
        s.obj(max_chars=s.max_chars()),
        wake,
    ),
    Tool(
        "memory_end_session",
        "End the session",
        "Call when the work is done: clears the dirty-exit flag; a summary is stored as a "
        "handoff fact the next session's memory_wake shows.",
        s.obj(summary=s.text("What was done and what comes next (optional).", 100_000)),
        end_session,
        read_only=False,
    ),
    Tool(
        "memory_deep_search",
        "Deep search",
        "The widest recall: local hybrid recall over facts and notes, fused by reciprocal rank "
        "with the facts other machines synced to Convex. Without sync configured it searches "
        'locally and says "local only". Returns JSON {sources, notes, results}.',
        s.obj(
            ["query"],
            query=s.text("What to look for.", 2000, 1),
            limit=s.integer("How many results.", 1, 50, 10),
            max_chars=s.max_chars(),
        ),
        deep_search,
    ),
)
