"""File names and note text that carry terminal escape sequences are shown escaped by the real
`engram` command (a name must not retitle or recolour the terminal listing it); --json keeps
the exact value, written with JSON escapes."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from engram.cli.formats import render_results
from engram.service import SearchResult
from tests.conftest import EngramCli

EVIL = "evil\x1b]0;pwned\x07 \x1b[31mred"  # sets the terminal's title, then turns text red
SHOWN = "evil\\x1b]0;pwned\\x07 \\x1b[31mred"
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # what a terminal would act on


@pytest.fixture
def env(run: EngramCli, xdg: dict[str, str], tmp_path: Path) -> dict[str, str]:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / f"{EVIL}.md").write_text(
        "# Title \x1b]0;owned\x07 here\n\nespresso notes \x1b[2J cleared\n", encoding="utf-8"
    )
    (vault / f"{EVIL} bin.md").write_bytes(b"\x00\x01binary")  # warned about, by name
    env = {**xdg, "NO_COLOR": "1"}
    out = run(env, "collection", "add", str(vault), "--name", "v")
    assert f"{SHOWN} bin.md" in out.stderr  # the warning names it, escaped
    assert RAW.search(out.stdout + out.stderr) is None
    return env


@pytest.mark.parametrize(
    "args",
    [
        ("search", "espresso"),
        ("search", "espresso", "--csv"),
        ("search", "espresso", "--files"),
        ("ls", "v"),
        ("get", f"v/{EVIL}.md"),
        ("graph", "orphans"),
    ],
)
def test_names_and_text_are_printed_escaped(
    run: EngramCli, env: dict[str, str], args: tuple[str, ...]
) -> None:
    out = run(env, *args)
    assert RAW.search(out.stdout + out.stderr) is None, repr(out.stdout)
    assert SHOWN in out.stdout or "\\x1b]0;owned\\x07" in out.stdout


def test_json_keeps_the_exact_name(run: EngramCli, env: dict[str, str]) -> None:
    out = run(env, "search", "espresso", "--json")
    assert RAW.search(out.stdout) is None
    paths = {r["path"] for r in json.loads(out.stdout)}
    assert f"{EVIL}.md" in paths


def test_colour_marks_are_the_only_escapes() -> None:
    hit = SearchResult(
        docid="abc123",
        score=0.5,
        collection="v",
        path=f"{EVIL}.md",
        title=EVIL,
        snippet="a \x1b]0;x\x07 espresso \x1b[2J b",
        highlights=((9, 17),),  # "espresso" in the raw snippet
        line=3,
    )
    shown = render_results([hit], "human", color=True)
    assert "\x1b]" not in shown and "\x07" not in shown and "\x1b[2J" not in shown
    assert "\\x1b]0;x\\x07 \x1b[33m\x1b[1mespresso\x1b[0m \\x1b[2J" in shown
