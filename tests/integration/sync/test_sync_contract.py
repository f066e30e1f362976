"""The sync engine against a real Convex deployment, only when one is configured:
CONVEX_URL (https://<name>.convex.cloud) and ENGRAM_SYNC_TOKEN (the deployment's token),
optionally CONVEX_DEPLOY_KEY. The fact it writes is deleted (tombstoned) at the end."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from engram import config
from engram.service import Engram

URL, TOKEN = os.environ.get("CONVEX_URL"), os.environ.get("ENGRAM_SYNC_TOKEN")
pytestmark = pytest.mark.skipif(
    not (URL and TOKEN), reason="set CONVEX_URL and ENGRAM_SYNC_TOKEN to run against Convex"
)


def test_a_real_deployment_round_trip(tmp_path: Path) -> None:
    assert URL and TOKEN
    key = os.environ.get("CONVEX_DEPLOY_KEY")
    machines = []
    for name in ("contract-a", "contract-b"):
        env = {
            "XDG_DATA_HOME": str(tmp_path / name / "data"),
            "XDG_CONFIG_HOME": str(tmp_path / name / "config"),
            "XDG_CACHE_HOME": str(tmp_path / name / "cache"),
            "ENGRAM_EMBED_MODEL": "none",
        }
        eng = Engram(config.resolve(env))
        (tmp_path / name / "vault").mkdir(parents=True)
        eng.init_vault(str(tmp_path / name / "vault"), name="vault")
        eng.sync_init(URL, TOKEN, f"Convex {key}" if key else None, device=name)
        machines.append(eng)
    a, b = machines
    try:
        fact = a.fact_add(f"Contract test fact {os.getpid()}: Convex keeps what Engram sends.")
        assert a.sync_now(pull=False).pushed == 1
        found = b.sync_now()
        assert found.error is None
        got = b.fact_get(fact.id)
        assert got.text == fact.text and got.fact_type == fact.fact_type
        hits = b.deep_search("Convex keeps what Engram sends", n=5, vault="vault")
        assert any(h.hit.fact and h.hit.fact.id == fact.id for h in hits.hits)
        root = a.memory.vault("vault").root
        (root / a.fact_get(fact.id).path).unlink()
        a.update(["vault"])
        assert a.sync_now().deleted == 1
        assert b.sync_now().archived == 1
    finally:
        for eng in machines:
            eng.close()
