/**
 * Related notes with the reasons a person can check: links between the notes, links they
 * share, tags they share, and closeness in meaning (vectors) or in words (keywords) from the
 * backend. Pure: the Obsidian layer hands in a snapshot of the link graph and tags.
 */

export interface VaultGraph {
	/** source → target → count, resolved links only (Obsidian's `resolvedLinks`). */
	links: Readonly<Record<string, Readonly<Record<string, number>>>>;
	/** note → its tags, lower case with `#`. */
	tags: ReadonlyMap<string, readonly string[]>;
	/** A note's display title. */
	title(path: string): string;
}

export interface Scored {
	path: string;
	title: string;
	score: number;
}

export interface RelatedQuery {
	path: string;
	/** Links written in the part being looked at (a section), or null for the whole note. */
	sectionLinks: readonly string[] | null;
	/** Nearest notes by meaning (backend vectors), best first. */
	meaning: readonly Scored[];
	/** Best notes by shared words (backend keyword search), when nothing is embedded. */
	words: readonly Scored[];
	/** Left out (Engram's generated notes, the facts folder for ordinary notes). */
	exclude?: (path: string) => boolean;
}

export type ReasonKind = "links-here" | "linked" | "shared-links" | "co-cited" | "tags" | "meaning" | "words";

export interface Reason {
	kind: ReasonKind;
	/** How much it added to the note's score (reasons are listed strongest first). */
	weight: number;
	/** Short words for a chip: "links here", "3 shared links", "#tag". */
	label: string;
	/** Longer words for a tooltip: which links, which tags, the number behind a score. */
	detail: string;
}

export interface RelatedEntry {
	path: string;
	title: string;
	score: number;
	reasons: Reason[];
}

/** Inverse of `links`, cached per graph object (rebuilt when the graph snapshot changes). */
const incomingCache = new WeakMap<object, Map<string, Map<string, number>>>();

export function incoming(graph: VaultGraph): Map<string, Map<string, number>> {
	const cached = incomingCache.get(graph.links);
	if (cached) return cached;
	const inv = new Map<string, Map<string, number>>();
	for (const [src, targets] of Object.entries(graph.links)) {
		for (const [dst, n] of Object.entries(targets)) {
			let m = inv.get(dst);
			if (!m) inv.set(dst, (m = new Map<string, number>()));
			m.set(src, n);
		}
	}
	incomingCache.set(graph.links, inv);
	return inv;
}

/** Hubs (a note everything links to, a tag on every note) say little: weigh by rarity. */
function rarity(n: number): number {
	return 1 / Math.log2(2 + n);
}

function list(names: string[], max = 3): string {
	const shown = names.slice(0, max).join(", ");
	return names.length > max ? `${shown} and ${names.length - max} more` : shown;
}

class Board {
	private readonly entries = new Map<string, RelatedEntry>();
	constructor(
		private readonly graph: VaultGraph,
		private readonly skip: (path: string) => boolean,
	) {}

	add(path: string, score: number, reason: Omit<Reason, "weight">, title?: string): void {
		if (this.skip(path)) return;
		let e = this.entries.get(path);
		if (!e) this.entries.set(path, (e = { path, title: title ?? this.graph.title(path), score: 0, reasons: [] }));
		e.score += score;
		e.reasons.push({ ...reason, weight: score });
	}

	top(n: number): RelatedEntry[] {
		const out = [...this.entries.values()].sort((a, b) => b.score - a.score || a.title.localeCompare(b.title)).slice(0, n);
		for (const e of out) {
			const both = e.reasons.findIndex((r) => r.kind === "linked");
			const back = e.reasons.findIndex((r) => r.kind === "links-here");
			if (both >= 0 && back >= 0) {
				const w = (e.reasons[both]?.weight ?? 0) + (e.reasons[back]?.weight ?? 0);
				e.reasons = e.reasons.filter((_, i) => i !== both && i !== back);
				e.reasons.push({ kind: "linked", weight: w, label: "linked both ways", detail: "Each links to the other" });
			}
			e.reasons.sort((a, b) => b.weight - a.weight);
		}
		return out;
	}
}

function outgoingOf(graph: VaultGraph, q: RelatedQuery): string[] {
	if (q.sectionLinks !== null) return [...new Set(q.sectionLinks)];
	return Object.keys(graph.links[q.path] ?? {});
}

