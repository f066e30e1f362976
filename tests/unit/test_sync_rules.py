"""sync/rules.py: the conflict rules of docs/convex.md, one row per rule."""

from __future__ import annotations

from typing import Any

import pytest

from engram.sync.payload import content_hash, normalized
from engram.sync.rules import decide

BASE = normalized(
    {
        "externalId": "f1",
        "title": "Espresso",
        "text": "Beans from Lisbon.",
        "factType": "decision",
        "timestamp": "2026-01-01T00:00:00Z",
        "tags": ["coffee"],
        "importanceScore": 0.5,
        "lifecycleState": "active",
    }
)


def with_(**changes: Any) -> dict[str, Any]:
    return normalized({**BASE, **changes})


THEIRS = with_(title="Theirs")


@pytest.mark.parametrize(
    ("mine", "theirs", "synced", "tomb", "kind", "written"),
    [
        (BASE, with_(title="Ristretto"), BASE, True, "archive", with_(lifecycleState="archived")),
        (with_(title="Same"), with_(title="Same"), BASE, False, "agree", with_(title="Same")),
        (BASE, with_(title="Ristretto"), BASE, False, "take", with_(title="Ristretto")),
        (
            with_(tags=["coffee", "mine"]),
            with_(title="Ristretto"),
            BASE,
            False,
            "merge",
            with_(title="Ristretto", tags=["coffee", "mine"]),
        ),
        (with_(title="Mine"), THEIRS, BASE, False, "conflict", THEIRS),
        (with_(title="Mine"), THEIRS, None, False, "conflict", THEIRS),
    ],
)
def test_each_rule(
    mine: dict[str, Any],
    theirs: dict[str, Any],
    synced: dict[str, Any] | None,
    tomb: bool,
    kind: str,
    written: dict[str, Any],
) -> None:
    synced_hash = content_hash(synced) if synced is not None else None
    d = decide(mine, theirs, synced_hash, synced, tomb)
    assert d.kind == kind
    assert content_hash(d.payload) == content_hash(written)
    assert d.agreed_hash == content_hash(theirs if kind != "archive" else written)
    assert (d.conflicts == ("title",)) == (kind == "conflict")
