/** Related notes: a right-sidebar view that follows the active note and the section under the
 * cursor, listing the most related notes with why. */
import { ItemView, MarkdownView, TFile, type WorkspaceLeaf } from "obsidian";
import { isOnline } from "../core/status";
import { Debouncer, windowTimers } from "../core/timers";
import { renderRelatedView, type RelatedModel } from "../ui/relatedView";
import type { EngramContext } from "./context";
import { basisNote, findRelated } from "./related";
import { relatedActions } from "./relatedActions";
import { sectionAt, type Section } from "./vaultGraph";

export const VIEW_TYPE_RELATED = "engram-related";

const LIMIT = 20;
/** Cursor moves settle before the section is looked up again. */
const CURSOR_DEBOUNCE_MS = 300;

export class RelatedView extends ItemView {
	private readonly ctx: EngramContext;
	private file: TFile | null = null;
	private section: Section | null = null;
	private followSection = true;
	private seq = 0;
	private model: RelatedModel = { kind: "no-note" };
	private readonly cursor = new Debouncer(windowTimers, CURSOR_DEBOUNCE_MS);

	constructor(leaf: WorkspaceLeaf, ctx: EngramContext) {
		super(leaf);
		this.ctx = ctx;
	}

	getViewType(): string {
		return VIEW_TYPE_RELATED;
	}

	getDisplayText(): string {
		return "Related notes";
	}

	getIcon(): string {
		return "sparkles";
	}

	async onOpen(): Promise<void> {
		this.addAction("refresh-cw", "Refresh", () => void this.refresh());
		this.addAction("list-tree", "Follow the section under the cursor (on/off)", () => {
			this.followSection = !this.followSection;
			this.section = this.followSection ? this.currentSection() : null;
			void this.refresh();
		});
		const ws = this.app.workspace;
		this.registerEvent(ws.on("file-open", () => this.follow()));
		this.registerEvent(ws.on("active-leaf-change", () => this.follow()));
		this.registerEvent(ws.on("editor-change", () => this.cursor.schedule(() => this.followCursor())));
		// CodeMirror has no public cursor event in the plugin API; the DOM's selection event is it.
		this.registerDomEvent(document, "selectionchange", () => this.cursor.schedule(() => this.followCursor()));
		this.register(() => this.cursor.cancel());
		this.register(
			this.ctx.monitor.onChange((next, prev) => {
				if (isOnline(next) !== isOnline(prev) || (prev.kind === "indexing" && next.kind !== "indexing")) void this.refresh();
			}),
		);
		this.follow();
	}

	async onClose(): Promise<void> {
		this.seq++;
		this.contentEl.empty();
	}

	private follow(): void {
		const file = this.app.workspace.getActiveFile();
		const next = file instanceof TFile && file.extension === "md" ? file : null;
		if (next === null) {
			// The focus moved to a sidebar or the graph: keep showing the last note.
			if (this.file === null) this.show({ kind: "no-note" });
			return;
		}
		const section = this.followSection ? this.currentSection(next) : null;
		if (next.path === this.file?.path && sameSection(section, this.section)) return;
		this.file = next;
		this.section = section;
		void this.refresh();
	}

	private followCursor(): void {
		if (!this.followSection || !this.file) return;
		const section = this.currentSection();
		if (sameSection(section, this.section)) return;
		this.section = section;
		void this.refresh();
	}

	/** The section under the cursor of the editor showing the followed note, if any. */
	private currentSection(file: TFile | null = this.file): Section | null {
		if (!file) return null;
		const view = this.app.workspace.getActiveViewOfType(MarkdownView);
		if (!view || view.file?.path !== file.path) return this.section;
		return sectionAt(this.app, file, view.editor.getCursor().line);
	}

	async refresh(): Promise<void> {
		const mySeq = ++this.seq;
		const file = this.file;
		if (!file) return this.show({ kind: "no-note" });
		if (this.model.kind === "no-note" || (this.model.kind === "ready" && this.model.title !== file.basename)) {
			this.show({ kind: "loading", title: file.basename });
		}
		const found = await findRelated(this.ctx, this.ctx.graph, file, this.section, undefined, LIMIT);
		if (mySeq !== this.seq) return;
		this.show({ kind: "ready", title: file.basename, section: found.section?.heading ?? null, entries: found.entries, note: basisNote(found.basis) });
	}

	private show(model: RelatedModel): void {
		this.model = model;
		this.contentEl.setAttr("data-path", this.file?.path ?? "");
		renderRelatedView(this.contentEl, model, relatedActions(this.ctx, () => this.file?.path ?? null));
	}
}

function sameSection(a: Section | null, b: Section | null): boolean {
	return a === b || (a !== null && b !== null && a.heading === b.heading && a.from === b.from);
}
