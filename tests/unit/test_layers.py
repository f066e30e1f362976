"""The module map of DESIGN.md, enforced: who may import whom."""

from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "backend" / "engram"
ARCHITECTURE = PACKAGE.parents[1] / "docs" / "architecture.md"
ANYONE = {"errors", "printable", "codec", "__init__", "__version__"}  # stdlib-only helpers


def module_map() -> dict[str, set[str]]:
    """Layer -> the engram layers it may import, read from docs/architecture.md's table (the
    table a reader sees is the rule the test applies)."""
    row = re.compile(r"^\| `(\w+)(?:\.py|/)` \|[^\n]*\| ([^|\n]*) \|$", re.M)
    rows = row.findall(ARCHITECTURE.read_text())
    assert len(rows) >= 14, "docs/architecture.md lost its module table"
    out = {}
    for layer, allowed in rows:
        out[layer] = set(re.findall(r"`(\w+)`", allowed))
    return out


ALLOWED = module_map()
# third-party modules only one layer may touch
OWNED = {
    "llama_cpp": {"models"},
    "sqlite3": {"store"},
    "sqlean": {"store"},
    "sqlite_vec": {"store"},
    "networkx": {"graph"},
    "igraph": {"graph"},
    "mcp": {"mcp_server"},
}


def layer_of(path: Path) -> str:
    rel = path.relative_to(PACKAGE)
    return rel.parts[0].removesuffix(".py") if rel.parts else "__init__"


def imports(path: Path) -> list[str]:
    """Every module a file imports, relative imports made absolute."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = ["engram", *path.relative_to(PACKAGE).parent.parts]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            out.append(module)
            if module == "engram" or (node.level and not node.module):
                out += [f"{module}.{a.name}" for a in node.names]
    return out


def test_every_module_respects_the_module_map() -> None:
    problems = []
    files = sorted(PACKAGE.rglob("*.py"))
    assert len(files) > 20
    for path in files:
        layer = layer_of(path)
        if layer in ANYONE or layer == "__main__":
            continue
        assert layer in ALLOWED, f"{path}: layer {layer} is not in the module map"
        for name in imports(path):
            parts = name.split(".")
            if parts[0] == "engram" and len(parts) > 1:
                target = parts[1]
                if target != layer and target not in ANYONE and target not in ALLOWED[layer]:
                    problems.append(f"{path.relative_to(PACKAGE)} imports {name}")
            elif parts[0] in OWNED and layer not in OWNED[parts[0]]:
                problems.append(f"{path.relative_to(PACKAGE)} imports {name}")
    assert problems == []


def test_nothing_imports_the_adapters() -> None:
    for path in PACKAGE.rglob("*.py"):
        layer = layer_of(path)
        for name in imports(path):
            parts = name.split(".")
            if (
                len(parts) > 1
                and parts[0] == "engram"
                and parts[1] in {"cli", "server", "mcp_server"}
            ):
                assert layer in {"cli", parts[1], "__main__"}, f"{path} imports {name}"


def test_the_facade_is_composed_not_a_mixin_chain() -> None:
    """Engram holds its parts, each given what it needs: a class inheriting facade parts (a
    mixin) would share private state and shadow names silently. Nothing in service/ is named
    *Mixin, and Engram's only base in the package is the core."""
    from engram.service import Engram
    from engram.service.core import Core

    mixins = []
    for path in sorted((PACKAGE / "service").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        mixins += [
            f"{path.name}:{node.name}"
            for node in ast.walk(tree)
            if isinstance(node, ast.ClassDef) and node.name.endswith("Mixin")
        ]
    assert mixins == []
    own = [c for c in Engram.__mro__ if c.__module__.startswith("engram.")]
    assert own == [Engram, Core]


def test_relative_imports_are_checked_too() -> None:
    vault = PACKAGE / "vault" / "parse.py"
    assert "engram.vault.yamlload" in imports(vault)
    assert ALLOWED["graph"] >= {"store"} and "service" not in ALLOWED["graph"]


def test_no_face_chooses_a_transport() -> None:
    # the composition root's DaemonEngram decides where a call runs and what a daemon that
    # stops answering means; a face that catches its error has made that choice again
    for face in ("cli", "mcp_server", "server"):
        for path in sorted((PACKAGE / face).rglob("*.py")):
            text = path.read_text(encoding="utf-8")
            assert "DaemonUnreachable" not in text, path.relative_to(PACKAGE)
