"""Settings: flags > ENGRAM_* environment > config file > defaults, and the XDG paths.

Only composition roots (the CLI entry, the server app factory, the MCP entry) call `resolve`;
everything else receives the frozen `Settings` it returns.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from engram.errors import EngramError

DEFAULT_INDEX = "index"
# notes, PDFs and canvases (docs/attachments.md): what Obsidian shows in a vault, attachments
# such as images aside
DEFAULT_PATTERN = "**/*.{md,pdf,canvas}"
DEFAULT_MAX_FILE_BYTES = 5_000_000
DEFAULT_EMBED_MODEL = "default"
MODEL_ROLES = ("embed", "rerank", "generate")
DEFAULT_FACTS_ROOT = "Engram"
DEFAULT_CONFIG_DIR = ".obsidian"
DEFAULT_SYNC_INTERVAL = 60


class ConfigError(EngramError):
    """The config file or a setting is invalid; the message says what to fix."""

    code = "config"


@dataclass(frozen=True)
class Collection:
    """A folder indexed under a name, with its glob, ignore rules and contexts."""

    name: str
    path: Path
    pattern: str = DEFAULT_PATTERN
    ignore: tuple[str, ...] = ()
    contexts: tuple[tuple[str, str], ...] = ()  # (path prefix starting with "/", text)


@dataclass(frozen=True)
class SyncSettings:
    """Where a vault's facts sync to (docs/convex.md); the credentials live in the keyring."""

    url: str  # https://<name>.convex.cloud
    device: str = ""  # this machine's name in Convex's provenance fields
    interval: int = DEFAULT_SYNC_INTERVAL  # seconds between the daemon's sync runs


@dataclass(frozen=True)
class Vault:
    """A collection that is an Obsidian vault holding agent memory (see docs/memory.md)."""

    name: str  # the collection's name
    facts_root: str = DEFAULT_FACTS_ROOT  # vault-relative folder for fact notes
    config_dir: str = DEFAULT_CONFIG_DIR  # Obsidian's config folder name
    sync: SyncSettings | None = None  # Convex sync, when set up


@dataclass(frozen=True)
class MemorySettings:
    """Lifecycle and recall tuning for facts."""

    dormant_after_days: int = 30
    archive_after_days: int = 180
    half_life_days: int = 30
    observations_keep_days: int = 90  # ledger days kept in place; older ones go to the archive
    # recall keeps a fact the keyword list missed only when its passage is at least this
    # similar to the query (cosine); measured for all-MiniLM-L6-v2 by scripts/recall_floor.py
    min_similarity: float = 0.30


@dataclass(frozen=True)
class Settings:
    """Everything the facade needs to know, resolved once per process."""

    index_name: str
    data_dir: Path
    cache_dir: Path
    config_dir: Path
    config_file: Path
    collections: tuple[Collection, ...] = ()
    global_context: str = ""
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    embed_model: str | None = DEFAULT_EMBED_MODEL
    rerank_model: str | None = None
    generate_model: str | None = None
    n_threads: int = 2
    vaults: tuple[Vault, ...] = ()
    default_vault: str | None = None
    memory: MemorySettings = MemorySettings()
    crash_after_renames: int | None = None  # testing aid (ENGRAM_TEST_CRASH_AFTER_RENAMES)
    test_now: dt.datetime | None = None  # testing aid: a stopped clock (ENGRAM_TEST_NOW)
    raw: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)
    # the fields the environment set: a config file read again leaves them as they are
    from_env: frozenset[str] = frozenset()

    @property
    def db_path(self) -> Path:
        """The SQLite index file for this index name."""
        return self.data_dir / f"{self.index_name}.sqlite"

    def collection(self, name: str) -> Collection | None:
        """The collection called `name`, if configured."""
        return next((c for c in self.collections if c.name == name), None)

    def vault(self, name: str) -> Vault | None:
        """The vault registered under a collection name, if any."""
        return next((v for v in self.vaults if v.name == name), None)

    def find_vault(self, name: str | None) -> Vault | None:
        """The vault a memory call acts on: named by its collection or its folder, else the
        default one; None when there is no such vault."""
        name = name or self.default_vault
        if name is None:
            return None
        found = self.vault(name)
        if found is not None:
            return found
        try:
            wanted = Path(name).expanduser().resolve()
        except (OSError, RuntimeError):
            return None
        for cand in self.vaults:
            col = self.collection(cand.name)
            if col is not None and col.path.resolve() == wanted:
                found = cand
        return found


