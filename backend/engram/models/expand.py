"""Query expansion prompts and output parsing (pure: no model needed to test them).

Expansions keep the query's language: the prompt names it when it can be told, and a line in
another script than the query's is dropped (small models answer a Chinese query in English).
"""

from __future__ import annotations

import re

from . import language

MAX_EXPANSION_CHARS = 200
SYSTEM = (
    "You expand search queries for a personal notes search engine. Given a query, write {n} "
    "alternative search queries that would find the same notes: synonyms, related terms, or a "
    "more specific phrasing. One query per line, no numbering, no explanations. {language}"
)
SAME_LANGUAGE = "Write them in the language of the query."
NAMED_LANGUAGE = "Write them in {name}, the language of the query."
# A few-shot prompt for base models without a chat template.
COMPLETION = (
    "Search query: best pizza in town\nAlternative search queries:\n"
    "- top rated pizza restaurants nearby\n- where to eat good pizza\n\n"
    "Search query: fix slow laptop\nAlternative search queries:\n"
    "- speed up a sluggish computer\n- laptop performance troubleshooting\n\n"
    "Search query: {query}\nAlternative search queries{language}:\n-"
)
_THINK = re.compile(r"<think>.*?(?:</think>|\Z)", re.DOTALL | re.IGNORECASE)
_CONTROL = re.compile(r"\x1b\[[0-9;]*[A-Za-z]|[\x00-\x1f\x7f-\x9f]")  # ANSI codes, controls
_BULLET = re.compile(r"^\s*(?:[-*•]+|\d+[.):]|\(\d+\))\s*")
_LABEL = re.compile(
    r"^(?:lex|vec|hyde|query|search query|expansion|alternative)\s*\d*\s*[:：]\s*", re.IGNORECASE
)


def chat_messages(query: str, n: int, no_think: bool = False) -> list[dict[str, str]]:
    """System + user messages asking an instruct model for `n` expansions in the query's
    language."""
    name = language.query_language(query)
    wanted = NAMED_LANGUAGE.format(name=name) if name else SAME_LANGUAGE
    user = query + (" /no_think" if no_think else "")  # Qwen3's switch to skip its reasoning
    return [
        {"role": "system", "content": SYSTEM.format(n=n, language=wanted)},
        {"role": "user", "content": user},
    ]


def completion_prompt(query: str) -> str:
    """A few-shot prompt that base models continue with a list of expansions (in the query's
    language when it is not English, which the examples are in)."""
    name = language.query_language(query)
    wanted = f" in {name}" if name and name != "English" else ""
    return COMPLETION.format(query=" ".join(query.split()), language=wanted)


def parse_expansions(text: str, query: str, n: int) -> list[str]:
    """Up to `n` distinct, cleaned expansion lines that differ from the query and are written
    in its script."""
    seen = {" ".join(query.split()).casefold()}
    out: list[str] = []
    for raw in _THINK.sub("", text).replace("\r", "\n").split("\n"):
        line = _CONTROL.sub(" ", raw)
        line = _LABEL.sub("", _BULLET.sub("", line).strip()).strip().strip("\"'`").strip()
        line = " ".join(line.split())[:MAX_EXPANSION_CHARS].strip()
        if len(line) < 2 or line.casefold() in seen or line.endswith(":"):
            continue
        if not language.same_script(query, line):
            continue
        seen.add(line.casefold())
        out.append(line)
        if len(out) >= n:
            break
    return out
