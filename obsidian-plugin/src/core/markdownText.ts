/**
 * Markdown as a person reads it: links as their display text, no heading, list, table or
 * emphasis markers, code kept apart as code. Works on the backend's snippets, whose whitespace
 * is already collapsed to single spaces (so line structure is gone), and on context lines.
 *
 * Every character keeps its origin, so the highlight offsets the backend sent for the raw
 * snippet still mark the same words in the readable text.
 */

export interface Run {
	text: string;
	/** A match to highlight. */
	hit: boolean;
	/** Inline or fenced code, shown in a code font. */
	code: boolean;
}

export interface ReadableOptions {
	/** Link targets that point at the note being looked at (its backlinks): shown as matches. */
	isSelfLink?: (linkpath: string) => boolean;
}

/** Attachments embedded with `![[…]]` (icons, images, PDFs) carry no words worth showing. */
const ATTACHMENT = /\.(?:png|jpe?g|gif|webp|svg|bmp|avif|pdf|mp3|wav|m4a|ogg|flac|webm|mp4|mov|mkv|ogv|canvas|base)$/i;

const MASK = "\uFFFF";

/** Per UTF-16 unit: dropped, code, inserted text before it, highlighted. */
class Marks {
	readonly drop: boolean[];
	readonly code: boolean[];
	readonly hit: boolean[];
	readonly before = new Map<number, string>();

	constructor(readonly src: string) {
		const n = src.length;
		this.drop = new Array<boolean>(n).fill(false);
		this.code = new Array<boolean>(n).fill(false);
		this.hit = new Array<boolean>(n).fill(false);
	}

	/** The source with dropped and code units masked, so later patterns never see them. */
	masked(): string {
		let out = "";
		for (let i = 0; i < this.src.length; i++) out += this.drop[i] || this.code[i] ? MASK : this.src[i];
		return out;
	}

	dropRange(a: number, b: number): void {
		for (let i = Math.max(0, a); i < Math.min(b, this.src.length); i++) this.drop[i] = true;
	}

	insert(at: number, text: string): void {
		this.before.set(at, (this.before.get(at) ?? "") + text);
	}

	/** Run `re` (global) over the masked source; `fn` gets each match and its start. */
	each(re: RegExp, fn: (m: RegExpExecArray) => void): void {
		const text = this.masked();
		re.lastIndex = 0;
		let m: RegExpExecArray | null;
		while ((m = re.exec(text)) !== null) {
			if (m[0] === "") {
				re.lastIndex++;
				continue;
			}
			fn(m);
		}
	}
}

/** Code-point offsets (Python indices, as the API sends them) → UTF-16 unit offsets. */
function unitOffsets(s: string): number[] {
	const out: number[] = [];
	let unit = 0;
	for (const ch of s) {
		out.push(unit);
		unit += ch.length;
	}
	out.push(unit);
	return out;
}

function markHighlights(marks: Marks, highlights: ReadonlyArray<readonly [number, number]>): void {
	const units = unitOffsets(marks.src);
	const last = units.length - 1;
	for (const [a, b] of highlights) {
		const from = units[Math.max(0, Math.min(last, Math.floor(a)))] ?? 0;
		const to = units[Math.max(0, Math.min(last, Math.floor(b)))] ?? 0;
		for (let i = from; i < to; i++) marks.hit[i] = true;
	}
}

