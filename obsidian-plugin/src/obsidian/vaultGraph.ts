/** What Obsidian's metadata cache knows about links, tags, aliases and sections, for the views. */
import { getAllTags, getLinkpath, parseFrontMatterAliases, TFile, type App, type CachedMetadata } from "obsidian";
import type { VaultGraph } from "../core/related";

/** A snapshot of the link graph and tags; rebuilt only after the metadata cache changed. */
export class GraphSource {
	private cached: VaultGraph | null = null;

	constructor(private readonly app: App) {}

	/** Forget the snapshot (call on metadataCache `resolved` / `changed`). */
	invalidate(): void {
		this.cached = null;
	}

	get(): VaultGraph {
		if (this.cached) return this.cached;
		const { metadataCache, vault } = this.app;
		const tags = new Map<string, string[]>();
		for (const file of vault.getMarkdownFiles()) {
			const cache = metadataCache.getFileCache(file);
			const list = cache ? (getAllTags(cache) ?? []) : [];
			if (list.length) tags.set(file.path, [...new Set(list.map((t) => t.toLowerCase()))]);
		}
		// A copy: Obsidian mutates resolvedLinks in place, the snapshot's identity keys a cache.
		const links: Record<string, Record<string, number>> = {};
		for (const [src, targets] of Object.entries(metadataCache.resolvedLinks)) links[src] = { ...targets };
		const titles = new Map<string, string>();
		this.cached = {
			links,
			tags,
			title: (path) => {
				let t = titles.get(path);
				if (t === undefined) titles.set(path, (t = noteTitle(this.app, path)));
				return t;
			},
		};
		return this.cached;
	}
}

/** The name a note goes by: its file name without `.md`. */
export function noteTitle(app: App, path: string): string {
	const f = app.vault.getFileByPath(path);
	return f ? f.basename : (path.split("/").pop() ?? path).replace(/\.md$/i, "");
}

export type Resolution =
	| { kind: "note"; path: string; title: string }
	/** Not a link Obsidian resolves, but exactly one note lists the name in its `aliases`. */
	| { kind: "alias"; path: string; title: string }
	| { kind: "unresolved" };

function aliasesOf(cache: CachedMetadata | null): string[] {
	return parseFrontMatterAliases(cache?.frontmatter ?? null) ?? [];
}

/**
 * Where a link (`Obsidian Sync`, `[[Note#Heading|shown]]` already split to its linktext) leads:
 * the note Obsidian would open (`getFirstLinkpathDest`), else the one note holding it as an
 * alias (Engram's fallback, as the backend's resolver does), else nowhere.
 */
export function resolveLink(app: App, linktext: string, sourcePath: string): Resolution {
	const linkpath = getLinkpath(linktext).trim();
	if (linkpath === "") return { kind: "unresolved" };
	const file = app.metadataCache.getFirstLinkpathDest(linkpath, sourcePath);
	if (file) return { kind: "note", path: file.path, title: file.basename };
	if (linkpath.includes("/")) return { kind: "unresolved" };
	const wanted = linkpath.toLowerCase();
	const holders = app.vault
		.getMarkdownFiles()
		.filter((f) => aliasesOf(app.metadataCache.getFileCache(f)).some((a) => a.trim().toLowerCase() === wanted));
	const only = holders.length === 1 ? holders[0] : undefined;
	return only ? { kind: "alias", path: only.path, title: only.basename } : { kind: "unresolved" };
}

export interface Section {
	heading: string;
	/** 0-based lines, end exclusive. */
	from: number;
	to: number;
}

/** The section (heading and its lines) holding `line` in `file`, or null before any heading. */
export function sectionAt(app: App, file: TFile, line: number): Section | null {
	const headings = app.metadataCache.getFileCache(file)?.headings ?? [];
	let found: Section | null = null;
	let level = 0;
	for (const h of headings) {
		const at = h.position.start.line;
		if (at <= line) {
			found = { heading: h.heading, from: at, to: Number.MAX_SAFE_INTEGER };
			level = h.level;
		} else if (found && h.level <= level) {
			// subsections (deeper headings) belong to the section; the next peer ends it
			found.to = at;
			break;
		}
	}
	return found;
}

/** Resolved note paths linked from lines [from, to) of `file`. */
export function linksIn(app: App, file: TFile, from: number, to: number): string[] {
	const cache = app.metadataCache.getFileCache(file);
	const out: string[] = [];
	for (const l of [...(cache?.links ?? []), ...(cache?.embeds ?? [])]) {
		const line = l.position.start.line;
		if (line < from || line >= to) continue;
		const dest = app.metadataCache.getFirstLinkpathDest(getLinkpath(l.link), file.path);
		if (dest && dest.extension === "md") out.push(dest.path);
	}
	return out;
}
