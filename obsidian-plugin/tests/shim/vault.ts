/** Shim: vault files, folders, events and the FileSystemAdapter, backed by a ShimHost. */
import { Events } from "./core";
import type { ShimHost } from "./host";

export abstract class TAbstractFile {
	vault!: Vault;
	path = "";
	name = "";
	parent: TFolder | null = null;
}

export class TFile extends TAbstractFile {
	basename = "";
	extension = "";
	stat = { ctime: 0, mtime: 0, size: 0 };
}

export class TFolder extends TAbstractFile {
	children: TAbstractFile[] = [];
	isRoot(): boolean {
		return this.path === "/";
	}
}

function setPath(f: TAbstractFile, path: string): void {
	f.path = path;
	f.name = path.split("/").pop() ?? path;
	if (f instanceof TFile) {
		const dot = f.name.lastIndexOf(".");
		f.basename = dot > 0 ? f.name.slice(0, dot) : f.name;
		f.extension = dot > 0 ? f.name.slice(dot + 1) : "";
	}
}

export class FileSystemAdapter {
	constructor(private readonly host: ShimHost) {}
	getBasePath(): string {
		return this.host.basePath;
	}
	getName(): string {
		return this.host.basePath.split("/").pop() ?? "";
	}
	exists(path: string): Promise<boolean> {
		return this.host.exists(path);
	}
	read(path: string): Promise<string> {
		return this.host.read(path);
	}
	write(path: string, data: string): Promise<void> {
		return this.host.write(path, data);
	}
	remove(path: string): Promise<void> {
		return this.host.remove(path);
	}
}

export class Vault extends Events {
	readonly adapter: FileSystemAdapter;
	configDir = ".obsidian";
	private readonly root = new TFolder();
	private readonly byPath = new Map<string, TAbstractFile>();
	private readonly contents = new Map<string, string>();
	private watchTimer: number | null = null;

	constructor(private readonly host: ShimHost) {
		super();
		this.adapter = new FileSystemAdapter(host);
		this.root.vault = this;
		this.root.path = "/";
		this.byPath.set("/", this.root);
	}

	/** Shim-only: Obsidian's metadata cache hears vault changes first, and is no plugin's listener. */
	internalListener: ((name: string, ...args: unknown[]) => void) | null = null;

	trigger(name: string, ...args: unknown[]): void {
		this.internalListener?.(name, ...args);
		super.trigger(name, ...args);
	}

	getName(): string {
		return this.adapter.getName();
	}

	getRoot(): TFolder {
		return this.root;
	}

	getAbstractFileByPath(path: string): TAbstractFile | null {
		return this.byPath.get(path) ?? null;
	}

	getFileByPath(path: string): TFile | null {
		const f = this.byPath.get(path);
		return f instanceof TFile ? f : null;
	}

	getFolderByPath(path: string): TFolder | null {
		const f = this.byPath.get(path);
		return f instanceof TFolder ? f : null;
	}

	getMarkdownFiles(): TFile[] {
		return [...this.byPath.values()].filter((f): f is TFile => f instanceof TFile && f.extension === "md");
	}

	async read(file: TFile): Promise<string> {
		return this.contents.get(file.path) ?? this.host.read(file.path);
	}

	cachedRead(file: TFile): Promise<string> {
		return this.read(file);
	}

	/** Shim-only: a note's text as last loaded or written (the metadata cache parses it). */
	peek(path: string): string | undefined {
		return this.contents.get(path);
	}

	/** Shim-only: read every note from the host; fires `create` for each, as Obsidian does at startup. */
	async loadFromHost(): Promise<void> {
		for (const path of await this.host.listNotes()) {
			if (this.byPath.has(path)) continue;
			this.contents.set(path, await this.host.read(path));
			this.trigger("create", this.ensureFile(path));
		}
	}

	/** Shim-only: notice files added on disk by someone else (Obsidian's file watcher). */
	watchHost(ms: number): void {
		if (this.watchTimer !== null) return;
		this.watchTimer = window.setInterval(() => void this.loadFromHost(), ms);
	}

	stopWatching(): void {
		if (this.watchTimer !== null) window.clearInterval(this.watchTimer);
		this.watchTimer = null;
	}

	async create(path: string, data: string): Promise<TFile> {
		if (this.byPath.has(path)) throw new Error(`File already exists: ${path}`);
		await this.host.write(path, data);
		this.contents.set(path, data);
		const file = this.ensureFile(path);
		this.trigger("create", file);
		return file;
	}

	async modify(file: TFile, data: string): Promise<void> {
		await this.host.write(file.path, data);
		this.contents.set(file.path, data);
		file.stat.mtime = Date.now();
		this.trigger("modify", file);
	}

	async delete(file: TAbstractFile): Promise<void> {
		await this.host.remove(file.path);
		this.detachTree(file);
		this.trigger("delete", file);
	}

	async rename(file: TAbstractFile, newPath: string): Promise<void> {
		const oldPath = file.path;
		await this.host.rename(oldPath, newPath);
		const moved = [...this.byPath.keys()].filter((p) => p === oldPath || p.startsWith(oldPath + "/"));
		for (const p of moved) {
			const f = this.byPath.get(p);
			if (!f) continue;
			this.byPath.delete(p);
			const np = newPath + p.slice(oldPath.length);
			setPath(f, np);
			this.byPath.set(np, f);
			const c = this.contents.get(p);
			this.contents.delete(p);
			if (c !== undefined) this.contents.set(np, c);
		}
		file.parent?.children.splice(file.parent.children.indexOf(file), 1);
		const parent = this.ensureFolder(newPath.split("/").slice(0, -1).join("/"));
		parent.children.push(file);
		file.parent = parent;
		this.trigger("rename", file, oldPath);
	}

	private detachTree(file: TAbstractFile): void {
		for (const p of [...this.byPath.keys()]) {
			if (p === file.path || p.startsWith(file.path + "/")) {
				this.byPath.delete(p);
				this.contents.delete(p);
			}
		}
		file.parent?.children.splice(file.parent.children.indexOf(file), 1);
	}

	private ensureFolder(path: string): TFolder {
		if (path === "" || path === "/") return this.root;
		const existing = this.byPath.get(path);
		if (existing instanceof TFolder) return existing;
		const parent = this.ensureFolder(path.split("/").slice(0, -1).join("/"));
		const folder = new TFolder();
		folder.vault = this;
		setPath(folder, path);
		folder.parent = parent;
		parent.children.push(folder);
		this.byPath.set(path, folder);
		return folder;
	}

	private ensureFile(path: string): TFile {
		const existing = this.byPath.get(path);
		if (existing instanceof TFile) return existing;
		const parent = this.ensureFolder(path.split("/").slice(0, -1).join("/"));
		const file = new TFile();
		file.vault = this;
		setPath(file, path);
		file.parent = parent;
		parent.children.push(file);
		this.byPath.set(path, file);
		return file;
	}
}
