"""Time `engram mcp` as an agent's host sees it: start-up to `initialize`, `tools/list`, and
tool-call latency, through the official MCP client over stdio.

    python scripts/bench_mcp.py [--calls 30] [--query "pricing tiers"] [-- extra mcp args]

Uses the current environment (index, config, a running `engram serve` if there is one: the
`status` line printed says whether the daemon answered).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

import anyio
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client


async def bench(calls: int, query: str, extra: list[str]) -> None:
    """Print the timings."""
    start = time.perf_counter()
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "engram", "mcp", "--tools", "all", *extra],
        env=dict(os.environ),
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        ready = time.perf_counter()
        await session.list_tools()
        listed = time.perf_counter()
        status = await session.call_tool("status", {})
        served = json.loads(status.content[0].text).get("servedBy")  # type: ignore[union-attr]
        print(f"initialize {1000 * (ready - start):.0f} ms", end="   ")
        print(f"tools/list {1000 * (listed - ready):.1f} ms")
        print(f"served by {served}")
        for tool, args in (
            ("search", {"q": query}),
            ("query", {"q": query, "expand": False, "rerank": False}),
            ("memory_recall", {"q": query}),
            ("graph_rank", {"about": query, "n": 5}),
        ):
            times = []
            for _ in range(calls):
                t = time.perf_counter()
                result = await session.call_tool(tool, args)
                times.append(1000 * (time.perf_counter() - t))
            state = "error" if result.is_error else "ok"
            warm = times[1:] or times
            print(
                f"{tool:14s} first {times[0]:7.1f} ms   p50 {statistics.median(warm):6.1f} ms"
                f"   max {max(warm):6.1f} ms   ({state})"
            )


def main() -> None:
    """Parse arguments and run."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=30)
    parser.add_argument("--query", default="pricing tiers")
    parser.add_argument("extra", nargs="*", help="arguments for engram mcp (after --)")
    args = parser.parse_args()
    anyio.run(bench, args.calls, args.query, args.extra)


if __name__ == "__main__":
    main()
