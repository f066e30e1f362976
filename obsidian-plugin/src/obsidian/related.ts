/** Related notes for a note or a section: Obsidian's links and tags, the backend's vectors or
 * keywords; shared by the related-notes view and the fact panel. */
import type { TFile } from "obsidian";
import type { NoteMetadata } from "../api/types";
import { isGenerated } from "../core/backlinks";
import { readableText } from "../core/markdownText";
import { keywordQuery, relatedNotes, type RelatedEntry, type Scored } from "../core/related";
import { isOnline } from "../core/status";
import type { EngramContext } from "./context";
import { linksIn, type GraphSource, type Section } from "./vaultGraph";

/** What the list is based on: meaning (vectors), words (nothing embedded yet), or links and tags
 * only (the backend is not connected). */
export type RelatedBasis = "meaning" | "words" | "links";

export interface RelatedResult {
	path: string;
	section: Section | null;
	entries: RelatedEntry[];
	basis: RelatedBasis;
}

const SEARCH_N = 10;

function bodyOf(text: string): string {
	return text.replace(/^---\r?\n[\s\S]*?\r?\n---\r?\n?/, "");
}

async function textOf(ctx: EngramContext, file: TFile, section: Section | null): Promise<string> {
	const raw = await ctx.app.vault.cachedRead(file);
	if (!section) return `${file.basename} ${readableText(bodyOf(raw).slice(0, 8000))}`;
	const lines = raw.split("\n").slice(section.from, Math.min(section.to, section.from + 200));
	return readableText(lines.join("\n"));
}

/**
 * The most related notes to `file` (or to `section` of it). `meta` is the note's panel data when
 * the caller has it (its `related` are the nearest notes by meaning); fetched otherwise.
 */
export async function findRelated(
	ctx: EngramContext,
	graphs: GraphSource,
	file: TFile,
	section: Section | null,
	meta: NoteMetadata | null | undefined,
	limit: number,
): Promise<RelatedResult> {
	const status = isOnline(ctx.monitor.state) ? ctx.monitor.status : null;
	const collection = status?.vault.collection;
	const embedded = (status?.embedded ?? 0) > 0;
	let meaning: Scored[] = [];
	let words: Scored[] = [];
	if (status && collection) {
		try {
			if (embedded && section === null) {
				const m = meta === undefined ? await ctx.client.noteMetadata(file.path) : meta;
				meaning = m?.related ?? [];
			} else if (embedded) {
				const q = keywordQuery(await textOf(ctx, file, section));
				if (q) meaning = (await ctx.client.search("vsearch", { q, n: SEARCH_N, collections: [collection] })).results;
			} else {
				const q = keywordQuery(await textOf(ctx, file, section));
				if (q) words = (await ctx.client.search("search", { q, n: SEARCH_N + 1, collections: [collection] })).results;
			}
		} catch {
			// The backend's part is a bonus: links and tags still say what is related.
		}
	}
	const factsRoot = ctx.factsRoot();
	const entries = relatedNotes(
		graphs.get(),
		{
			path: file.path,
			sectionLinks: section ? linksIn(ctx.app, file, section.from, section.to) : null,
			meaning,
			words,
			exclude: (p) => isGenerated(p, factsRoot),
		},
		limit,
	);
	return { path: file.path, section, entries, basis: status === null ? "links" : embedded ? "meaning" : "words" };
}

/** One line saying what the list rests on, when it is less than everything. */
export function basisNote(basis: RelatedBasis): string | null {
	if (basis === "links") return "Engram is not connected: related by links and tags only.";
	if (basis === "words") return "Nothing is embedded yet: related by links, tags and shared words. Run engram embed to relate notes by meaning.";
	return null;
}
