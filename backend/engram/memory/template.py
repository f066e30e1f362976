"""The `new-fact.md` template for Obsidian's core Templates plugin, and where it goes.

The Templates plugin keeps its settings in `<config dir>/templates.json`; its `folder` key is
the vault-relative folder it offers templates from. Obsidian does not read templates from
hidden folders (its file index skips them), so the template must live in a visible folder:
that configured folder, or `Templates/` (the name people use most) when none is set yet.
"""

from __future__ import annotations

import json
from pathlib import Path

from engram.errors import ConflictError
from engram.memory.model import FACT_TYPES
from engram.memory.notes import Notes

TEMPLATE_NAME = "new-fact.md"
DEFAULT_FOLDER = "Templates"

TEMPLATE = f"""---
# A fact for Engram: write it below the properties. When Engram next indexes the note it
# adds an id and the other properties; an empty factType or importanceScore is inferred
# from your words. factType is one of:
# {", ".join(FACT_TYPES)}
title: "{{{{title}}}}"
factType:
timestamp: "{{{{date:YYYY-MM-DD[T]HH:mm:ssZ}}}}"
tags: []
entities: []
importanceScore:
confidence: 1.0
lifecycleState: active
createdBy: human
lastEditedBy: human
---

"""


def templates_folder(vault_root: Path, config_dir: str) -> tuple[str, str]:
    """(vault-relative templates folder, where that name came from)."""
    settings = vault_root / config_dir / "templates.json"
    try:
        data = json.loads(settings.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return DEFAULT_FOLDER, "default"
    folder = str(data.get("folder") or "").strip().strip("/") if isinstance(data, dict) else ""
    parts = folder.split("/")
    if not folder or any(p in ("", ".", "..") or p.startswith(".") for p in parts):
        return DEFAULT_FOLDER, "default"
    return folder, f"{config_dir}/templates.json"


def write_template(notes: Notes, rel: str) -> str:
    """Write the template unless a file is there: "written", or "kept" (never overwritten)."""
    try:
        notes.commit_one(rel, TEMPLATE, "")
    except ConflictError:
        return "kept"
    return "written"
