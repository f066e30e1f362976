"""memory_log: append to this agent's raw transcript ledger (docs/mcp.md)."""

from __future__ import annotations

from typing import Any

from engram.mcp_server import schema as s
from engram.mcp_server.gateway import Gateway
from engram.mcp_server.output import fit_json
from engram.mcp_server.schema import Tool

MAX_MESSAGES = 100


async def log(gw: Gateway, a: dict[str, Any]) -> str:
    """Append messages to ledger/raw/<agent>/YYYY/MM/DD.jsonl (through the daemon when it
    serves this vault)."""
    vault, agent = gw.options.vault, gw.options.agent
    lines = list(enumerate(a["messages"], 1))
    result = await gw.run(lambda e: e.ledger_append(agent, lines, vault).to_dict())
    return fit_json(result, 20_000)


MESSAGE = {
    "type": "object",
    "properties": {
        "role": s.text("Who said it: user, assistant, tool, system...", 64, 1),
        "text": s.text("What was said.", 60_000),
        "ts": s.text("When (ISO 8601; default now, UTC).", 40),
    },
    "required": ["role", "text"],
    "additionalProperties": False,
}

TOOLS = (
    Tool(
        "memory_log",
        "Log transcript lines",
        "Append messages of this session to your raw transcript ledger (one JSON line each in "
        "ledger/raw/<agent>/YYYY/MM/DD.jsonl, never rewritten). Log what matters as you go; "
        "`engram ledger observe` later scores the lines into observations that memory_wake "
        "shows. Returns JSON {agent, appended, lines: [{path, line}]}.",
        s.obj(
            ["messages"],
            messages={
                "type": "array",
                "description": f"The messages to append, oldest first (1 to {MAX_MESSAGES}).",
                "items": MESSAGE,
                "minItems": 1,
                "maxItems": MAX_MESSAGES,
            },
        ),
        log,
        read_only=False,
    ),
)
