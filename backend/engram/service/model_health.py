"""Model health for `status` and `doctor`: which stages of `query` would run, and why not.

`status` judges models from their files without loading them; `doctor` loads each configured
model (the reranker also scores one short pair) and reports the stages that will then run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from engram.errors import UnavailableError
from engram.models.protocols import ModelError
from engram.service.core import Check
from engram.service.semantic import ROLES
from engram.store import admin, vectors
from engram.store import documents as docs

if TYPE_CHECKING:
    from engram.models.protocols import Embedder, Generator, Reranker
    from engram.service.core import Core
    from engram.service.semantic import EmbeddingState

# query stage -> the model role it needs, and what the model is called in messages
STAGE_ROLES = {"expansion": ("generate", "generator"), "rerank": ("rerank", "reranker")}


class Models(Protocol):
    """The facade's models: what each role is configured as, its file, loaded once."""

    def model_spec(self, role: str) -> str | None: ...
    def model_path(self, role: str) -> Path: ...
    def embedder(self) -> Embedder: ...
    def reranker(self) -> Reranker: ...
    def generator(self) -> Generator: ...
    def embedding_state(self) -> EmbeddingState: ...


@dataclass(frozen=True)
class ModelState:
    """One role's model for the status bar."""

    id: str  # the loaded model's id, else its file's stem, else its spec ("" unconfigured)
    state: str  # "loaded", "available" or "missing"
    spec: str | None  # None: not configured