/** The `n` most related notes to `q.path`, each with why. */
export function relatedNotes(graph: VaultGraph, q: RelatedQuery, n = 20): RelatedEntry[] {
	const md = (p: string): boolean => p.endsWith(".md");
	const board = new Board(graph, (p) => p === q.path || !md(p) || (q.exclude?.(p) ?? false));
	const inv = incoming(graph);
	const out = outgoingOf(graph, q).filter(md);
	const into = [...(inv.get(q.path)?.keys() ?? [])].filter((p) => p !== q.path);

	for (const t of out) board.add(t, 1, { kind: "linked", label: "linked from here", detail: `This ${q.sectionLinks ? "section" : "note"} links to it` });
	if (q.sectionLinks === null) {
		for (const s of into) board.add(s, 1, { kind: "links-here", label: "links here", detail: "It links to this note" });
	}

	// Notes linking to the same notes as this one.
	const shared = new Map<string, { weight: number; names: string[] }>();
	for (const t of out) {
		const sources = inv.get(t);
		if (!sources) continue;
		const w = rarity(sources.size);
		for (const s of sources.keys()) {
			if (s === q.path) continue;
			const e = shared.get(s) ?? { weight: 0, names: [] };
			e.weight += w;
			e.names.push(graph.title(t));
			shared.set(s, e);
		}
	}
	for (const [p, e] of shared) {
		const label = e.names.length === 1 ? "1 shared link" : `${e.names.length} shared links`;
		board.add(p, 0.8 * e.weight, { kind: "shared-links", label, detail: `Both link to ${list(e.names)}` });
	}

	// Notes linked from the same note as this one (siblings in a list, a map of content).
	if (q.sectionLinks === null) {
		const cited = new Map<string, { weight: number; names: string[] }>();
		for (const s of into) {
			const targets = Object.keys(graph.links[s] ?? {});
			const w = rarity(targets.length);
			for (const t of targets) {
				if (t === q.path) continue;
				const e = cited.get(t) ?? { weight: 0, names: [] };
				e.weight += w;
				e.names.push(graph.title(s));
				cited.set(t, e);
			}
		}
		for (const [p, e] of cited) {
			const label = e.names.length === 1 ? `${e.names[0] ?? ""} links to both` : `${e.names.length} notes link to both`;
			board.add(p, 0.5 * e.weight, { kind: "co-cited", label, detail: `Both are linked from ${list(e.names)}` });
		}
	}

	// Shared tags.
	const mine = new Set(graph.tags.get(q.path) ?? []);
	if (mine.size > 0) {
		const counts = new Map<string, number>();
		for (const tags of graph.tags.values()) for (const t of tags) if (mine.has(t)) counts.set(t, (counts.get(t) ?? 0) + 1);
		for (const [p, tags] of graph.tags) {
			const common = tags.filter((t) => mine.has(t));
			if (common.length === 0) continue;
			const w = common.reduce((s, t) => s + rarity(counts.get(t) ?? 1), 0);
			board.add(p, 0.7 * w, { kind: "tags", label: list(common, 2), detail: `Both tagged ${common.join(" ")}` });
		}
	}

	const top = (xs: readonly Scored[]): number => Math.max(1e-9, ...xs.map((x) => x.score));
	const bestMeaning = top(q.meaning);
	for (const r of q.meaning) {
		board.add(r.path, 1.6 * (r.score / bestMeaning), { kind: "meaning", label: "similar meaning", detail: `Close in meaning (similarity ${r.score.toFixed(2)})` }, r.title);
	}
	const bestWords = top(q.words);
	for (const r of q.words) {
		board.add(r.path, 1.2 * (r.score / bestWords), { kind: "words", label: "similar words", detail: `Shares uncommon words (keyword score ${r.score.toFixed(2)})` }, r.title);
	}
	return board.top(n);
}

/** A note's or section's text as a keyword query: words only, no query syntax, ≤ `max` chars. */
export function keywordQuery(text: string, max = 1800): string {
	const words = text
		.replace(/[":*()[\]{}<>|\\^~=]/g, " ")
		.split(/\s+/)
		.map((w) => w.replace(/^[-#]+/, ""))
		.filter((w) => w.length > 1);
	let out = "";
	for (const w of words) {
		if (out.length + w.length + 1 > max) break;
		out += (out ? " " : "") + w;
	}
	return out;
}
