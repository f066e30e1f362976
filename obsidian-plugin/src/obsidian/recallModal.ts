/** The recall modal: search as you type; Enter opens, Mod+Enter opens in a tab, Shift+Enter links. */
import { Keymap, MarkdownView, Notice, SuggestModal } from "obsidian";
import { RecallController, RESULT_LIMIT, SWITCH_PREFIX, type RecallItem, type RecallOutcome } from "../core/recall";
import { windowTimers } from "../core/timers";
import { renderRecallItem } from "../ui/recallItem";
import type { EngramContext } from "./context";
import { insertLink } from "./navigation";

export class RecallModal extends SuggestModal<RecallItem> {
	private readonly ctx: EngramContext;
	private readonly controller: RecallController;
	private readonly barEl: HTMLElement;
	/** The editor that was active when the modal opened, for Shift+Enter. */
	private readonly sourceView: MarkdownView | null;

	constructor(ctx: EngramContext) {
		super(ctx.app);
		this.ctx = ctx;
		this.sourceView = ctx.app.workspace.getActiveViewOfType(MarkdownView);
		this.controller = new RecallController(
			ctx.client,
			windowTimers,
			() => ctx.settings().defaultSearchMode,
			() => ctx.monitor.status?.vault.collection ?? null,
		);
		this.limit = RESULT_LIMIT;
		this.modalEl.addClass("engram-recall");
		const deep = ctx.settings().defaultSearchMode === "search";
		this.setPlaceholder(deep ? "Search notes and facts (start with ? for a deep search)" : "Deep search (start with ? for a quick search)");
		this.setInstructions([
			{ command: "↵", purpose: "open" },
			{ command: "mod ↵", purpose: "open in new tab" },
			{ command: "shift ↵", purpose: "insert link" },
			{ command: SWITCH_PREFIX, purpose: deep ? "deep search" : "quick search" },
		]);
		this.barEl = createDiv({ cls: "engram-recall-bar" });
		this.resultContainerEl.before(this.barEl);
		this.scope.register(["Mod"], "Enter", (evt) => {
			this.selectActiveSuggestion(evt);
			return false;
		});
		this.scope.register(["Shift"], "Enter", (evt) => {
			this.selectActiveSuggestion(evt);
			return false;
		});
	}

	async getSuggestions(query: string): Promise<RecallItem[]> {
		const outcome = await this.controller.request(query);
		this.showOutcome(outcome);
		return outcome.items;
	}

	renderSuggestion(item: RecallItem, el: HTMLElement): void {
		renderRecallItem(el, item);
	}

	onChooseSuggestion(item: RecallItem, evt: MouseEvent | KeyboardEvent): void {
		if (item.vaultPath === null) {
			new Notice(`Engram: ${item.path} is in collection "${item.collection}", outside this vault.`);
			return;
		}
		if (evt.shiftKey) {
			if (!this.sourceView || !insertLink(this.ctx.app, this.sourceView, item.vaultPath)) {
				new Notice("Engram: open a note in an editor to insert a link.");
			}
			return;
		}
		void this.ctx.openNote(item.vaultPath, item.line, Keymap.isModEvent(evt));
	}

	onClose(): void {
		this.controller.dispose();
		super.onClose();
	}

	private showOutcome(o: RecallOutcome): void {
		this.barEl.empty();
		const mode = o.query.mode === "query" ? "Deep search" : "Quick search";
		this.barEl.createSpan({ cls: "engram-badge", text: o.query.text === "" ? "Recent facts" : mode });
		for (const n of o.notices) this.barEl.createSpan({ cls: "engram-notice", text: n });
		if (o.error) this.barEl.createSpan({ cls: "engram-error", text: o.error });
		if (o.error) this.emptyStateText = o.error;
		else this.emptyStateText = o.query.text === "" ? "No facts yet." : "No matches.";
	}
}
