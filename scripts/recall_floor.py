"""Measure the vector-similarity floor recall uses (docs/memory.md, "Relevance floor").

Stores a set of agent facts in a scratch vault, embeds them with the configured embedding model
(default: all-MiniLM-L6-v2, as `engram models pull default` makes it), then reads the cosine
similarity between each query and each fact's passage, as vsearch computes it:

- related: a query that means the same as one fact, mostly in other words;
- unrelated: a query about something no fact is about (its best similarity to any fact).

A good floor sits above every unrelated best and below (nearly) every related pair.

    python scripts/recall_floor.py [--model PATH] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

FACTS = [
    "We decided to ship the mobile app on iOS first and Android in the autumn.",
    "Ana prefers decisions written down as notes before the weekly sync.",
    "The espresso blend is dialled in at 18 g in and 36 g out over 28 seconds.",
    "Payment provider PayFlow was chosen because it can pause subscriptions.",
    "Never deploy on Fridays: the last Friday release broke checkout for a day.",
    "Kenji leads the design of the subscription pause screen.",
    "The Casa Tostado roastery committed to 200 kg of beans per month.",
    "Customer churn rose after the price change in March.",
    "Backups of the production database run nightly at 02:00 UTC.",
    "Learned that the staging server needs 4 GB of RAM or the build fails.",
    "The onboarding email sequence has five messages over two weeks.",
    "Our support team answers tickets within one business day.",
    "Decided to store secrets in the system keyring, never in the repository.",
    "The warehouse in Rotterdam ships orders to Germany and the Netherlands.",
    "Tasting flight boxes are planned as a gift product for December.",
    "The API rate limit is 100 requests per minute per token.",
    "Maria from accounting needs invoices by the 25th of each month.",
    "The grinder burrs must be replaced every 500 kg of coffee.",
    "Use Postgres 16 for the analytics database, not MySQL.",
    "The team offsite is booked in Lisbon for the second week of June.",
    "Subscribers can skip a delivery up to three days before it ships.",
    "A/B test showed the annual plan converts better with a free grinder.",
    "The brand colours are dark roast brown and cream.",
    "Error: the CSV export times out for accounts with over 10,000 orders.",
]

# (query, index of the fact it means), worded mostly differently from the fact
RELATED = [
    ("which phone platform do we release on first", 0),
    ("how does Ana like choices to be documented", 1),
    ("espresso recipe dose and yield", 2),
    ("why did we pick that billing company", 3),
    ("is it ok to release at the end of the week", 4),
    ("who designs the screen for pausing a plan", 5),
    ("how much coffee does our roaster supply monthly", 6),
    ("did cancellations go up after we raised prices", 7),
    ("when are database backups taken", 8),
    ("memory requirements of the test server", 9),
    ("how many welcome emails do new customers get", 10),
    ("how fast do we reply to customer requests", 11),
    ("where do we keep passwords and API keys", 12),
    ("which countries does the Dutch warehouse serve", 13),
    ("christmas gift ideas for coffee lovers", 14),
    ("how many calls per minute can a client make", 15),
    ("deadline for sending bills to finance", 16),
    ("grinder maintenance schedule", 17),
    ("which database engine for reporting", 18),
    ("where is the company retreat this summer", 19),
    ("can customers postpone a shipment", 20),
    ("experiment results for yearly subscriptions", 21),
    ("what colours does our logo use", 22),
    ("exporting orders to a spreadsheet fails", 23),
]

UNRELATED = [
    "volcano eruption",
    "history of the roman empire",
    "how to knit a scarf",
    "quantum chromodynamics lecture notes",
    "best hiking trails in patagonia",
    "photosynthesis in desert plants",
    "medieval castle architecture",
    "symptoms of the common cold",
    "chess opening theory",
    "migration of humpback whales",
    "baking sourdough bread at home",
    "the rules of cricket",
    "jazz piano chord voicings",
    "how tides are caused by the moon",
    "renaissance painting techniques",
    "training a puppy to sit",
    "olympic swimming records",
    "origami crane instructions",
    "basalt rock formation",
    "the life cycle of a butterfly",
]


def measure(model: str | None) -> dict[str, object]:
    """Similarities of related and unrelated queries to the stored facts."""
    from engram import config
    from engram.service import Engram

    root = Path(tempfile.mkdtemp(prefix="engram-floor-"))
    for key in ("XDG_DATA_HOME", "XDG_CONFIG_HOME"):
        os.environ[key] = str(root / key.lower())
    if model:
        os.environ["ENGRAM_EMBED_MODEL"] = model
    e = Engram(config.resolve(os.environ))
    (root / "vault").mkdir()
    e.init_vault(str(root / "vault"))
    paths = [e.fact_add(text, importance=0.5).path for text in FACTS]
    e.embed()

    def sims(query: str) -> dict[str, float]:
        hits = e.vsearch(f'{query} path:"Engram/"', n=None)
        return {h.path: h.score for h in hits}

    related = [sims(q).get(paths[i], 0.0) for q, i in RELATED]
    unrelated = [max(sims(q).values(), default=0.0) for q in UNRELATED]
    model_id = e.embedding_state()["model"]
    e.close()
    return {"model": model_id, "related": related, "unrelated": unrelated}


def main() -> int:
    """Print both distributions and the gap between them."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", help="embedding model spec or path (default: configured)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    out = measure(args.model)
    related, unrelated = sorted(out["related"]), sorted(out["unrelated"])  # type: ignore[type-var]
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    print(f"model: {out['model']}")
    print(
        f"related pairs   n={len(related)}: min {related[0]:.3f}  p10 "
        f"{related[len(related) // 10]:.3f}  median {statistics.median(related):.3f}"
    )
    print(
        f"unrelated best  n={len(unrelated)}: max {unrelated[-1]:.3f}  median "
        f"{statistics.median(unrelated):.3f}"
    )
    print("related   :", " ".join(f"{s:.2f}" for s in related))
    print("unrelated :", " ".join(f"{s:.2f}" for s in unrelated))
    return 0


if __name__ == "__main__":
    sys.exit(main())
