"""What `engram mcp` costs an agent's context window: the tools/list of each tool set and the
size of tool results, through the official MCP client over stdio.

    python scripts/mcp_sizes.py                       # tool sets only (no vault needed)
    python scripts/mcp_sizes.py --corpus ../shared/bench/xling-de/corpus.jsonl [--calls 40]

With --corpus (BEIR corpus.jsonl: one note per line, `title` and `text`; the xling-de set is
the Obsidian Help vault in German, with its [[links]]) the pages become a vault in a fresh
temporary index and each tool is called with the titles of pages as its questions; without
it, only the tool lists are measured. Characters are those of the JSON the client received.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import anyio
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

ROOT = Path(__file__).resolve().parents[1]


async def listing(env: dict[str, str], tools: str) -> tuple[int, int, int]:
    """(tools, characters of the tools/list result, characters of names + descriptions +
    input schemas) of one tool set."""
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "engram", "mcp", "--tools", tools], env=env
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        listed = await session.list_tools()
    whole = len(listed.model_dump_json(by_alias=True, exclude_none=True))
    parts = sum(
        len(t.name) + len(t.description or "") + len(json.dumps(t.input_schema))
        for t in listed.tools
    )
    return len(listed.tools), whole, parts


def make_vault(corpus: Path, root: Path) -> Path:
    """The corpus's pages as notes named by their titles."""
    vault = root / "vault"
    vault.mkdir()
    for line in corpus.read_text("utf-8").splitlines():
        page = json.loads(line)
        name = re.sub(r'[\\/:*?"<>|#^\[\]]', " ", page["title"]).strip() or page["_id"]
        path = vault / f"{name}.md"
        if not path.exists():
            path.write_text(f"# {page['title']}\n\n{page['text']}\n", "utf-8")
    return vault


async def results(env: dict[str, str], titles: list[str]) -> dict[str, list[int]]:
    """Characters of each tool's result, per question."""
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "engram", "mcp", "--tools", "all"], env=env
    )
    sizes: dict[str, list[int]] = {}
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        for title in titles:
            for tool, args in (
                ("query", {"q": title}),
                ("search", {"q": title}),
                ("get", {"ref": title}),
                ("memory_recall", {"q": title, "includeNotes": True}),
                ("memory_get_context", {"q": title}),
                ("memory_wake", {}),
                ("graph_backlinks", {"note": title}),
                ("graph_neighbors", {"path": title, "depth": 2}),
                ("graph_rank", {"about": title}),
                ("tags", {}),
            ):
                result = await session.call_tool(tool, args)
                text = "".join(c.text for c in result.content if c.type == "text")
                if not result.is_error:
                    sizes.setdefault(tool, []).append(len(text))
    return sizes


def main() -> None:
    """Parse arguments and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path)
    parser.add_argument("--calls", type=int, default=40, help="questions (pages) to ask")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
        env.update({k: str(home / k.lower()) for k in ("XDG_DATA_HOME", "XDG_CONFIG_HOME")})
        env.update(
            PYTHONPATH=str(ROOT / "backend"), PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring"
        )
        for tools in ("lean", "all"):
            count, whole, parts = anyio.run(listing, env, tools)
            print(
                f"--tools {tools}: {count} tools, tools/list {whole:,} characters "
                f"(names + descriptions + schemas {parts:,})"
            )
        if args.corpus is None:
            return
        vault = make_vault(args.corpus, home)
        subprocess.run(
            [sys.executable, "-m", "engram", "init", str(vault)],
            env=env,
            check=True,
            stdout=subprocess.DEVNULL,
        )
        titles = sorted(p.stem for p in vault.glob("*.md"))[
            :: max(1, len(list(vault.glob("*.md"))) // args.calls)
        ]
        sizes = anyio.run(results, env, titles[: args.calls])
        print(
            f"\n{len(titles[: args.calls])} questions on {args.corpus.parent.name} "
            f"({len(list(vault.glob('*.md')))} notes); characters of each result:"
        )
        print(f"{'tool':20s} {'median':>8s} {'max':>8s}")
        for tool, found in sizes.items():
            print(f"{tool:20s} {statistics.median(found):8,.0f} {max(found):8,}")


if __name__ == "__main__":
    main()