function fences(m: Marks): void {
	const found: Array<[number, number]> = [];
	m.each(/(`{3,}|~{3,})[\w+#.-]*/g, (x) => found.push([x.index, x.index + x[0].length]));
	// Pairs in order; an opener without its closer (the snippet was cut) runs to the end.
	for (let i = 0; i < found.length; i += 2) {
		const open = found[i];
		if (!open) break;
		const close = found[i + 1];
		m.dropRange(open[0], open[1]);
		const end = close ? close[0] : m.src.length;
		for (let j = open[1]; j < end; j++) m.code[j] = true;
		if (close) m.dropRange(close[0], close[1]);
	}
}

function inlineCode(m: Marks): void {
	m.each(/(`+)(?!`)([\s\S]*?[^`])\1(?!`)/g, (x) => {
		const tick = x[1]?.length ?? 1;
		const start = x.index;
		const end = start + x[0].length;
		m.dropRange(start, start + tick);
		m.dropRange(end - tick, end);
		for (let i = start + tick; i < end - tick; i++) m.code[i] = true;
	});
}

function comments(m: Marks): void {
	m.each(/%%[\s\S]*?(?:%%|$)|<!--[\s\S]*?(?:-->|$)/g, (x) => m.dropRange(x.index, x.index + x[0].length));
}

/** `[[path#heading|display]]` (or `![[…]]`, `!` at `bang`) as the words a reader sees. */
function wikiLink(m: Marks, start: number, inner: string, bang: boolean, opts: ReadableOptions): void {
	const open = start + (bang ? 3 : 2);
	const end = open + inner.length + 2;
	m.dropRange(start, open);
	m.dropRange(end - 2, end);
	const pipe = inner.search(/\\?\|/);
	const target = pipe >= 0 ? inner.slice(0, pipe) : inner;
	const hash = target.indexOf("#");
	const linkpath = hash >= 0 ? target.slice(0, hash) : target;
	if (bang && ATTACHMENT.test(linkpath.trim())) {
		m.dropRange(start, end);
		return;
	}
	let shownFrom = open;
	let shownTo = open + inner.length;
	if (pipe >= 0 && inner.slice(pipe).replace(/^\\?\|/, "").trim() !== "") {
		const bar = inner[pipe] === "\\" ? 2 : 1;
		m.dropRange(open, open + pipe + bar);
		shownFrom = open + pipe + bar;
	} else {
		if (pipe >= 0) {
			m.dropRange(open + pipe, open + inner.length);
			shownTo = open + pipe;
		}
		// The file name without folders or ".md"; `#A#B` as "A › B"; a block id not at all.
		const slash = linkpath.lastIndexOf("/");
		if (slash >= 0) m.dropRange(open, open + slash + 1);
		if (/\.md$/i.test(linkpath)) m.dropRange(open + linkpath.length - 3, open + linkpath.length);
		if (hash >= 0) {
			const sub = target.slice(hash);
			const block = sub.indexOf("#^");
			if (block >= 0) m.dropRange(open + hash + block, open + target.length);
			const headings = block >= 0 ? sub.slice(0, block) : sub;
			for (let i = 0; i < headings.length; i++) {
				if (headings[i] !== "#") continue;
				const at = open + hash + i;
				m.dropRange(at, at + 1);
				if (i > 0 || linkpath.trim() !== "") m.insert(at, " › ");
			}
		}
	}
	if (opts.isSelfLink?.(linkpath.trim())) {
		for (let i = shownFrom; i < shownTo; i++) if (!m.drop[i]) m.hit[i] = true;
	}
}

function links(m: Marks, opts: ReadableOptions): void {
	// Masked code may sit inside a link (`[[#\`move\`|move]]`): offsets are what matter here.
	m.each(/(!?)\[\[([^\]\n]*)\]\]/g, (x) => wikiLink(m, x.index, x[2] ?? "", x[1] === "!", opts));
	// A snippet cut inside a link: `[[Note#Head…` at the end, `…Note|shown]]` at the start.
	m.each(/(!?)\[\[([^\]\n\uFFFF]*)$/g, (x) => {
		const inner = (x[2] ?? "").replace(/…$/, "");
		if (x[1]) {
			// a cut embed is most often an icon or an image: nothing to read
			m.dropRange(x.index, x.index + 3 + inner.length);
			return;
		}
		wikiLink(m, x.index, inner, false, opts);
		// wikiLink dropped two characters after `inner` for the closing brackets: give back an ellipsis
		if (inner.length < (x[2] ?? "").length) m.drop[x.index + 2 + inner.length] = false;
	});
	m.each(/^(…?)([^[\]\n\uFFFF]*)\]\]/g, (x) => {
		const start = x[1]?.length ?? 0;
		const inner = x[2] ?? "";
		const pipe = inner.search(/\\?\|/);
		m.dropRange(start + inner.length, start + inner.length + 2);
		if (pipe >= 0) m.dropRange(start, start + pipe + (inner[pipe] === "\\" ? 2 : 1));
	});
	// ![alt](url): the alt text (before an Obsidian `|size`), or nothing.
	m.each(/!\[([^\]\n]*)\]\(([^)\n]*)\)/g, (x) => {
		const alt = x[1] ?? "";
		const bar = alt.indexOf("|");
		const keep = (bar >= 0 ? alt.slice(0, bar) : alt).trim() === "" ? 0 : bar >= 0 ? bar : alt.length;
		if (keep === 0) {
			m.dropRange(x.index, x.index + x[0].length);
			return;
		}
		m.dropRange(x.index, x.index + 2);
		m.dropRange(x.index + 2 + keep, x.index + x[0].length);
	});
	// [text](url "title") and <https://…>
	m.each(/\[([^\]\n]+)\]\((?:[^()\s]|\([^()\s]*\))*(?:\s+"[^"]*")?\)/g, (x) => {
		const text = x[1] ?? "";
		m.dropRange(x.index, x.index + 1);
		m.dropRange(x.index + 1 + text.length, x.index + x[0].length);
	});
	m.each(/<(https?:\/\/[^\s>]+)>/g, (x) => {
		m.dropRange(x.index, x.index + 1);
		m.dropRange(x.index + x[0].length - 1, x.index + x[0].length);
	});
	m.each(/\[\^[^\]\s]+\]/g, (x) => m.dropRange(x.index, x.index + x[0].length));
}

