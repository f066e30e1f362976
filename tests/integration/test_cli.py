"""The `engram` command line on the tiny vault, run in-process; what start-up imports is checked
in new interpreters."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.conftest import EngramCli


@pytest.fixture
def cli_env(run: EngramCli, xdg: dict[str, str], tiny_vault: Path) -> dict[str, str]:
    env = {**xdg, "NO_COLOR": "1"}
    out = run(env, "collection", "add", str(tiny_vault), "--name", "notes")
    assert "6 documents" in out.stdout
    assert "Binary.md: skipped: binary" in out.stderr
    return env


def test_help_lists_commands(run: EngramCli) -> None:
    out = run({}, "--help").stdout
    for cmd in (
        "collection",
        "search",
        "get",
        "multi-get",
        "update",
        "status",
        "doctor",
        "bench",
        "context",
        "ls",
        "cleanup",
    ):
        assert cmd in out


@pytest.mark.slow
def test_the_cli_and_the_facade_import_lazily() -> None:
    """`engram --help` stays instant: a new interpreter shows what importing them loads."""
    code = (
        "import sys, engram.cli; sys.exit(0 if 'sqlite3' not in sys.modules and "
        "'markdown_it' not in sys.modules else 1)"
    )
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0
    # the facade itself (what every command builds) leaves the HTTP client for sync to load
    code = "import sys, engram.service; sys.exit(0 if 'aiohttp' not in sys.modules else 1)"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


# What `engram search` must not load: the models, the graph, parsing, the HTTP stack, and the
# facade parts no keyword search reaches (each is built, and its module imported, on first use).
NOT_FOR_SEARCH = (
    "numpy",
    "llama_cpp",
    "networkx",
    "igraph",
    "markdown_it",
    "aiohttp",
    "http.client",
    "engram.index.indexer",
    "engram.service.semantic",
    "engram.service.hybrid",
    "engram.service.graph",
    "engram.service.memory",
    "engram.service.memory_write",
    "engram.service.ledger",
    "engram.service.reflect",
    "engram.service.sync",
    "engram.service.notes",
    "engram.service.upkeep",
)


@pytest.mark.slow
def test_search_loads_only_what_it_uses(cli_env: dict[str, str]) -> None:
    code = (
        "import sys\n"
        "from engram.cli.main import main\n"
        "code = main(['search', 'pricing'])\n"
        "print('\\n'.join(sorted(sys.modules)), file=sys.stderr)\n"
        "sys.exit(code)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, **cli_env},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0 and "Pricing" in proc.stdout, proc.stderr
    loaded = set(proc.stderr.split())
    assert "engram.service.retrieval" in loaded  # the check looks at the right process
    assert sorted(loaded.intersection(NOT_FOR_SEARCH)) == []


def test_search_formats_parse(run: EngramCli, cli_env: dict[str, str]) -> None:
    rows = json.loads(run(cli_env, "search", "pricing", "--json").stdout)
    assert rows[0]["path"] == "Projects/Pricing.md"
    for key in ("docid", "collection", "path", "title", "score", "snippet", "line", "context"):
        assert key in rows[0]
    assert 0 < rows[0]["score"] <= 1
    table = list(csv.DictReader(io.StringIO(run(cli_env, "search", "pricing", "--csv").stdout)))
    assert table[0]["path"] == "Projects/Pricing.md"
    root = ET.fromstring(run(cli_env, "search", "pricing", "--xml").stdout)
    assert root.find("result").get("path") == "Projects/Pricing.md"  # type: ignore[union-attr]
    files = run(cli_env, "search", "pricing", "--files").stdout.splitlines()
    assert files[0].split(",")[2] == "notes/Projects/Pricing.md"
    md = run(cli_env, "search", "pricing", "--md").stdout
    assert md.startswith("## Pricing") and "**pricing**" in md.lower()
    human = run(cli_env, "search", "espresso").stdout
    assert human.splitlines()[0].startswith("notes/Café Notes.md:3")
    assert "\x1b[" not in human


def test_search_syntax_and_filters(run: EngramCli, cli_env: dict[str, str]) -> None:
    def paths(*args: str) -> list[str]:
        return [r["path"] for r in json.loads(run(cli_env, "search", *args, "--json").stdout)]

    assert paths("pricing", "tag:project") == ["Projects/Pricing.md"]
    assert paths("pricing -three") == ["Welcome.md"]
    assert paths('"usage based"') == ["Projects/Pricing.md"]
    assert paths("espress*") == ["Café Notes.md"]
    assert paths("type:decision") == ["Projects/Pricing.md"]
    assert paths("pricing", "path:Projects") == ["Projects/Pricing.md"]
    assert paths("京大") == ["日本語/東京.md"]
    assert paths("東京の研究") == ["日本語/東京.md"]  # partial CJK match
    assert paths("cafe")[0] == "Café Notes.md"  # diacritics folded
    assert paths("NOT AND (") == paths("not and")  # operators are plain words
    bad = run(cli_env, "search", "x", "after:someday", ok=False)
    assert bad.returncode == 1 and "after: expects a date" in bad.stderr


def test_get_and_did_you_mean(run: EngramCli, cli_env: dict[str, str], tiny_vault: Path) -> None:
    text = run(cli_env, "get", "notes/Projects/Pricing.md").stdout
    assert text.startswith("---\ntags: [project")
    docid = json.loads(run(cli_env, "search", "espresso", "--json").stdout)[0]["docid"]
    assert "espresso" in run(cli_env, "get", f"#{docid}").stdout
    part = run(cli_env, "get", "Projects/Pricing.md:11", "-l", "1", "--line-numbers").stdout
    assert part.strip() == "11: We decided on three tiers. ^tiers"
    assert "Welcome" in run(cli_env, "get", str(tiny_vault / "Welcome.md")).stdout
    assert "Welcome" in run(cli_env, "get", "engram://notes/Welcome").stdout
    miss = run(cli_env, "get", "Projects/Pricng.md", ok=False)
    assert miss.returncode == 1 and "did you mean: notes/Projects/Pricing.md" in miss.stderr


def test_multi_get(run: EngramCli, cli_env: dict[str, str]) -> None:
    docs = json.loads(
        run(cli_env, "multi-get", "notes/Projects/*.md,Welcome.md,nope.md", "--json").stdout
    )
    assert [(d["path"], d["note"]) for d in docs] == [
        ("Projects/Pricing.md", None),
        ("Welcome.md", None),
        ("nope.md", "not found"),
    ]
    capped = json.loads(run(cli_env, "multi-get", "**/*.md", "--max-bytes", "100", "--json").stdout)
    assert any(d["note"] and "over --max-bytes 100" in d["note"] for d in capped)
    root = ET.fromstring(run(cli_env, "multi-get", "Welcome.md", "--xml").stdout)
    assert root.find("document/title").text == "Welcome"  # type: ignore[union-attr]


def test_collections_contexts_ls_status(
    run: EngramCli, cli_env: dict[str, str], tiny_vault: Path
) -> None:
    run(cli_env, "context", "add", "/", "My personal knowledge base")
    run(cli_env, "context", "add", str(tiny_vault / "Projects"), "Work projects")
    contexts = json.loads(run(cli_env, "context", "list", "--json").stdout)
    assert {c["target"] for c in contexts} == {"/", "engram://notes/Projects"}
    row = json.loads(run(cli_env, "search", "tiers", "--json").stdout)[0]
    assert row["context"] == "My personal knowledge base\nWork projects"
    run(cli_env, "context", "rm", "engram://notes/Projects")
    row = json.loads(run(cli_env, "search", "tiers", "--json").stdout)[0]
    assert row["context"] == "My personal knowledge base"

    listing = json.loads(run(cli_env, "ls", "notes/Projects", "--json").stdout)
    assert [r["path"] for r in listing] == ["Projects/Pricing.md"]
    status = json.loads(run(cli_env, "status", "--json").stdout)
    assert status["documents"] == 6 and status["collections"][0]["documents"] == 6
    assert status["warnings"] == 1  # Broken.md
    cols = json.loads(run(cli_env, "collection", "list", "--json").stdout)
    assert cols[0]["name"] == "notes"
    dup = run(cli_env, "collection", "add", str(tiny_vault), "--name", "notes", ok=False)
    assert "already exists" in dup.stderr


def test_doctor_cleanup_update(run: EngramCli, cli_env: dict[str, str], tiny_vault: Path) -> None:
    proc = run(cli_env, "doctor", "--json", ok=False)
    doctor = json.loads(proc.stdout)
    status = {c["name"]: c["status"] for c in doctor}
    assert status["fts5"] == status["links notes"] == "ok"
    assert any(c["name"] == "notes with warnings" for c in doctor)
    # this environment has no embedding model prepared: a failed check, so exit 1
    assert (status["embed model"], proc.returncode) == ("fail", 1)
    (tiny_vault / "New.md").write_text("# New\n\nfresh words\n")
    out = json.loads(run(cli_env, "update", "--json").stdout)
    assert (out["added"], out["unchanged"]) == (1, 6)
    cleaned = json.loads(run(cli_env, "cleanup", "--json").stdout)
    assert cleaned["documentsRemoved"] == 0


def test_commonplace_config_file(
    run: EngramCli, xdg: dict[str, str], tiny_vault: Path, tmp_path: Path
) -> None:
    cfg = tmp_path / "commonplace.yml"
    cfg.write_text(f'collections:\n  kb:\n    path: {tiny_vault}\n    pattern: "**/*.md"\n')
    env = {**xdg, "NO_COLOR": "1"}
    run(env, "--config", str(cfg), "--index", "other", "update")
    rows = json.loads(
        run(env, "--config", str(cfg), "--index", "other", "search", "espresso", "--json").stdout
    )
    assert rows[0]["collection"] == "kb"
    assert (Path(xdg["XDG_DATA_HOME"]) / "engram" / "other.sqlite").exists()


def test_bench_on_a_small_beir_set(run: EngramCli, xdg: dict[str, str], tmp_path: Path) -> None:
    vault = tmp_path / "corpus"
    vault.mkdir()
    docs = {"d1": "cats purr and sleep", "d2": "dogs bark loudly", "d3": "cats and dogs"}
    for doc_id, text in docs.items():
        (vault / f"{doc_id}.md").write_text(f"# {doc_id}\n\n{text}\n")
    (tmp_path / "q.jsonl").write_text(
        '{"_id": "q1", "text": "sleeping cats"}\n{"_id": "q2", "text": "barking dogs"}\n'
    )
    (tmp_path / "qrels.tsv").write_text("query-id\tcorpus-id\tscore\r\nq1\td1\t1\r\nq2\td2\t1\r\n")
    env = {**xdg}
    run(env, "collection", "add", str(vault), "--name", "c")
    report = json.loads(
        run(
            env,
            "bench",
            "--queries",
            str(tmp_path / "q.jsonl"),
            "--qrels",
            str(tmp_path / "qrels.tsv"),
            "--run-out",
            str(tmp_path / "run"),
            "--json",
        ).stdout
    )
    assert report["queries"] == 2 and report["ndcg@10"] == 1.0
    assert (tmp_path / "run").read_text().splitlines()[0].startswith("q1 Q0 d1 1 ")
