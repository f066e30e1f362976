"""Docs are part of the feature: every command and setting is documented."""

from __future__ import annotations

import re
from pathlib import Path

import click

from engram.cli import commands  # noqa: F401  (registers commands)
from engram.cli.main import cli

ROOT = Path(__file__).resolve().parents[2]


def command_paths(group: click.Group, prefix: str = "engram") -> list[str]:
    out = []
    for name, cmd in group.commands.items():
        path = f"{prefix} {name}"
        if isinstance(cmd, click.Group):
            out += command_paths(cmd, path)
        else:
            out.append(path)
    return out


def all_docs() -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "docs").rglob("*.md"))


def test_every_command_is_documented() -> None:
    docs = all_docs()
    missing = [p for p in command_paths(cli) if f"`{p}" not in docs]
    assert missing == []


def test_every_environment_variable_is_documented() -> None:
    source = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "backend").rglob("*.py"))
    names = set(re.findall(r"ENGRAM_[A-Z_]+", source))
    assert names
    docs = all_docs()
    assert sorted(n for n in names if n not in docs) == []


def test_readme_opens_with_install_main_job_and_tests() -> None:
    """CI runs the README's commands as written, its virtualenv made in a temporary folder."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("```sh", 1)[1].split("```", 1)[0]
    lines = [line for line in block.splitlines() if line and not line.startswith("#")]
    venv = re.fullmatch(r"python3 -m venv (\S+) && \. \1/bin/activate", lines[0])
    assert venv, lines[0]
    assert lines[1] == "scripts/install.sh"
    assert lines[2].startswith("engram ")
    assert lines[3] == "python -m pytest"
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    ci_venv = re.search(r'\npython3 -m venv "(\S+)" && \. "\1/bin/activate"\n', ci)
    assert ci_venv and ci_venv.group(1).startswith("$WORK/"), "CI: a new venv in a temp folder"
    assert "WORK=$(mktemp -d" in ci
    positions = [ci.index(f"\n{line}\n") for line in lines[1:]]
    assert positions == sorted(positions) and ci_venv.start() < positions[0]


def test_readme_shows_everyday_commands_and_links_every_doc() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    everyday = readme.split("## Everyday use", 1)[1].split("\n## ", 1)[0]
    for command in ("engram embed", "engram vsearch", "engram query", "engram models pull"):
        assert f"\n{command}" in everyday, command
    docs = sorted(p.name for p in (ROOT / "docs").glob("*.md"))
    assert [d for d in docs if f"(docs/{d})" not in readme] == []
