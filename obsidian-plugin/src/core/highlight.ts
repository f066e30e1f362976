/** Highlights: splitting a snippet at the API's offsets, and keeping only whole-word matches. */
import type { Run } from "./markdownText";

export interface Segment {
	text: string;
	hit: boolean;
}

/**
 * Offsets count Unicode code points (Python string indices), end exclusive. Out-of-range,
 * reversed and overlapping ranges are clamped and merged so any reply renders safely.
 */
export function segments(snippet: string, highlights: ReadonlyArray<readonly [number, number]>): Segment[] {
	const chars = Array.from(snippet);
	const n = chars.length;
	const ranges = highlights
		.map(([a, b]) => [Math.max(0, Math.min(n, Math.floor(a))), Math.max(0, Math.min(n, Math.floor(b)))] as const)
		.filter(([a, b]) => b > a)
		.sort((x, y) => x[0] - y[0]);
	const merged: Array<[number, number]> = [];
	for (const [a, b] of ranges) {
		const last = merged[merged.length - 1];
		if (last && a <= last[1]) last[1] = Math.max(last[1], b);
		else merged.push([a, b]);
	}
	const out: Segment[] = [];
	let pos = 0;
	for (const [a, b] of merged) {
		if (a > pos) out.push({ text: chars.slice(pos, a).join(""), hit: false });
		out.push({ text: chars.slice(a, b).join(""), hit: true });
		pos = b;
	}
	if (pos < n || out.length === 0) out.push({ text: chars.slice(pos).join(""), hit: false });
	return out;
}

/** Words a search ignores and a highlight should too (the backend drops them from queries). */
const STOPWORDS = new Set(
	(
		"a an and are as at be but by for from has have how i if in into is it its me my no not of on or our so " +
		"than that the their them then there these they this to was we were what when where which who why will " +
		"with you your do does did can could should would about after all also any been before being both each " +
		"he her here him his just more most only other out over own same she some such through too under until " +
		"up very while"
	).split(" "),
);

/** Scripts written without spaces: every matched character is a word of its own. */
const UNSPACED = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\p{Script=Thai}]/u;
const WORD = /[\p{L}\p{N}_]+(?:['’][\p{L}]+)*/gu;

function fold(s: string): string {
	return s.normalize("NFKD").replace(/\p{M}/gu, "").toLowerCase();
}

/**
 * The words of a recall query worth highlighting: no filters (`tag:x`), exclusions (`-word`),
 * stopwords or wildcard stars; quotes and a leading `?` removed.
 */
export function queryTerms(query: string): string[] {
	const out = new Set<string>();
	for (const token of query.replace(/^\s*\?/, "").split(/\s+/)) {
		if (token === "" || token.startsWith("-") || /^[A-Za-z_][\w.-]*:/.test(token)) continue;
		for (const w of fold(token).match(WORD) ?? []) {
			if (!STOPWORDS.has(w) && (w.length > 1 || UNSPACED.test(w))) out.add(w);
		}
	}
	return [...out];
}

function matchesTerm(word: string, terms: readonly string[]): boolean {
	return terms.some(
		(t) =>
			word === t ||
			(t.length >= 3 && word.startsWith(t)) ||
			(word.length >= 4 && t.startsWith(word) && t.length - word.length <= 3),
	);
}

/** Close enough to a query word to be its form: a shared start of ≥ 4 letters, or the word. */
function related(word: string, terms: readonly string[]): boolean {
	return terms.some((t) => {
		let n = 0;
		while (n < word.length && n < t.length && word[n] === t[n]) n++;
		return n === word.length || n === t.length ? Math.min(word.length, t.length) >= Math.min(4, Math.max(word.length, t.length)) : n >= 4;
	});
}

/**
 * Highlights on whole words only: a backend match that covers a word or its start (a stem),
 * or a word matching one of the query's `terms`, marks the whole word; a stray match inside a
 * word ("a" in "Bookmarks"), on a stopword or on punctuation is dropped.
 */
export function wholeWordHits(runs: readonly Run[], terms: readonly string[] = []): Run[] {
	const cells: Array<{ ch: string; hit: boolean; code: boolean }> = [];
	for (const r of runs) for (let i = 0; i < r.text.length; i++) cells.push({ ch: r.text[i] ?? "", hit: r.hit, code: r.code });
	const text = cells.map((c) => c.ch).join("");
	const hit = new Array<boolean>(cells.length).fill(false);
	let m: RegExpExecArray | null;
	WORD.lastIndex = 0;
	while ((m = WORD.exec(text)) !== null) {
		const start = m.index;
		const end = start + m[0].length;
		if (UNSPACED.test(m[0])) {
			for (let i = start; i < end; i++) hit[i] = cells[i]?.hit === true;
			continue;
		}
		const word = fold(m[0]);
		if (STOPWORDS.has(word) || word.length < 2) continue;
		let lead = 0;
		while (start + lead < end && cells[start + lead]?.hit) lead++;
		// The backend's stemmer matches "set" for "settings": with the query known, a highlight
		// has to look like one of its words too.
		const byBackend = (lead === end - start || lead >= 3) && (terms.length === 0 || related(word, terms));
		if (byBackend || matchesTerm(word, terms)) for (let i = start; i < end; i++) hit[i] = true;
	}
	const out: Run[] = [];
	cells.forEach((c, i) => {
		const h = hit[i] === true;
		const last = out[out.length - 1];
		if (last && last.hit === h && last.code === c.code) last.text += c.ch;
		else out.push({ text: c.ch, hit: h, code: c.code });
	});
	return out;
}

/** At most `max` characters of `runs`, cut at a word boundary with an ellipsis. */
export function clipRuns(runs: readonly Run[], max: number): Run[] {
	const total = runs.reduce((n, r) => n + r.text.length, 0);
	if (total <= max) return [...runs];
	const out: Run[] = [];
	let left = max;
	for (const r of runs) {
		if (left <= 0) break;
		if (r.text.length <= left) {
			out.push({ ...r });
			left -= r.text.length;
			continue;
		}
		let cut = r.text.slice(0, left);
		const space = cut.lastIndexOf(" ");
		if (space > left * 0.5) cut = cut.slice(0, space);
		out.push({ ...r, text: cut });
		left = 0;
	}
	const last = out[out.length - 1];
	if (last) last.text = last.text.replace(/[\s·,;:]+$/, "");
	out.push({ text: "…", hit: false, code: false });
	return out;
}