def xdg_dir(env: Mapping[str, str], var: str, fallback: str) -> Path:
    """`$VAR/engram`, or `~/<fallback>/engram` when the variable is unset or empty."""
    base = env.get(var) or str(Path.home() / fallback)
    return Path(base).expanduser() / "engram"


def resolve(
    env: Mapping[str, str],
    index: str | None = None,
    config_file: str | os.PathLike[str] | None = None,
) -> Settings:
    """Build Settings from flags (arguments), the environment and the config file."""
    index_name = index or env.get("ENGRAM_INDEX") or DEFAULT_INDEX
    if not index_name.replace("-", "").replace("_", "").replace(".", "").isalnum():
        raise ConfigError(f"index name {index_name!r} may only use letters, digits, - _ .")
    data_dir = xdg_dir(env, "XDG_DATA_HOME", ".local/share")
    cache_dir = xdg_dir(env, "XDG_CACHE_HOME", ".cache")
    config_dir = xdg_dir(env, "XDG_CONFIG_HOME", ".config")
    cfg_path = Path(config_file or env.get("ENGRAM_CONFIG") or config_dir / f"{index_name}.yml")
    raw = load_config_file(cfg_path.expanduser())
    overrides: dict[str, Any] = {}
    if env.get("ENGRAM_MAX_FILE_BYTES"):
        overrides["max_file_bytes"] = _positive_int(
            env["ENGRAM_MAX_FILE_BYTES"], "ENGRAM_MAX_FILE_BYTES"
        )
    for role in MODEL_ROLES:
        if f"ENGRAM_{role.upper()}_MODEL" in env:
            overrides[f"{role}_model"] = _model_spec(env[f"ENGRAM_{role.upper()}_MODEL"])
    if env.get("ENGRAM_TEST_CRASH_AFTER_RENAMES"):
        crash = env["ENGRAM_TEST_CRASH_AFTER_RENAMES"]
        if not crash.isdigit():
            raise ConfigError("ENGRAM_TEST_CRASH_AFTER_RENAMES must be a number of renames")
        overrides["crash_after_renames"] = int(crash)
    if env.get("ENGRAM_TEST_NOW"):
        overrides["test_now"] = _moment(env["ENGRAM_TEST_NOW"], "ENGRAM_TEST_NOW")
    if env.get("ENGRAM_THREADS"):
        overrides["n_threads"] = _positive_int(env["ENGRAM_THREADS"], "ENGRAM_THREADS")
    return replace(
        from_raw(raw),
        index_name=index_name,
        data_dir=data_dir,
        cache_dir=cache_dir,
        config_dir=config_dir,
        config_file=cfg_path.expanduser(),
        from_env=frozenset(overrides),
        **overrides,
    )


# What the config file decides (unless the environment set it): what `reread` takes anew.
FROM_FILE = (
    "collections",
    "global_context",
    "max_file_bytes",
    "embed_model",
    "rerank_model",
    "generate_model",
    "n_threads",
    "vaults",
    "default_vault",
    "memory",
    "raw",
)


def reread(settings: Settings, raw: Mapping[str, Any]) -> Settings:
    """`settings` with what the config file decides taken from `raw` (the file's new content),
    keeping what the environment set; ConfigError when `raw` is not a valid config."""
    fresh = from_raw(raw)
    return replace(
        settings,
        **{name: getattr(fresh, name) for name in FROM_FILE if name not in settings.from_env},
    )


