/** The numbers behind a recall result, for the details a person asks for (like `--explain`). */

function num(v: unknown): number | null {
	return typeof v === "number" && Number.isFinite(v) ? v : null;
}

function listName(name: string): string {
	const [kind, variant] = name.split(":", 2);
	const what = kind === "bm25" ? "keywords" : kind === "vec" ? "meaning" : (kind ?? name);
	return variant && variant !== "original" ? `${what} (${variant})` : what;
}

/** `explain` of a hybrid result as short phrases: "keywords #1 (0.83)", "rerank 0.91". */
export function explainParts(explain: Record<string, unknown> | null): string[] {
	if (!explain) return [];
	const out: string[] = [];
	const lists = explain.lists;
	if (typeof lists === "object" && lists !== null) {
		for (const [name, v] of Object.entries(lists as Record<string, unknown>)) {
			const o = typeof v === "object" && v !== null ? (v as Record<string, unknown>) : {};
			const rank = num(o.rank);
			const score = num(o.score);
			out.push(`${listName(name)}${rank !== null ? ` #${rank}` : ""}${score !== null ? ` (${score.toFixed(2)})` : ""}`);
		}
	}
	const rrf = num(explain.rrf);
	if (rrf !== null) out.push(`fused ${rrf.toFixed(4)}`);
	const rerank = num(explain.rerank);
	if (rerank !== null) out.push(`rerank ${rerank.toFixed(2)}`);
	return out;
}

/** One line of details: score, place, and how a deep search got there. */
export function detailsLine(score: number | null, rank: number, explain: Record<string, unknown> | null): string {
	const parts = [score === null ? "recent fact" : `score ${score.toFixed(3)}`, `#${rank}`, ...explainParts(explain)];
	return parts.join(" · ");
}
