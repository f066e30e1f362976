/** Shim: a minimal workspace (main area + right sidebar), leaves, views and a text editor. */
import { Component, Events } from "./core";
import type { App } from "./app";
import { TFile } from "./vault";

export interface EditorPosition {
	line: number;
	ch: number;
}

/** A plain-text editor with Obsidian's Editor methods the plugin uses; rendered as lines. */
export class ShimEditor {
	private value = "";
	private anchor: EditorPosition = { line: 0, ch: 0 };
	private head: EditorPosition = { line: 0, ch: 0 };
	scrolledTo: EditorPosition | null = null;

	constructor(
		private readonly view: MarkdownView,
		private readonly onChange: (value: string) => void,
	) {}

	getValue(): string {
		return this.value;
	}
	setValue(v: string): void {
		this.value = v;
		this.view.renderLines();
	}
	lineCount(): number {
		return this.value.split("\n").length;
	}
	getLine(n: number): string {
		return this.value.split("\n")[n] ?? "";
	}
	getCursor(): EditorPosition {
		return { ...this.head };
	}
	setCursor(pos: EditorPosition): void {
		this.anchor = { ...pos };
		this.head = { ...pos };
		this.view.renderLines();
	}
	setSelection(anchor: EditorPosition, head?: EditorPosition): void {
		this.anchor = { ...anchor };
		this.head = { ...(head ?? anchor) };
		this.view.renderLines();
	}
	private offset(p: EditorPosition): number {
		const lines = this.value.split("\n");
		let o = 0;
		for (let i = 0; i < p.line && i < lines.length; i++) o += (lines[i] ?? "").length + 1;
		return o + p.ch;
	}
	private position(o: number): EditorPosition {
		const before = this.value.slice(0, o).split("\n");
		return { line: before.length - 1, ch: (before[before.length - 1] ?? "").length };
	}
	getSelection(): string {
		const [a, b] = [this.offset(this.anchor), this.offset(this.head)].sort((x, y) => x - y) as [number, number];
		return this.value.slice(a, b);
	}
	replaceSelection(text: string): void {
		const [a, b] = [this.offset(this.anchor), this.offset(this.head)].sort((x, y) => x - y) as [number, number];
		this.value = this.value.slice(0, a) + text + this.value.slice(b);
		const end = this.position(a + text.length);
		this.anchor = end;
		this.head = end;
		this.view.renderLines();
		this.onChange(this.value);
	}
	scrollIntoView(range: { from: EditorPosition; to: EditorPosition }): void {
		this.scrolledTo = { ...range.from };
	}
}

export class View extends Component {
	app: App;
	containerEl: HTMLElement;
	icon = "";
	navigation = false;

	constructor(public leaf: WorkspaceLeaf) {
		super();
		this.app = leaf.app;
		this.containerEl = leaf.containerEl.createDiv({ cls: "view-container" });
	}
	getViewType(): string {
		return "";
	}
	getDisplayText(): string {
		return "";
	}
	getIcon(): string {
		return this.icon;
	}
	onOpen(): Promise<void> | void {}
	onClose(): Promise<void> | void {}
}

export class ItemView extends View {
	contentEl: HTMLElement;
	private actionsEl: HTMLElement;

	constructor(leaf: WorkspaceLeaf) {
		super(leaf);
		const header = this.containerEl.createDiv({ cls: "view-header" });
		header.createDiv({ cls: "view-header-title" });
		this.actionsEl = header.createDiv({ cls: "view-actions" });
		this.contentEl = this.containerEl.createDiv({ cls: "view-content" });
	}

	addAction(icon: string, title: string, callback: (evt: MouseEvent) => unknown): HTMLElement {
		const el = this.actionsEl.createEl("a", { cls: "clickable-icon view-action", attr: { "aria-label": title, "data-icon": icon } });
		el.addEventListener("click", (evt) => callback(evt));
		return el;
	}
}

export class MarkdownView extends ItemView {
	file: TFile | null = null;
	editor: ShimEditor;

	constructor(leaf: WorkspaceLeaf) {
		super(leaf);
		this.contentEl.addClass("markdown-source-view");
		this.editor = new ShimEditor(this, (value) => {
			if (this.file) void this.app.vault.modify(this.file, value);
			this.app.workspace.trigger("editor-change", this.editor, this);
		});
	}
	getViewType(): string {
		return "markdown";
	}
	getDisplayText(): string {
		return this.file?.basename ?? "";
	}
	/** Shim-only: draw the text, marking the cursor line, for assertions and screenshots. */
	renderLines(): void {
		this.contentEl.empty();
		this.contentEl.setAttr("data-path", this.file?.path ?? "");
		const cursor = this.editor.getCursor().line;
		this.contentEl.setAttr("data-cursor-line", String(cursor));
		this.editor.getValue().split("\n").forEach((text, i) => {
			const line = this.contentEl.createDiv({ cls: "cm-line", text: text === "" ? "\u00a0" : text });
			if (i === cursor) line.addClass("is-cursor-line");
		});
	}
}

export type ViewCreator = (leaf: WorkspaceLeaf) => View;

export class WorkspaceLeaf {
	view: View | null = null;
	containerEl: HTMLElement;

