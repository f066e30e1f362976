/** Backlinks grouped by the note they are written in, as Obsidian's backlinks pane shows them. */
import type { Backlink } from "../api/types";
import { isInside } from "./settings";

export interface BacklinkLine {
	line: number;
	context: string;
}

export interface BacklinkGroup {
	path: string;
	title: string;
	/** Links from this note (two links on one line count twice). */
	count: number;
	/** The lines holding them, once each, in order. */
	lines: BacklinkLine[];
}

export interface GroupedBacklinks {
	/** The person's notes, most links first. */
	notes: BacklinkGroup[];
	/** Engram's own generated notes (daily notes, the ledger, reflections): restatements. */
	generated: BacklinkGroup[];
}

/** Folders under the facts folder where Engram writes notes of its own (not facts). */
export const GENERATED_FOLDERS = ["daily", "ledger"] as const;

/** True for a note Engram generates from facts (a daily note, the ledger, a reflection). */
export function isGenerated(path: string, factsRoot: string): boolean {
	if (factsRoot === "") return false;
	return GENERATED_FOLDERS.some((f) => isInside(path, `${factsRoot}/${f}`));
}

export function groupBacklinks(backlinks: readonly Backlink[], generated: (path: string) => boolean): GroupedBacklinks {
	const byPath = new Map<string, BacklinkGroup>();
	for (const b of backlinks) {
		let g = byPath.get(b.path);
		if (!g) {
			g = { path: b.path, title: b.title, count: 0, lines: [] };
			byPath.set(b.path, g);
		}
		g.count++;
		if (!g.lines.some((l) => l.line === b.line)) g.lines.push({ line: b.line, context: b.context });
	}
	const groups = [...byPath.values()];
	for (const g of groups) g.lines.sort((a, b) => a.line - b.line);
	groups.sort((a, b) => b.count - a.count || a.title.localeCompare(b.title));
	return { notes: groups.filter((g) => !generated(g.path)), generated: groups.filter((g) => generated(g.path)) };
}