class ModelHealthService:
    """query_stages and model_status (for status), model_checks (for doctor): over the index
    `core` and the facade's `models`; `loaded` gives a role's model if this process has
    loaded it already (nothing is loaded to answer status)."""

    def __init__(
        self,
        core: Core,
        models: Models,
        loaded: Callable[[str], Embedder | Reranker | Generator | None],
    ) -> None:
        self._core = core
        self._models = models
        self._loaded = loaded

    def query_stages(self) -> dict[str, str]:
        """What `engram query` would run now: "on ..." or "off (why)" per stage.

        Cheap: nothing is loaded; a model not loaded yet is judged by its file's header
        (`engram doctor` loads the models to be sure)."""
        stages = {"keyword": "on", "vector": self._vector_stage()}
        for stage, (role, name) in STAGE_ROLES.items():
            stages[stage] = self._model_stage(role, name)
        return stages

    def _vector_stage(self) -> str:
        if not self._core.db.vec_available:
            return "off (sqlite-vec unavailable)"
        embedder = self._loaded("embed")
        if self._core.settings.embed_model is None and embedder is None:
            return "off (no embed model configured)"
        conn = self._core.db.conn
        stored = docs.get_meta(conn, "embed_model")
        if stored is None or not vectors.has_vectors(conn):
            return "off (no embeddings yet: run engram embed)"
        try:
            current = embedder.model_id if embedder else self._configured_embed_id()
        except UnavailableError as exc:
            return f"off (embed model unavailable: {exc.message})"
        if current != stored:
            return f"off (the index holds vectors of {stored}: run engram embed)"
        return "on"

    def _configured_embed_id(self) -> str:
        from engram.models import roles
        from engram.models.ggufinfo import read_info

        path = self._models.model_path("embed")
        try:
            roles.check(path, "embed")
            return read_info(path).model_id
        except ModelError as exc:
            raise UnavailableError(str(exc)) from None

    def _model_stage(self, role: str, name: str) -> str:
        from engram.models import roles

        if self._models.model_spec(role) is None:
            return f"off (no {name} model)"
        if self._loaded(role) is not None:
            return "on (loaded)"
        try:
            roles.check(self._models.model_path(role), role)
        except UnavailableError as exc:
            return f"off ({name} model unavailable: {exc.message})"
        except ModelError as exc:
            return f"off ({name} model unavailable: {exc})"
        return "on (loads on first query)"

    def model_status(self) -> dict[str, ModelState]:
        """Each role's model for the status bar: spec, id and loaded / available / missing."""
        out: dict[str, ModelState] = {}
        for role in ROLES:
            spec = self._models.model_spec(role)
            loaded = self._loaded(role)
            if loaded is not None:
                out[role] = ModelState(loaded.model_id, "loaded", spec)
            elif spec is None:
                out[role] = ModelState("", "missing", None)  # not configured
            else:
                try:
                    out[role] = ModelState(self._models.model_path(role).stem, "available", spec)
                except UnavailableError:
                    out[role] = ModelState(spec, "missing", spec)
        return out

    def model_checks(self) -> list[Check]:
        """Doctor checks: the llama.cpp build, each configured model loading, embedding
        coverage, and which stages `engram query` will run."""
        checks = [_build_check()]
        broken = set()
        for role in ROLES:
            check = self._role_check(role)
            checks.append(check)
            if check.status != "ok":
                broken.add(role)
        checks.append(self._coverage_check())
        stages = self.query_stages()
        for stage, role in (("vector", "embed"), *((s, r) for s, (r, _) in STAGE_ROLES.items())):
            if role in broken and stages[stage].startswith("on"):
                # loaded, but failed its check: a query would try it and go on without it
                stages[stage] = f"failed (see the {role} model line)"
        off = [
            name
            for name, how in stages.items()
            if not how.startswith("on") and self._stage_configured(name)
        ]
        checks.append(
            Check(
                "query stages",
                "warn" if off else "ok",
                ", ".join(f"{name} {how}" for name, how in stages.items()),
                f"see the {', '.join(off)} line(s) above" if off else None,
            )
        )
        return checks

    def _stage_configured(self, stage: str) -> bool:
        role = "embed" if stage == "vector" else STAGE_ROLES.get(stage, ("", ""))[0]
        return bool(role) and self._models.model_spec(role) is not None

    def _role_check(self, role: str) -> Check:
        name = f"{role} model"
        spec = self._models.model_spec(role)
        if spec is None:
            if role == "embed":
                return Check(name, "warn", "not configured", "set models.embed (docs/models.md)")
            stage = "expansion" if role == "generate" else "reranking"
            return Check(name, "ok", f"not configured (query runs without {stage})")
        try:
            path = self._models.model_path(role)
        except UnavailableError as exc:
            return Check(name, "fail" if role == "embed" else "warn", exc.message, _pull(spec))
        try:
            if role == "embed":
                model = self._models.embedder()
                loads = f"{model.model_id}, dim {model.dim}, loads"
            elif role == "rerank":
                reranker = self._models.reranker()
                try:
                    reranker.score("coffee", ["espresso"])  # one tiny pair: milliseconds
                except ModelError as exc:
                    raise UnavailableError(f"loads but cannot score: {exc}") from None
                loads = f"{reranker.model_id}, loads and scores"
            else:
                loads = f"{self._models.generator().model_id}, loads"
        except UnavailableError as exc:
            fix = f"point models.{role} at a working {role} GGUF (docs/models.md)"
            return Check(name, "fail" if role == "embed" else "warn", exc.message, fix)
        return Check(name, "ok", f"{spec} -> {path} ({loads})")

    def _coverage_check(self) -> Check:
        state = self._models.embedding_state()
        pending = state.chunks - state.embedded
        total = admin.totals(self._core.db.conn)["documents"]
        unchunked = total - state.documents_chunked
        ok = pending == 0 and unchunked == 0 and state.queued == 0
        return Check(
            "embeddings",
            "ok" if ok else "warn",
            f"{state.embedded}/{state.chunks} chunks embedded with "
            f"{state.model or 'no model'}; {unchunked} documents not chunked",
            None if ok else "engram embed",
        )


def _pull(spec: str) -> str:
    return f"engram models pull {spec}"


def _build_check() -> Check:
    """The llama.cpp build: portable, or native with AMX (quantized models crash)."""
    try:
        from engram.models.llama import system_info

        info = system_info()
    except Exception as exc:  # a missing or broken llama_cpp must not break doctor
        return Check(
            "llama.cpp build", "fail", f"llama_cpp does not load: {exc}", "scripts/install.sh"
        )
    if info.amx_build:
        return Check(
            "llama.cpp build",
            "fail",
            "native build with AMX: quantized models crash on this CPU",
            "scripts/install.sh (rebuilds llama-cpp-python portable)",
        )
    return Check("llama.cpp build", "ok", f"llama-cpp-python {info.version}, portable build")