	constructor(
		public app: App,
		public side: "main" | "right",
		parent: HTMLElement,
	) {
		this.containerEl = parent.createDiv({ cls: "workspace-leaf" });
	}

	async setViewState(state: { type: string; active?: boolean; state?: Record<string, unknown> }): Promise<void> {
		await this.closeView();
		const creator = state.type === "markdown" ? (l: WorkspaceLeaf) => new MarkdownView(l) : this.app.viewRegistry.get(state.type);
		if (!creator) throw new Error(`No view registered for type ${state.type}`);
		const view = creator(this);
		this.view = view;
		this.containerEl.setAttr("data-type", state.type);
		view.load();
		await view.onOpen();
		if (state.active) this.app.workspace.setActiveLeaf(this);
	}

	async openFile(file: TFile, openState?: { active?: boolean; eState?: { line?: number } }): Promise<void> {
		await this.setViewState({ type: "markdown" });
		const view = this.view as MarkdownView;
		view.file = file;
		view.editor.setValue(await this.app.vault.read(file));
		view.editor.setCursor({ line: openState?.eState?.line ?? 0, ch: 0 });
		this.app.workspace.setActiveLeaf(this);
		this.app.workspace.trigger("file-open", file);
	}

	getViewState(): { type: string } {
		return { type: this.view?.getViewType() ?? "empty" };
	}

	detach(): void {
		void this.closeView();
		this.containerEl.remove();
		this.app.workspace.removeLeaf(this);
	}

	private async closeView(): Promise<void> {
		const old = this.view;
		if (!old) return;
		this.view = null;
		await old.onClose();
		old.unload();
		old.containerEl.remove();
	}
}

export class Workspace extends Events {
	layoutReady = false;
	activeLeaf: WorkspaceLeaf | null = null;
	private leaves: WorkspaceLeaf[] = [];
	private readyCallbacks: Array<() => unknown> = [];

	constructor(
		private readonly app: App,
		private readonly mainEl: HTMLElement,
		private readonly rightEl: HTMLElement,
	) {
		super();
	}

	onLayoutReady(cb: () => unknown): void {
		if (this.layoutReady) cb();
		else this.readyCallbacks.push(cb);
	}

	/** Shim-only: what Obsidian does once the vault and layout are loaded. */
	triggerLayoutReady(): void {
		this.layoutReady = true;
		for (const cb of this.readyCallbacks.splice(0)) cb();
	}

	getLeaf(pane: "tab" | "split" | "window" | boolean = false): WorkspaceLeaf {
		const current = this.activeLeaf?.side === "main" ? this.activeLeaf : this.leaves.find((l) => l.side === "main");
		if (pane === false && current) return current;
		const leaf = new WorkspaceLeaf(this.app, "main", this.mainEl);
		this.leaves.push(leaf);
		return leaf;
	}

	getRightLeaf(_split: boolean): WorkspaceLeaf {
		const leaf = new WorkspaceLeaf(this.app, "right", this.rightEl);
		this.leaves.push(leaf);
		return leaf;
	}

	async revealLeaf(leaf: WorkspaceLeaf): Promise<void> {
		leaf.containerEl.addClass("is-revealed");
	}

	getLeavesOfType(type: string): WorkspaceLeaf[] {
		return this.leaves.filter((l) => l.view?.getViewType() === type);
	}

	/** Shim-only: every leaf, for cleanup checks. */
	allLeaves(): WorkspaceLeaf[] {
		return [...this.leaves];
	}

	removeLeaf(leaf: WorkspaceLeaf): void {
		this.leaves = this.leaves.filter((l) => l !== leaf);
		if (this.activeLeaf === leaf) {
			// As in Obsidian: closing the active tab changes the active leaf.
			this.activeLeaf = null;
			this.trigger("active-leaf-change", null);
		}
	}

	setActiveLeaf(leaf: WorkspaceLeaf): void {
		if (this.activeLeaf === leaf) return;
		for (const l of this.leaves) l.containerEl.removeClass("mod-active");
		leaf.containerEl.addClass("mod-active");
		if (leaf.side === "main") for (const l of this.leaves) if (l.side === "main") l.containerEl.toggleClass("is-hidden", l !== leaf);
		this.activeLeaf = leaf;
		this.trigger("active-leaf-change", leaf);
	}

	getActiveFile(): TFile | null {
		const main = this.lastMainLeaf();
		return main?.view instanceof MarkdownView ? main.view.file : null;
	}

	getActiveViewOfType<T>(type: abstract new (...args: never[]) => T): T | null {
		const view = this.activeLeaf?.view;
		return view instanceof type ? (view as T) : null;
	}

	async openLinkText(linktext: string, _source: string, pane: boolean | "tab" = false): Promise<void> {
		const name = linktext.split("#")[0] ?? linktext;
		const file =
			this.app.vault.getFileByPath(name) ??
			this.app.vault.getFileByPath(`${name}.md`) ??
			this.app.vault.getMarkdownFiles().find((f) => f.basename === name);
		if (file) await this.getLeaf(pane).openFile(file);
	}

	private lastMainLeaf(): WorkspaceLeaf | undefined {
		if (this.activeLeaf?.side === "main") return this.activeLeaf;
		return this.leaves.find((l) => l.side === "main" && !l.containerEl.hasClass("is-hidden"));
	}
}
