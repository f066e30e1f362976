"""Model health for `status` and `doctor`: which stages of `query` would run, and why not."""

from __future__ import annotations

from typing import Any

from engram.errors import UnavailableError
from engram.models.protocols import ModelError
from engram.service.hybrid import HybridMixin
from engram.service.semantic import ROLES
from engram.store import documents as docs
from engram.store import vectors

# query stage -> the model role it needs, and what the model is called in messages
STAGE_ROLES = {"expansion": ("generate", "generator"), "rerank": ("rerank", "reranker")}


class ModelHealthMixin(HybridMixin):
    """query_stages (for status) and model_checks (for doctor)."""

    def query_stages(self) -> dict[str, str]:
        """What `engram query` would run now: "on ..." or "off (why)" per stage.

        Cheap: nothing is loaded; a model not loaded yet is judged by its file's header
        (`engram doctor` loads the models to be sure)."""
        stages = {"keyword": "on", "vector": self._vector_stage()}
        for stage, (role, name) in STAGE_ROLES.items():
            stages[stage] = self._model_stage(role, name)
        return stages

    def _vector_stage(self) -> str:
        if not self.db.vec_available:
            return "off (sqlite-vec unavailable)"
        if self.settings.embed_model is None and self._embedder is None:
            return "off (no embed model configured)"
        conn = self.db.conn
        stored = docs.get_meta(conn, "embed_model")
        if stored is None or vectors.vector_count(conn) == 0:
            return "off (no embeddings yet: run engram embed)"
        try:
            current = self._embedder.model_id if self._embedder else self._configured_embed_id()
        except UnavailableError as exc:
            return f"off (embed model unavailable: {exc.message})"
        if current != stored:
            return f"off (the index holds vectors of {stored}: run engram embed)"
        return "on"

    def _configured_embed_id(self) -> str:
        from engram.models import roles
        from engram.models.ggufinfo import read_info

        path = self.model_path("embed")
        try:
            roles.check(path, "embed")
            return read_info(path).model_id
        except ModelError as exc:
            raise UnavailableError(str(exc)) from None

    def _model_stage(self, role: str, name: str) -> str:
        from engram.models import roles

        if self.model_spec(role) is None:
            return f"off (no {name} model)"
        if getattr(self, f"_{name}") is not None:
            return "on (loaded)"
        try:
            roles.check(self.model_path(role), role)
        except UnavailableError as exc:
            return f"off ({name} model unavailable: {exc.message})"
        except ModelError as exc:
            return f"off ({name} model unavailable: {exc})"
        return "on (loads on first query)"

    def model_status(self) -> dict[str, dict[str, Any]]:
        """Each role's model for the status bar: spec, id and loaded / available / missing."""
        out: dict[str, dict[str, Any]] = {}
        for role in ROLES:
            spec = self.model_spec(role)
            loaded = {
                "embed": self._embedder,
                "rerank": self._reranker,
                "generate": self._generator,
            }[role]
            if loaded is not None:
                out[role] = {"id": loaded.model_id, "state": "loaded", "spec": spec}
            elif spec is None:
                out[role] = {"id": "", "state": "missing", "spec": None}  # not configured
            else:
                try:
                    path = self.model_path(role)
                    out[role] = {"id": path.stem, "state": "available", "spec": spec}
                except UnavailableError:
                    out[role] = {"id": spec, "state": "missing", "spec": spec}
        return out
