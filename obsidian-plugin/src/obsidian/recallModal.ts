/** The recall modal: search as you type; Enter opens, Mod+Enter opens in a tab, Shift+Enter or
 * Alt+Enter inserts a link, Mod+I shows the numbers behind each result. */
import { Keymap, MarkdownView, Notice, SuggestModal } from "obsidian";
import { emptyState, RecallController, RESULT_LIMIT, SWITCH_PREFIX, type EmptyState, type HintAction, type RecallItem, type RecallOutcome } from "../core/recall";
import { readableRuns } from "../core/markdownText";
import { windowTimers } from "../core/timers";
import { renderEmptyState, renderRecallItem } from "../ui/recallItem";
import { renderRuns } from "../ui/richText";
import type { EngramContext } from "./context";
import { insertLink } from "./navigation";

export class RecallModal extends SuggestModal<RecallItem> {
	private readonly ctx: EngramContext;
	private readonly controller: RecallController;
	private readonly barEl: HTMLElement;
	/** The editor that was active when the modal opened, for inserting a link. */
	private readonly sourceView: MarkdownView | null;
	private details = false;
	private empty: EmptyState = { message: "", hints: [] };
	private lastQuery = "";

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
			{ command: "↑↓", purpose: "navigate" },
			{ command: "↵", purpose: "open" },
			{ command: "mod ↵", purpose: "new tab" },
			{ command: "shift ↵", purpose: "insert link" },
			{ command: "mod i", purpose: "details" },
			{ command: SWITCH_PREFIX, purpose: deep ? "deep search" : "quick search" },
		]);
		this.barEl = createDiv({ cls: "engram-recall-bar" });
		this.resultContainerEl.before(this.barEl);
		for (const mods of [["Mod"], ["Shift"], ["Alt"]] as const) {
			this.scope.register([...mods], "Enter", (evt) => {
				this.selectActiveSuggestion(evt);
				return false;
			});
		}
		this.scope.register(["Mod"], "I", () => {
			this.toggleDetails();
			return false;
		});
	}

	async getSuggestions(query: string): Promise<RecallItem[]> {
		this.lastQuery = query;
		const outcome = await this.controller.request(query);
		this.showOutcome(outcome);
		return outcome.items;
	}

	renderSuggestion(item: RecallItem, el: HTMLElement): void {
		renderRecallItem(el, item, { details: this.details });
	}

	onNoSuggestion(): void {
		this.emptyStateText = this.empty.message;
		super.onNoSuggestion();
		const el = this.resultContainerEl.querySelector<HTMLElement>(".suggestion-empty") ?? this.resultContainerEl.createDiv({ cls: "suggestion-empty" });
		renderEmptyState(el, this.empty, (action) => this.act(action));
	}

	onChooseSuggestion(item: RecallItem, evt: MouseEvent | KeyboardEvent): void {
		if (item.vaultPath === null) {
			new Notice(`Engram: ${item.path} is in collection "${item.collection}", outside this vault.`);
			return;
		}
		if (evt.shiftKey || evt.altKey) {
			if (!this.sourceView || !insertLink(this.ctx.app, this.sourceView, item.vaultPath)) {
				new Notice("Engram: open a note in an editor to insert a link.");
			}
			return;
		}
		if (item.page !== null) void this.ctx.openPdfPage(item.vaultPath, item.page, Keymap.isModEvent(evt));
		else void this.ctx.openNote(item.vaultPath, item.line, Keymap.isModEvent(evt));
	}

	onClose(): void {
		this.controller.dispose();
		super.onClose();
	}

	private toggleDetails(): void {
		this.details = !this.details;
		this.modalEl.toggleClass("engram-show-details", this.details);
		this.rerun(this.lastQuery);
	}

	/** Run `query` again as if typed (hints and the details toggle). */
	private rerun(query: string): void {
		this.inputEl.value = query;
		this.inputEl.dispatchEvent(new Event("input"));
		this.inputEl.focus();
	}

	private act(action: HintAction): void {
		if (action === "deep") {
			const text = this.inputEl.value.trim().replace(/^\?/, "");
			this.rerun(this.ctx.settings().defaultSearchMode === "search" ? `${SWITCH_PREFIX}${text}` : text);
		} else if (action === "start") {
			this.close();
			this.ctx.startBackend();
		} else {
			this.close();
			this.ctx.showStatus();
		}
	}

	private showOutcome(o: RecallOutcome): void {
		this.barEl.empty();
		const mode = o.query.mode === "query" ? "Deep search" : "Quick search";
		this.barEl.createSpan({ cls: "engram-badge", text: o.query.text === "" ? "Recent facts" : mode });
		if (o.items.length > 0 && o.query.text !== "") {
			this.barEl.createSpan({ cls: "engram-recall-count", text: `${o.items.length}${o.items.length >= RESULT_LIMIT ? "+" : ""} notes` });
		}
		for (const n of o.notices) renderRuns(this.barEl.createSpan({ cls: "engram-notice" }), readableRuns(n));
		const status = this.ctx.monitor.status;
		this.empty = emptyState(o, status ? { documents: status.documents, embedded: status.embedded } : null);
		this.emptyStateText = this.empty.message;
	}
}
