/**
 * Shim: Obsidian's metadata cache, parsed from the vault's notes (frontmatter, headings, links,
 * embeds, tags) with Obsidian's link resolution: a path, else the file name (shortest path
 * first); aliases never resolve a link. Kept up to date on vault events, firing `changed` and
 * `resolved` like the app.
 */
import { Events } from "./core";
import type { TFile, Vault } from "./vault";

interface Loc {
	line: number;
	col: number;
	offset: number;
}
interface Pos {
	start: Loc;
	end: Loc;
}
export interface LinkCache {
	link: string;
	original: string;
	displayText?: string;
	position: Pos;
}
export interface HeadingCache {
	heading: string;
	level: number;
	position: Pos;
}
export interface TagCache {
	tag: string;
	position: Pos;
}
export interface CachedMetadata {
	links?: LinkCache[];
	embeds?: LinkCache[];
	tags?: TagCache[];
	headings?: HeadingCache[];
	frontmatter?: Record<string, unknown>;
}

function pos(line: number, col: number, len: number): Pos {
	return { start: { line, col, offset: 0 }, end: { line, col: col + len, offset: 0 } };
}

/** Flat YAML as notes use it: `key: value`, `key: [a, b]` and `key:` followed by `- item` lines. */
function parseFrontmatter(lines: string[]): Record<string, unknown> {
	const out: Record<string, unknown> = {};
	let key: string | null = null;
	for (const line of lines) {
		const item = /^\s+-\s+(.*)$/.exec(line) ?? /^-\s+(.*)$/.exec(line);
		if (item && key) {
			const list = Array.isArray(out[key]) ? (out[key] as unknown[]) : [];
			list.push(unquote(item[1] ?? ""));
			out[key] = list;
			continue;
		}
		const kv = /^([A-Za-z_][\w-]*):\s*(.*)$/.exec(line);
		if (!kv) continue;
		key = kv[1] ?? "";
		const v = (kv[2] ?? "").trim();
		if (v === "") out[key] = null;
		else if (v.startsWith("[") && v.endsWith("]")) out[key] = v.slice(1, -1).split(",").map((x) => unquote(x.trim())).filter((x) => x !== "");
		else out[key] = unquote(v);
	}
	return out;
}

function unquote(s: string): string {
	return s.replace(/^"(.*)"$/, "$1").replace(/^'(.*)'$/, "$1");
}

export function parseNote(text: string): CachedMetadata {
	const lines = text.split("\n");
	const cache: CachedMetadata = { links: [], embeds: [], tags: [], headings: [] };
	let i = 0;
	if (lines[0]?.trim() === "---") {
		const end = lines.findIndex((l, j) => j > 0 && l.trim() === "---");
		if (end > 0) {
			cache.frontmatter = parseFrontmatter(lines.slice(1, end));
			i = end + 1;
		}
	}
	let fence = false;
	for (; i < lines.length; i++) {
		const line = lines[i] ?? "";
		if (/^\s*(```|~~~)/.test(line)) {
			fence = !fence;
			continue;
		}
		if (fence) continue;
		const h = /^(#{1,6})\s+(.+?)\s*#*\s*$/.exec(line);
		if (h) cache.headings?.push({ heading: h[2] ?? "", level: h[1]?.length ?? 1, position: pos(i, 0, line.length) });
		const bare = line.replace(/`[^`]*`/g, (m) => " ".repeat(m.length));
		for (const m of bare.matchAll(/(!?)\[\[([^\]|]+)(?:\|([^\]]*))?\]\]/g)) {
			const ref: LinkCache = { link: (m[2] ?? "").replace(/\\$/, "").trim(), original: m[0], position: pos(i, m.index ?? 0, m[0].length) };
			if (m[3] !== undefined) ref.displayText = m[3];
			(m[1] ? cache.embeds : cache.links)?.push(ref);
		}
		for (const m of bare.matchAll(/(?<![!\w])\[([^\]]*)\]\(([^)\s]+\.md)\)/g)) {
			cache.links?.push({ link: decodeURIComponent(m[2] ?? ""), original: m[0], displayText: m[1] ?? "", position: pos(i, m.index ?? 0, m[0].length) });
		}
		for (const m of bare.matchAll(/(^|\s)(#[\p{L}\p{N}_/-]*[\p{L}_/-][\p{L}\p{N}_/-]*)/gu)) {
			cache.tags?.push({ tag: m[2] ?? "", position: pos(i, (m.index ?? 0) + (m[1]?.length ?? 0), (m[2] ?? "").length) });
		}
	}
	return cache;
}

