"""No function in backend/ is longer than a screen (STYLE.md: readable in one sitting)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "backend" / "engram"
MAX_LINES = 60


def long_functions() -> dict[str, int]:
    """Every function (methods and nested ones included) over MAX_LINES, with its length."""
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > MAX_LINES:
                    out[f"{path.relative_to(PACKAGE).as_posix()}:{node.name}"] = length
    return out


def test_no_function_is_longer_than_the_limit() -> None:
    assert long_functions() == {}, f"split these (at most {MAX_LINES} lines each)"
