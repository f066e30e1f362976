"""A JSON Canvas read as markdown (vault/canvas.py), and hostile canvases bounded."""

from __future__ import annotations

import json
import time

import pytest

from engram.vault.canvas import MAX_GROUPS, MAX_NODES, CanvasFile, read_canvas


def node(kind: str, x: float, y: float, w: float = 100, h: float = 50, **fields: object) -> dict:
    return {"id": f"{kind}{x}{y}", "type": kind, "x": x, "y": y, "width": w, "height": h, **fields}


def test_groups_are_headings_over_the_nodes_inside_them() -> None:
    canvas = {
        "nodes": [
            node("group", 0, 0, 1000, 1000, label="Plan"),
            node("group", 50, 500, 400, 400, label="Risks"),
            node("text", 100, 100, text="Ship **beta** in May"),
            node("file", 100, 600, file="Notes/Risk log.md", subpath="#Open"),
            node("text", 2000, 0, text="Loose idea [[Someday]]"),
            node("link", 2000, 200, url="https://example.com"),
            node("file", 100, 300, file="Specs/API.md"),
        ],
        "edges": [{"id": "e", "fromNode": "a", "toNode": "b", "label": "next"}],
    }
    read = read_canvas(json.dumps(canvas))
    assert read.text.split("\n") == [
        "Loose idea [[Someday]]",
        "",
        "https://example.com",
        "",
        "# Plan",
        "",
        "Ship **beta** in May",
        "",
        "[[Specs/API.md]]",
        "",
        "## Risks",
        "",
        "[[Notes/Risk log.md#Open]]",
        "",
    ]
    assert read.files == (
        CanvasFile("Specs/API.md", None, 9),
        CanvasFile("Notes/Risk log.md", "#Open", 13),
    )
    assert read.warnings == ()


def test_text_that_starts_like_frontmatter_stays_text() -> None:
    read = read_canvas(json.dumps({"nodes": [node("text", 0, 0, text="---\ntitle: x\n---")]}))
    assert read.text.startswith("\n---")


@pytest.mark.parametrize(
    "source",
    [
        "{not json",
        "[" * 100_000 + "]" * 100_000,
        '{"nodes": {"a": 1}}',
        '"a string"',
        '{"nodes": [1, "x", null, {"type": "text", "text": 5}, {"type": "bogus"}]}',
    ],
    ids=["invalid", "deep", "nodes-not-a-list", "not-an-object", "odd-nodes"],
)
def test_what_is_no_canvas_gives_no_text_and_no_exception(source: str) -> None:
    read = read_canvas(source)
    assert read.files == ()
    assert read.text == "" or read.text.strip() == ""


def test_odd_coordinates_do_not_matter() -> None:
    nodes = [
        {"type": "text", "text": "one", "x": "12", "y": None},
        {"type": "text", "text": "two", "x": True, "y": 1e308 * 10},
        {"type": "group", "label": "G", "x": -1e400, "y": 0, "width": -5, "height": 3},
    ]
    read = read_canvas(json.dumps({"nodes": nodes}).replace("Infinity", "1e999"))
    assert "one" in read.text and "two" in read.text


def test_too_many_nodes_and_groups_are_cut_with_warnings_in_bounded_time() -> None:
    groups = [node("group", i, i, 10_000, 10_000, label=f"G{i}") for i in range(MAX_GROUPS + 50)]
    texts = [node("text", i, i, text=f"t{i}") for i in range(MAX_NODES)]
    started = time.monotonic()
    read = read_canvas(json.dumps({"nodes": groups + texts}))
    assert time.monotonic() - started < 20
    assert any(f"over {MAX_NODES:,} nodes" in w for w in read.warnings)
    assert any(f"over {MAX_GROUPS:,} groups" in w for w in read.warnings)
    assert read.text.count("\n#") <= MAX_GROUPS


def test_a_canvas_is_written_back_as_obsidian_writes_it() -> None:
    """The bench's sample.canvas (from obsidianmd/jsoncanvas) comes back byte for byte."""
    from pathlib import Path

    from engram.vault.canvas_relink import dump_canvas

    sample = Path(__file__).resolve().parents[3] / "shared/bench/attachments/sample.canvas"
    if not sample.is_file():
        pytest.skip(f"{sample} is not here")
    text = sample.read_text()
    assert dump_canvas(json.loads(text)) == text.rstrip("\n")