/** Shim of `getAllTags`: body tags and frontmatter `tags`, each with `#`. */
export function getAllTags(cache: CachedMetadata): string[] | null {
	const out = (cache.tags ?? []).map((t) => t.tag);
	const fm = cache.frontmatter?.tags;
	const list = Array.isArray(fm) ? fm : typeof fm === "string" ? fm.split(/[,\s]+/) : [];
	for (const t of list) if (typeof t === "string" && t !== "") out.push(t.startsWith("#") ? t : `#${t}`);
	return out;
}

export function getLinkpath(linktext: string): string {
	const hash = linktext.indexOf("#");
	return (hash >= 0 ? linktext.slice(0, hash) : linktext).trim();
}

export function parseFrontMatterAliases(frontmatter: Record<string, unknown> | null): string[] | null {
	const v = frontmatter?.aliases ?? frontmatter?.alias;
	if (Array.isArray(v)) return v.filter((x): x is string => typeof x === "string");
	return typeof v === "string" ? v.split(",").map((s) => s.trim()) : null;
}

export class MetadataCache extends Events {
	private resolved: Record<string, Record<string, number>> = {};
	private unresolved: Record<string, Record<string, number>> = {};
	private readonly caches = new Map<string, CachedMetadata>();
	/** lower-case file name without `.md` → notes, shortest path first. */
	private byName: Map<string, TFile[]> | null = null;
	private dirty = true;
	private resolvedTimer: number | null = null;

	constructor(private readonly vault: Vault) {
		super();
		const update = (file: unknown): void => {
			const f = file as TFile;
			if (f.extension !== "md") return;
			this.caches.set(f.path, parseNote(vault.peek(f.path) ?? ""));
			this.touch();
			this.trigger("changed", f, vault.peek(f.path) ?? "", this.caches.get(f.path));
		};
		vault.internalListener = (name, file, oldPath) => {
			if (name === "create" || name === "modify") update(file);
			else if (name === "rename") {
				this.caches.delete(String(oldPath));
				update(file);
			} else if (name === "delete") {
				const gone = (file as TFile).path;
				for (const p of [...this.caches.keys()]) if (p === gone || p.startsWith(`${gone}/`)) this.caches.delete(p);
				this.touch();
			}
		};
	}

	get resolvedLinks(): Record<string, Record<string, number>> {
		this.resolveAll();
		return this.resolved;
	}

	get unresolvedLinks(): Record<string, Record<string, number>> {
		this.resolveAll();
		return this.unresolved;
	}

	getFileCache(file: TFile): CachedMetadata | null {
		return this.caches.get(file.path) ?? null;
	}

	getCache(path: string): CachedMetadata | null {
		return this.caches.get(path) ?? null;
	}

	getFirstLinkpathDest(linkpath: string, _sourcePath: string): TFile | null {
		const name = getLinkpath(linkpath);
		if (name === "") return null;
		const exact = this.vault.getFileByPath(name) ?? this.vault.getFileByPath(`${name}.md`);
		if (exact) return exact;
		const lower = name.toLowerCase().replace(/\.md$/, "");
		const base = lower.split("/").pop() ?? lower;
		const candidates = (this.names().get(base) ?? []).filter((f) => {
			const p = f.path.toLowerCase().replace(/\.md$/, "");
			return p === lower || p.endsWith(`/${lower}`);
		});
		return candidates[0] ?? null;
	}

	fileToLinktext(file: TFile): string {
		return file.basename;
	}

	/** A change: links resolve again when next asked; `resolved` fires once per burst. */
	private touch(): void {
		this.dirty = true;
		this.byName = null;
		if (this.resolvedTimer !== null) return;
		this.resolvedTimer = window.setTimeout(() => {
			this.resolvedTimer = null;
			this.trigger("resolved");
		}, 0);
	}

	private names(): Map<string, TFile[]> {
		if (this.byName) return this.byName;
		const m = new Map<string, TFile[]>();
		for (const f of this.vault.getMarkdownFiles()) {
			const k = f.basename.toLowerCase();
			m.set(k, [...(m.get(k) ?? []), f]);
		}
		for (const list of m.values()) list.sort((a, b) => a.path.length - b.path.length);
		this.byName = m;
		return m;
	}

	private resolveAll(): void {
		if (!this.dirty) return;
		this.dirty = false;
		this.resolved = {};
		this.unresolved = {};
		for (const [source, cache] of this.caches) {
			const done: Record<string, number> = {};
			const missing: Record<string, number> = {};
			for (const l of [...(cache.links ?? []), ...(cache.embeds ?? [])]) {
				const dest = this.getFirstLinkpathDest(l.link, source);
				const name = getLinkpath(l.link);
				if (dest) done[dest.path] = (done[dest.path] ?? 0) + 1;
				else if (name) missing[name] = (missing[name] ?? 0) + 1;
			}
			this.resolved[source] = done;
			this.unresolved[source] = missing;
		}
	}
}
