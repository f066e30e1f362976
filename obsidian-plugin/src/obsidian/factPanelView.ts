/** The fact panel: a right-sidebar view that follows the active note. */
import { ItemView, Notice, TFile, type WorkspaceLeaf } from "obsidian";
import { errorMessage, isHttpStatus } from "../api/errors";
import type { Fact, NoteMetadata } from "../api/types";
import { isGenerated } from "../core/backlinks";
import { isInside } from "../core/settings";
import { isOnline } from "../core/status";
import { renderPanel, type PanelActions, type PanelEnv, type PanelModel } from "../ui/factPanel";
import type { EngramContext } from "./context";
import { basisNote, findRelated } from "./related";
import { relatedActions } from "./relatedActions";
import { resolveLink } from "./vaultGraph";

export const VIEW_TYPE_FACTS = "engram-facts";

/** Related notes listed in the panel (it shows five, and says how many more there are). */
const PANEL_RELATED = 20;

export class FactPanelView extends ItemView {
	private readonly ctx: EngramContext;
	private path: string | null = null;
	private model: PanelModel = { kind: "no-note" };
	private seq = 0;
	private readonly actions: PanelActions;
	private readonly env: PanelEnv;

	constructor(leaf: WorkspaceLeaf, ctx: EngramContext) {
		super(leaf);
		this.ctx = ctx;
		this.actions = {
			...relatedActions(ctx, () => this.path),
			openPath: (path, line) => void ctx.openNote(path, line),
			openFact: (id) => void this.openFact(id),
			storeAsFact: (path) => void this.store(path),
			archiveFact: (fact) => void this.archive(fact),
			reindex: (path) => void this.reindex(path),
			showRelated: () => ctx.showRelated(),
		};
		this.env = {
			resolve: (linktext, source) => resolveLink(this.app, linktext, source),
			isGenerated: (p) => isGenerated(p, ctx.factsRoot()),
			toggled: new Set<string>(),
		};
	}

	getViewType(): string {
		return VIEW_TYPE_FACTS;
	}

	getDisplayText(): string {
		return "Engram facts";
	}

	getIcon(): string {
		return "brain";
	}

	async onOpen(): Promise<void> {
		this.contentEl.addClass("engram-panel");
		this.addAction("refresh-cw", "Refresh", () => void this.refresh());
		this.registerEvent(this.app.workspace.on("file-open", () => this.follow()));
		this.registerEvent(this.app.workspace.on("active-leaf-change", () => this.follow()));
		this.register(
			this.ctx.monitor.onChange((next, prev) => {
				if (isOnline(next) !== isOnline(prev) || (prev.kind === "indexing" && next.kind !== "indexing")) {
					void this.refresh();
				}
			}),
		);
		this.path = null;
		this.follow();
	}

	async onClose(): Promise<void> {
		this.seq++;
		this.contentEl.empty();
	}

	/** Show the active note if it changed. */
	private follow(): void {
		const file = this.app.workspace.getActiveFile();
		const path = file instanceof TFile && file.extension === "md" ? file.path : null;
		if (path === this.path && this.model.kind !== "no-note") return;
		if (path !== this.path) this.env.toggled.clear();
		this.path = path;
		void this.refresh();
	}

	async refresh(): Promise<void> {
		const mySeq = ++this.seq;
		const path = this.path;
		if (path === null) return this.show({ kind: "no-note" });
		if (!isOnline(this.ctx.monitor.state)) {
			return this.show({ kind: "offline", message: "Engram is not connected. Click the status bar item for details." });
		}
		const same = this.model.kind === "ready" && this.model.meta.path === path ? this.model : null;
		if (!same) this.show({ kind: "loading", path });
		let next: PanelModel;
		try {
			const meta = await this.ctx.client.noteMetadata(path);
			const canStore = !isInside(path, this.ctx.factsRoot());
			next = { kind: "ready", meta, canStore, busy: false, related: same?.related ?? null };
		} catch (err) {
			next = isHttpStatus(err, 404) ? { kind: "unknown", path } : { kind: "error", path, message: errorMessage(err) };
		}
		if (mySeq !== this.seq) return;
		this.show(next);
		if (next.kind === "ready") void this.loadRelated(mySeq, next.meta);
	}

	/** Related notes come second: the rest of the panel does not wait for a search. */
	private async loadRelated(mySeq: number, meta: NoteMetadata): Promise<void> {
		const file = this.app.vault.getFileByPath(meta.path);
		if (!file) return;
		const found = await findRelated(this.ctx, this.ctx.graph, file, null, meta, PANEL_RELATED);
		if (mySeq !== this.seq || this.model.kind !== "ready") return;
		this.show({ ...this.model, related: { entries: found.entries, note: basisNote(found.basis) } });
	}

	private show(model: PanelModel): void {
		this.model = model;
		renderPanel(this.contentEl, model, this.actions, this.env);
	}

	private setBusy(busy: boolean): void {
		if (this.model.kind === "ready") this.show({ ...this.model, busy });
	}

	private async openFact(id: string): Promise<void> {
		try {
			const fact = await this.ctx.client.getFact(id);
			await this.ctx.openNote(fact.path);
		} catch (err) {
			new Notice(`Engram: could not open fact ${id}: ${errorMessage(err)}`);
		}
	}

	private async store(path: string): Promise<void> {
		this.setBusy(true);
		await this.ctx.storeAsFact(path);
		await this.refresh();
	}

	private async archive(fact: Fact): Promise<void> {
		this.setBusy(true);
		try {
			await this.ctx.client.archiveFact(fact.id);
			new Notice(`Engram: archived "${fact.title}".`);
		} catch (err) {
			new Notice(`Engram: could not archive: ${errorMessage(err)}`);
		}
		await this.refresh();
	}

	private async reindex(path: string): Promise<void> {
		this.setBusy(true);
		try {
			await this.ctx.client.index({ paths: [path] });
		} catch (err) {
			new Notice(`Engram: could not reindex: ${errorMessage(err)}`);
		}
		await this.refresh();
	}
}
