"""Retrieval quality metrics for BEIR-format benchmarks (trec_eval conventions).

Pure functions: a run is {query id: {doc id: score}}, qrels are {query id: {doc id: grade}}.
Gains are linear (the grade), ties in score are broken by doc id in descending order as
trec_eval does, and only queries with at least one judged document are evaluated.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from pathlib import Path

Run = Mapping[str, Mapping[str, float]]
Qrels = Mapping[str, Mapping[str, int]]


def ranked(scores: Mapping[str, float]) -> list[str]:
    """Doc ids best first; equal scores ordered by doc id descending (trec_eval)."""
    by_id = sorted(scores, reverse=True)
    return sorted(by_id, key=lambda d: -scores[d])


def ndcg_at(ranking: list[str], judged: Mapping[str, int], k: int) -> float:
    """Normalised discounted cumulative gain at k with linear gains."""
    dcg = sum(judged.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ranking[:k]))
    ideal = sorted((g for g in judged.values() if g > 0), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg > 0 else 0.0


def recall_at(ranking: list[str], judged: Mapping[str, int], k: int) -> float:
    """Share of the relevant documents found in the top k."""
    relevant = {d for d, g in judged.items() if g > 0}
    if not relevant:
        return 0.0
    return len(relevant.intersection(ranking[:k])) / len(relevant)


def mrr_at(ranking: list[str], judged: Mapping[str, int], k: int) -> float:
    """Reciprocal rank of the first relevant document within the top k."""
    for i, d in enumerate(ranking[:k]):
        if judged.get(d, 0) > 0:
            return 1.0 / (i + 1)
    return 0.0


def evaluate(run: Run, qrels: Qrels) -> dict[str, float]:
    """Mean nDCG@10, Recall@10, Recall@100 and MRR@10 over the judged queries."""
    qids = [q for q, judged in qrels.items() if any(g > 0 for g in judged.values())]
    if not qids:
        return {"ndcg@10": 0.0, "recall@10": 0.0, "recall@100": 0.0, "mrr@10": 0.0, "queries": 0}
    totals = {"ndcg@10": 0.0, "recall@10": 0.0, "recall@100": 0.0, "mrr@10": 0.0}
    for q in qids:
        ranking = ranked(run.get(q, {}))
        judged = qrels[q]
        totals["ndcg@10"] += ndcg_at(ranking, judged, 10)
        totals["recall@10"] += recall_at(ranking, judged, 10)
        totals["recall@100"] += recall_at(ranking, judged, 100)
        totals["mrr@10"] += mrr_at(ranking, judged, 10)
    out = {k: v / len(qids) for k, v in totals.items()}
    out["queries"] = len(qids)
    return out


def percentile(values: list[float], pct: float) -> float:
    """Nearest-rank percentile (0 for no values)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    index = max(0, math.ceil(pct / 100 * len(ordered)) - 1)
    return ordered[index]


def load_queries(path: Path) -> list[tuple[str, str]]:
    """(id, text) from a BEIR queries.jsonl."""
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
            out.append((str(obj["_id"]), str(obj["text"])))
        except (ValueError, KeyError, TypeError):
            raise ValueError(f"{path}:{n}: expected a JSON object with _id and text") from None
    return out


def load_qrels(path: Path) -> dict[str, dict[str, int]]:
    """BEIR/TREC qrels (query-id, corpus-id, score; tab or space separated, header allowed)."""
    out: dict[str, dict[str, int]] = {}
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        parts = line.replace("\r", "").split()
        if not parts:
            continue
        if len(parts) == 4:  # TREC: qid 0 docid grade
            parts = [parts[0], parts[2], parts[3]]
        if len(parts) != 3:
            raise ValueError(f"{path}:{n}: expected query-id, corpus-id and score")
        try:
            grade = int(float(parts[2]))
        except ValueError:
            if n == 1:
                continue  # header
            raise ValueError(f"{path}:{n}: score {parts[2]!r} is not a number") from None
        out.setdefault(parts[0], {})[parts[1]] = grade
    return out


def run_lines(run: Run, tag: str = "engram") -> Iterable[str]:
    """A TREC run file: `qid Q0 docid rank score tag` lines."""
    for qid, scores in run.items():
        for rank, doc in enumerate(ranked(scores), 1):
            yield f"{qid} Q0 {doc} {rank} {scores[doc]:.6f} {tag}"
