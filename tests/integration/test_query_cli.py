"""`engram search / vsearch / query` from the command line (in-process CliRunner, tiny real
GGUF models): filter flags, --explain, broken models."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engram import config
from engram.service import Engram
from tests.conftest import EngramCli, Ran, isolated_env

EXAMPLE = Path(__file__).resolve().parents[1] / "fixtures" / "vaults" / "example"


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory, tiny) -> Iterator[Engram]:  # type: ignore[no-untyped-def]
    """The example vault indexed and embedded once with the tiny BERT embedder, in an
    isolated XDG environment the CLI reads too."""
    root = tmp_path_factory.mktemp("query-cli")
    with isolated_env(root, NO_COLOR="1", ENGRAM_EMBED_MODEL=str(tiny.embed)):
        e = Engram(config.resolve(os.environ))
        e.collection_add(str(EXAMPLE), "example")
        e.update()
        e.embed()
        yield e
        e.close()


def invoke(*args: str, ok: bool = True) -> Ran:
    """`engram ARGS` in-process, in the module's environment (the `run` fixture's own would
    replace it)."""
    return EngramCli()({}, *args, ok=ok)


def paths(*args: str) -> list[str]:
    rows: list[dict[str, Any]] = json.loads(invoke(*args, "--json", "--no-daemon").stdout)
    return [r["path"] for r in rows]


@pytest.mark.parametrize("role", ["rerank", "generate"])
def test_query_survives_a_model_that_does_not_load(
    example: Engram, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, role: str
) -> None:
    junk = tmp_path / "junk.gguf"
    junk.write_bytes(b"GGUF" + b"\0" * 64)
    monkeypatch.setenv(f"ENGRAM_{role.upper()}_MODEL", str(junk))
    out = invoke("query", "pricing tiers", "--explain", "--no-daemon")
    stage = "rerank" if role == "rerank" else "expansion"
    assert f"stage {stage}: off ({'reranker' if role == 'rerank' else 'generator'}" in out.stderr
    assert "warning: no " in out.stderr and "junk.gguf" in out.stderr
    assert "Projects/Pricing Model.md" in out.stdout


@pytest.mark.parametrize("mode", ["search", "vsearch", "query"])
@pytest.mark.parametrize(
    ("flags", "inline", "expected"),
    [
        (["--path", "People/"], "path:People/", {"People/Ana Ruiz.md", "People/Kenji Sato.md"}),
        (["--path", "People/Ana"], "path:People/Ana", {"People/Ana Ruiz.md"}),
        (["--tag", "person"], "tag:person", {"People/Ana Ruiz.md", "People/Kenji Sato.md"}),
        (["--tag", "project", "--tag", "area/business"], "tag:project tag:area/business", None),
        (["--type", "decision"], "type:decision", {"Projects/Pricing Model.md"}),
        (["--where", "status:active"], "status:active", None),
        (["--where", "role:Design Lead"], 'role:"Design Lead"', {"People/Kenji Sato.md"}),
        (["--after", "2024-04", "--before", "2024-05-01"], "after:2024-04 before:2024-05-01", None),
    ],
)
def test_filter_flags_match_the_inline_syntax(
    example: Engram, mode: str, flags: list[str], inline: str, expected: set[str] | None
) -> None:
    words = "coffee pricing design growth subscribers"
    by_flags = paths(mode, words, *flags, "-n", "20")
    assert by_flags == paths(mode, f"{words} {inline}", "-n", "20")
    assert by_flags, "the filter must leave something to compare"
    if expected is not None:
        assert set(by_flags) == expected
    if "--after" in flags:
        assert set(by_flags) == {"Projects/Pricing Model.md"}  # dated 2024-04-18
    if "status:active" in flags:
        assert set(by_flags) == {"Projects/Pricing Model.md", "Projects/Mobile App.md"}


def test_filter_flags_combine_with_inline_filters(example: Engram) -> None:
    got = paths("search", "pricing tag:project", "--path", "Projects/", "--type", "decision")
    assert got == ["Projects/Pricing Model.md"]


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--after", "someday"], "--after: expects a date"),
        (["--where", "decision"], "--where expects KEY:VALUE"),
    ],
)
def test_bad_filter_flags_are_usage_errors(example: Engram, flags: list[str], message: str) -> None:
    bad = invoke("search", "coffee", *flags, ok=False)
    assert bad.returncode == 1 and f"error: {message}" in bad.stderr


def test_status_shows_models_and_the_query_stages_that_would_run(  # type: ignore[no-untyped-def]
    example: Engram, tiny, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ENGRAM_RERANK_MODEL", str(tiny.rerank))
    monkeypatch.setenv("ENGRAM_GENERATE_MODEL", str(tiny.chat))
    info = json.loads(invoke("status", "--json").stdout)
    assert info["models"]["rerank"] == {
        "id": "rerank",
        "state": "available",
        "spec": str(tiny.rerank),
    }
    assert info["models"]["generate"]["state"] == "available"
    assert info["queryStages"] == {
        "keyword": "on",
        "vector": "on",
        "expansion": "on (loads on first query)",
        "rerank": "on (loads on first query)",
    }
    human = invoke("status").stdout
    emb = info["embeddings"]
    assert "vector search: available" in human
    assert f"embeddings: {emb['embedded']}/{emb['chunks']} passages embedded (embed@" in human
    assert "rerank model:   rerank (available)" in human
    assert "query stages: keyword on, vector on, expansion on (loads on first query)" in human

    junk = tmp_path / "junk.gguf"
    junk.write_bytes(b"GGUF" + b"\0" * 64)
    monkeypatch.setenv("ENGRAM_RERANK_MODEL", str(junk))
    monkeypatch.setenv("ENGRAM_GENERATE_MODEL", str(tiny.embed))  # an encoder: cannot generate
    monkeypatch.setenv("ENGRAM_EMBED_MODEL", str(tiny.embed_q8))  # not the model of the vectors
    stages = json.loads(invoke("status", "--json").stdout)["queryStages"]
    assert stages["rerank"].startswith("off (reranker model unavailable: ")
    assert "junk.gguf is not a readable GGUF file" in stages["rerank"]
    assert stages["expansion"].startswith("off (generator model unavailable: embed.gguf is an")
    assert stages["vector"].startswith("off (the index holds vectors of embed@")
    monkeypatch.delenv("ENGRAM_EMBED_MODEL")
    monkeypatch.setenv("ENGRAM_EMBED_MODEL", str(tiny.embed))
    ran = Engram(config.resolve(os.environ)).query_run("pricing")
    assert ran.stages["rerank"].startswith("off (reranker model unavailable")
    assert ran.stages["expansion"].startswith("off (generator model unavailable")


def test_status_without_models_says_why_each_stage_is_off(
    xdg: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ENGRAM_EMBED_MODEL", "off")
    Engram(config.resolve(os.environ)).collection_add(str(EXAMPLE), "example")
    info = json.loads(invoke("status", "--json").stdout)
    assert info["queryStages"] == {
        "keyword": "on",
        "vector": "off (no embed model configured)",
        "expansion": "off (no generator model)",
        "rerank": "off (no reranker model)",
    }
    human = invoke("status").stdout
    assert "embeddings: 0/0 passages embedded (no model yet)" in human
    assert "embed model:    - (not configured)" in human


def test_explain_json_carries_the_stage_summary(  # type: ignore[no-untyped-def]
    example: Engram, tiny, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ENGRAM_RERANK_MODEL", str(tiny.rerank))
    monkeypatch.setenv("ENGRAM_GENERATE_MODEL", str(tiny.chat))
    words = "subscribers pausing deliveries"
    out = json.loads(invoke("query", words, "--explain", "--json", "--no-daemon").stdout)
    assert set(out) == {"results", "stages", "expansions", "notices"}
    assert out["stages"]["vector"] == "ran" and out["stages"]["rerank"].startswith("ran")
    assert out["stages"]["expansion"].startswith("ran")  # no strong keyword hit to skip it
    assert out["expansions"] and all(isinstance(e, str) for e in out["expansions"])
    assert out["notices"] == []
    assert out["results"] and all(r["explain"]["lists"] for r in out["results"])
    human = invoke("query", words, "--explain", "--no-daemon")
    for stage, what in out["stages"].items():
        assert f"stage {stage}: {what}" in human.stderr
    for i, text in enumerate(out["expansions"], 1):
        assert f"expansion {i}: {text}" in human.stderr
    plain = json.loads(invoke("query", words, "--json", "--no-daemon").stdout)
    assert isinstance(plain, list) and [r["path"] for r in plain] == [
        r["path"] for r in out["results"]
    ]
    csv_out = invoke("query", words, "--explain", "--csv", "--no-daemon")
    assert csv_out.stdout.startswith("docid,score") and "stage rerank: ran" in csv_out.stderr


def test_doctor_loads_the_models_and_says_which_query_stages_run(  # type: ignore[no-untyped-def]
    example: Engram, tiny, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ENGRAM_RERANK_MODEL", str(tiny.rerank))
    monkeypatch.setenv("ENGRAM_GENERATE_MODEL", str(tiny.chat))
    checks = {c["name"]: c for c in json.loads(invoke("doctor", "--json").stdout)}
    assert checks["rerank model"]["status"] == "ok"
    assert checks["rerank model"]["detail"].endswith("loads and scores)")
    assert checks["generate model"]["status"] == "ok"
    assert checks["generate model"]["detail"].endswith("loads)")
    assert checks["query stages"] == {
        "name": "query stages",
        "status": "ok",
        "detail": "keyword on, vector on, expansion on (loaded), rerank on (loaded)",
        "fix": None,
    }

    junk = tmp_path / "junk.gguf"
    junk.write_bytes(b"GGUF" + b"\0" * 64)
    monkeypatch.setenv("ENGRAM_RERANK_MODEL", str(junk))
    monkeypatch.setenv("ENGRAM_GENERATE_MODEL", str(tiny.embed))  # an encoder: cannot generate
    result = invoke("doctor", "--json")  # warnings only: exit code 0
    checks = {c["name"]: c for c in json.loads(result.stdout)}
    assert checks["rerank model"]["status"] == "warn"
    assert "junk.gguf is not a readable GGUF file" in checks["rerank model"]["detail"]
    assert checks["rerank model"]["fix"].startswith("point models.rerank at a working")
    assert checks["generate model"]["status"] == "warn"
    assert "not a text generator" in checks["generate model"]["detail"]
    stages = checks["query stages"]
    assert stages["status"] == "warn" and stages["fix"] == "see the expansion, rerank line(s) above"
    assert "expansion off (generator model unavailable: " in stages["detail"]
    assert "rerank off (reranker model unavailable: " in stages["detail"]
    human = invoke("doctor").stdout
    assert (
        "[WARN] rerank model: " in human and "[WARN] query stages: keyword on, vector on" in human
    )


def test_doctor_reports_a_reranker_that_loads_but_cannot_score(  # type: ignore[no-untyped-def]
    example: Engram, tiny, monkeypatch: pytest.MonkeyPatch
) -> None:
    import engram.models.llama_rerank as llama_rerank
    from engram.models.protocols import ModelError

    class Broken:
        model_id = "rerank@broken"

        def score(self, query: str, documents: object) -> list[float]:
            raise ModelError("llama.cpp failed to evaluate the pair")

    # looked up at load time; patching the class would miss an instance cached earlier
    monkeypatch.setattr(llama_rerank, "load_reranker", lambda path, n_threads: Broken())
    monkeypatch.setenv("ENGRAM_RERANK_MODEL", str(tiny.rerank))
    checks = {c["name"]: c for c in json.loads(invoke("doctor", "--json").stdout)}
    assert checks["rerank model"]["status"] == "warn"
    assert checks["rerank model"]["detail"] == (
        "loads but cannot score: llama.cpp failed to evaluate the pair"
    )
    assert checks["query stages"]["status"] == "warn"
    assert "rerank failed (see the rerank model line)" in checks["query stages"]["detail"]