function replaceWith(m: Marks, from: number, to: number, text: string): void {
	m.dropRange(from, to);
	m.insert(from, text);
}

function blocks(m: Marks): void {
	// Callouts `> [!tip]-` and a quote marker that starts the text.
	let quoted = false;
	m.each(/(^|\s)(>+\s*)?\[![\w-]+\][+-]?/g, (x) => {
		quoted = true;
		m.dropRange(x.index + (x[1]?.length ?? 0), x.index + x[0].length);
	});
	m.each(/^\s*(?:>\s?)+/g, (x) => {
		quoted = true;
		m.dropRange(x.index, x.index + x[0].length);
	});
	// Inside a quote or callout, a lone `>` starts its next line.
	if (quoted) m.each(/(?<=\s)>+(?=\s)/g, (x) => m.dropRange(x.index, x.index + x[0].length));
	m.each(/(^|\s)(#{1,6})(?=\s)/g, (x) => m.dropRange(x.index + (x[1]?.length ?? 0), x.index + x[0].length));
	m.each(/(^|\s)[-*+]\s\[([ xX/-])\](?=\s)/g, (x) => {
		const done = x[2] !== " ";
		replaceWith(m, x.index + (x[1]?.length ?? 0), x.index + x[0].length, done ? "☑" : "☐");
	});
	m.each(/(^|\s)(?:-{3,}|\*{3,}|_{3,})(?=\s|$)/g, (x) => m.dropRange(x.index + (x[1]?.length ?? 0), x.index + x[0].length));
	m.each(/(^|\s)[*+](?=\s)/g, (x) => replaceWith(m, x.index + (x[1]?.length ?? 0), x.index + x[0].length, "•"));
	m.each(/^\s*-(?=\s)/g, (x) => replaceWith(m, x.index, x.index + x[0].length, "•"));
	// A list item after a sentence ("daily use. - New to …"); a dash inside a sentence stays.
	m.each(/(?<=[.!?:…]\s)-(?=\s)/g, (x) => replaceWith(m, x.index, x.index + 1, "•"));
	// Tables: the alignment row goes, cell bars become a quiet separator.
	const cell = "\\s*(?::?-{3,}:?|:-+:?|-+:)\\s*";
	m.each(new RegExp(`\\|?(?:${cell}\\|)+(?:${cell}(?=\\s|$))?`, "g"), (x) => m.dropRange(x.index, x.index + x[0].length));
	m.each(/\s*\|(?:\s*\|)*\s*/g, (x) => replaceWith(m, x.index, x.index + x[0].length, " · "));
	m.each(/(^|\s)\^[A-Za-z0-9-]+(?=\s|$)/g, (x) => m.dropRange(x.index + (x[1]?.length ?? 0), x.index + x[0].length));
}

function inline(m: Marks): void {
	m.each(/(\*\*|~~|==)(?=\S)([\s\S]*?[^\s\\])\1/g, (x) => {
		const d = x[1]?.length ?? 2;
		m.dropRange(x.index, x.index + d);
		m.dropRange(x.index + x[0].length - d, x.index + x[0].length);
	});
	// Markers whose partner the snippet cut off (`**General…`), touching a word on one side.
	m.each(/\*\*(?=[^\s*])|(?<=[^\s*])\*\*|~~(?=\S)|(?<=\S)~~/g, (x) => m.dropRange(x.index, x.index + x[0].length));
	m.each(/(^|[^\w\\])(__|\*|_)(?=[^\s*_])([^*_\n]*?[^\s*_\\])\2(?![\w])/g, (x) => {
		const lead = x[1]?.length ?? 0;
		const d = x[2]?.length ?? 1;
		const start = x.index + lead;
		m.dropRange(start, start + d);
		m.dropRange(x.index + x[0].length - d, x.index + x[0].length);
	});
	m.each(/<br\s*\/?>/gi, (x) => replaceWith(m, x.index, x.index + x[0].length, " "));
	m.each(/<\/?[A-Za-z][^<>]*>/g, (x) => m.dropRange(x.index, x.index + x[0].length));
	m.each(/\\([!-/:-@[-`{-~])/g, (x) => m.dropRange(x.index, x.index + 1));
}

/** The runs a person reads for a snippet (or any markdown line), with `highlights` (code
 * points of the raw text, end exclusive) carried over. Whitespace is collapsed. */
export function readableRuns(
	markdown: string,
	highlights: ReadonlyArray<readonly [number, number]> = [],
	opts: ReadableOptions = {},
): Run[] {
	const m = new Marks(markdown);
	markHighlights(m, highlights);
	fences(m);
	inlineCode(m);
	comments(m);
	links(m, opts);
	blocks(m);
	inline(m);
	return assemble(m);
}

/** The same text without highlights, as one string (titles of contexts, tooltips). */
export function readableText(markdown: string): string {
	return readableRuns(markdown)
		.map((r) => r.text)
		.join("");
}

function assemble(m: Marks): Run[] {
	const cells: Array<{ ch: string; hit: boolean; code: boolean }> = [];
	// One cell per UTF-16 unit, inserted text included, so regex offsets index the cells.
	const push = (text: string, hit: boolean, code: boolean): void => {
		for (let k = 0; k < text.length; k++) cells.push({ ch: text[k] ?? "", hit, code });
	};
	for (let i = 0; i <= m.src.length; i++) {
		const ins = m.before.get(i);
		if (ins !== undefined) push(ins, false, false);
		if (i < m.src.length && !m.drop[i]) cells.push({ ch: m.src[i] ?? "", hit: m.hit[i] === true, code: m.code[i] === true });
	}
	// Collapse whitespace and quiet separators left next to each other or at the ends.
	const out: Array<{ ch: string; hit: boolean; code: boolean }> = [];
	for (const c of cells) {
		const space = /\s/.test(c.ch);
		const prev = out[out.length - 1];
		if (space) {
			if (prev === undefined || /\s/.test(prev.ch)) continue;
			out.push({ ch: " ", hit: false, code: c.code && prev.code });
			continue;
		}
		out.push(c);
	}
	let text = out.map((c) => c.ch).join("");
	// " · · " and leading/trailing separators from tables and dropped cells.
	const keep = new Array<boolean>(out.length).fill(true);
	const sep = /(?:^\s*·\s*)+|(?:\s*·\s*)+$|\s·(?=\s·)/g;
	let x: RegExpExecArray | null;
	while ((x = sep.exec(text)) !== null) {
		if (x[0] === "") {
			sep.lastIndex++;
			continue;
		}
		for (let i = x.index; i < x.index + x[0].length; i++) keep[i] = false;
	}
	const kept = out.filter((_, i) => keep[i] && !(out[i]?.ch === " " && out[i + 1]?.ch === "…"));
	// A space takes the style of both its neighbours or none: code and highlights end at words.
	kept.forEach((c, i) => {
		if (c.ch !== " ") return;
		const prev = kept[i - 1];
		const next = kept[i + 1];
		c.code = prev?.code === true && next?.code === true;
		c.hit = prev?.hit === true && next?.hit === true;
	});
	while (kept.length && /\s/.test(kept[0]?.ch ?? "")) kept.shift();
	while (kept.length && /\s/.test(kept[kept.length - 1]?.ch ?? "")) kept.pop();
	text = "";
	const runs: Run[] = [];
	for (const c of kept) {
		const last = runs[runs.length - 1];
		if (last && last.hit === c.hit && last.code === c.code) last.text += c.ch;
		else runs.push({ text: c.ch, hit: c.hit, code: c.code });
	}
	return runs;
}