def from_raw(raw: Mapping[str, Any]) -> Settings:
    """Typed settings from a parsed config mapping (paths filled in by `resolve`)."""
    cols_raw = raw.get("collections") or {}
    if not isinstance(cols_raw, Mapping):
        raise ConfigError("'collections' must be a mapping of name -> {path, pattern, ...}")
    collections = tuple(_collection(str(name), spec) for name, spec in cols_raw.items())
    max_bytes = raw.get("max_file_bytes", DEFAULT_MAX_FILE_BYTES)
    models = raw.get("models") or {}
    if not isinstance(models, Mapping):
        raise ConfigError("'models' must be a mapping: {embed, rerank, generate, n_threads}")
    unknown = set(models) - {*MODEL_ROLES, "n_threads"}
    if unknown:
        raise ConfigError(f"unknown key(s) under 'models': {', '.join(sorted(unknown))}")
    vaults, default_vault = _vaults(raw, {c.name for c in collections})
    return Settings(
        index_name=DEFAULT_INDEX,
        data_dir=Path(),
        cache_dir=Path(),
        config_dir=Path(),
        config_file=Path(),
        collections=collections,
        global_context=str(raw.get("global_context") or ""),
        max_file_bytes=_positive_int(max_bytes, "max_file_bytes"),
        embed_model=_model_spec(models.get("embed", DEFAULT_EMBED_MODEL)),
        rerank_model=_model_spec(models.get("rerank")),
        generate_model=_model_spec(models.get("generate")),
        n_threads=_positive_int(models.get("n_threads", default_threads()), "models.n_threads"),
        vaults=vaults,
        default_vault=default_vault,
        memory=_keeps_a_week(_memory(raw.get("memory"))),
        raw=dict(raw),
    )


def _vaults(raw: Mapping[str, Any], collections: set[str]) -> tuple[tuple[Vault, ...], str | None]:
    """`vaults: {collection: {facts_root, config_dir}}` and `default_vault`."""
    spec = raw.get("vaults") or {}
    if not isinstance(spec, Mapping):
        raise ConfigError("'vaults' must be a mapping of collection name -> {facts_root, ...}")
    out = []
    for name, v in spec.items():
        v = v or {}
        if not isinstance(v, Mapping):
            raise ConfigError(f"vault {name!r} must be a mapping (facts_root, config_dir)")
        if str(name) not in collections:
            continue  # its collection was removed: the vault entry is inert
        root = str(v.get("facts_root") or DEFAULT_FACTS_ROOT).strip().strip("/")
        cfg_dir = str(v.get("config_dir") or DEFAULT_CONFIG_DIR).strip().strip("/")
        if not root or ".." in root.split("/") or root.startswith("."):
            raise ConfigError(f"vault {name!r}: facts_root must be a visible folder in the vault")
        if not cfg_dir.startswith(".") or "/" in cfg_dir:
            raise ConfigError(
                f"vault {name!r}: config_dir must be a dot-folder name like .obsidian"
            )
        out.append(Vault(str(name), root, cfg_dir, _sync(str(name), v.get("sync"))))
    default = raw.get("default_vault")
    if default is not None and str(default) not in {v.name for v in out}:
        default = None
    return tuple(out), None if default is None else str(default)


def _sync(vault: str, spec: Any) -> SyncSettings | None:
    """`vaults.<name>.sync: {url, device, interval}` (written by `engram sync init`)."""
    if spec is None:
        return None
    if not isinstance(spec, Mapping) or not spec.get("url"):
        raise ConfigError(f"vault {vault!r}: sync needs a 'url' (run engram sync init)")
    url = str(spec["url"]).strip().rstrip("/")
    if not url.startswith(("https://", "http://")):
        raise ConfigError(f"vault {vault!r}: sync url must be https://... ({url!r})")
    return SyncSettings(
        url=url,
        device=str(spec.get("device") or ""),
        interval=_positive_int(spec.get("interval", DEFAULT_SYNC_INTERVAL), "sync.interval"),
    )


def _memory(spec: Any) -> MemorySettings:
    if spec is None:
        return MemorySettings()
    if not isinstance(spec, Mapping):
        raise ConfigError("'memory' must be a mapping (dormant_after_days, ...)")
    base = MemorySettings()
    return MemorySettings(
        **{
            key: _positive_int(spec.get(key, getattr(base, key)), f"memory.{key}")
            for key in (
                "dormant_after_days",
                "archive_after_days",
                "half_life_days",
                "observations_keep_days",
            )
        },
        min_similarity=_fraction(
            spec.get("min_similarity", base.min_similarity), "memory.min_similarity"
        ),
    )


def _keeps_a_week(memory: MemorySettings) -> MemorySettings:
    if memory.observations_keep_days < 7:  # wake reads the last 7 days of the ledger
        raise ConfigError("memory.observations_keep_days must be 7 or more")
    return memory


def _collection(name: str, spec: Any) -> Collection:
    if isinstance(spec, str):  # shorthand: name: /path
        spec = {"path": spec}
    if not isinstance(spec, Mapping) or not spec.get("path"):
        raise ConfigError(f"collection {name!r} needs a 'path'")
    ignore = spec.get("ignore") or ()
    if isinstance(ignore, str):
        ignore = (ignore,)
    contexts = spec.get("context") or {}
    if isinstance(contexts, str):
        contexts = {"/": contexts}
    return Collection(
        name=name,
        path=Path(str(spec["path"])).expanduser(),
        pattern=str(spec.get("pattern") or spec.get("mask") or DEFAULT_PATTERN),
        ignore=tuple(str(g) for g in ignore),
        contexts=tuple(sorted((normalize_prefix(k), str(v)) for k, v in contexts.items())),
    )


def _model_spec(value: Any) -> str | None:
    """A model spec, or None for "no model" (null, "", none, off)."""
    if value is None:
        return None
    text = str(value).strip()
    return None if text.lower() in ("", "none", "off", "null") else text


def default_threads() -> int:
    """llama.cpp threads: the CPU count, at most 8 (more rarely helps small models)."""
    return max(1, min(os.cpu_count() or 2, 8))


def background_threads(n_threads: int) -> int:
    """llama.cpp threads for the daemon's background embedding: `n_threads`, less one core
    left free for searches and the user on machines with more than two."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    cores = cores or 2
    return max(1, min(n_threads, cores - 1)) if cores > 2 else n_threads


def normalize_prefix(prefix: str) -> str:
    """'/a/b/' and 'a/b' both become '/a/b'; the root is '/'."""
    return "/" + str(prefix).strip().strip("/")


def _positive_int(value: Any, what: str) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{what} must be a whole number, got {value!r}") from None
    if number <= 0:
        raise ConfigError(f"{what} must be positive, got {number}")
    return number


def _moment(value: str, what: str) -> dt.datetime:
    """An ISO 8601 date-time; one without a zone is UTC."""
    try:
        moment = dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise ConfigError(f"{what} must be an ISO 8601 date-time, got {value!r}") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)


def _fraction(value: Any, what: str) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{what} must be a number from 0 to 1, got {value!r}") from None
    if not 0.0 <= number <= 1.0:
        raise ConfigError(f"{what} must be from 0 to 1, got {number}")
    return number


def load_config_file(path: Path) -> dict[str, Any]:
    """The parsed YAML config, or {} when the file does not exist."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ConfigError(f"cannot read config {path}: {exc.strerror}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"config {path} is not valid YAML: {exc}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"config {path} must be a YAML mapping at the top level")
    return data


def dump_config(data: Mapping[str, Any]) -> str:
    """The config mapping as YAML text, keys in insertion order."""
    return yaml.safe_dump(dict(data), sort_keys=False, allow_unicode=True)
