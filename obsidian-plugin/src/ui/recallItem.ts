/** One row of the recall modal, built with DOM calls only (text is never parsed as HTML). */
import { detailsLine } from "../core/details";
import { clipRuns, wholeWordHits } from "../core/highlight";
import { factTypeLabel } from "../core/labels";
import { readableRuns } from "../core/markdownText";
import type { EmptyState, HintAction, RecallItem } from "../core/recall";
import { renderRuns } from "./richText";

/** Longest snippet shown; the backend's snippets are short, recent facts may not be. */
const MAX_SNIPPET_CHARS = 240;

/** "Plugins › Core" for "Plugins/Core/Note.md"; "" at the vault root. */
export function folderOf(path: string): string {
	const parts = path.split("/");
	parts.pop();
	return parts.join(" › ");
}

export interface RowOptions {
	/** Show the score and how it was made (the details toggle). */
	details: boolean;
}

export function renderRecallItem(el: HTMLElement, item: RecallItem, opts: RowOptions = { details: false }): void {
	el.addClass("engram-recall-item");
	const head = el.createDiv({ cls: "engram-recall-head" });
	const title = head.createSpan({ cls: "engram-recall-title" });
	renderRuns(title, wholeWordHits([{ text: item.title, hit: false, code: false }], item.terms));
	if (item.factType) head.createSpan({ cls: "engram-badge engram-badge-fact", text: factTypeLabel(item.factType) });

	const where = el.createDiv({ cls: "engram-recall-path" });
	if (item.vaultPath === null) where.createSpan({ cls: "engram-recall-collection", text: item.collection });
	const folder = folderOf(item.path);
	if (folder) where.createSpan({ cls: "engram-recall-folder", text: folder });
	if (item.page !== null) where.createSpan({ cls: "engram-recall-line", text: `page ${item.page}` });
	else if (item.line > 1) where.createSpan({ cls: "engram-recall-line", text: `line ${item.line}` });
	el.setAttr("title", item.vaultPath ?? `${item.collection}: ${item.path}`);

	if (item.snippet) {
		const runs = wholeWordHits(readableRuns(item.snippet.slice(0, 4000), item.highlights), item.terms);
		const text = clipRuns(runs, MAX_SNIPPET_CHARS);
		if (text.some((r) => r.text.trim() !== "")) renderRuns(el.createDiv({ cls: "engram-recall-snippet" }), text);
	}
	if (opts.details) el.createDiv({ cls: "engram-recall-details", text: detailsLine(item.score, item.rank, item.explain) });
	if (item.vaultPath === null) el.addClass("engram-recall-external");
}

/** The empty list: what happened, and what to try next (some hints are buttons). */
export function renderEmptyState(el: HTMLElement, state: EmptyState, act: (action: HintAction) => void): void {
	el.empty();
	el.addClass("engram-recall-empty");
	el.createDiv({ cls: "engram-recall-empty-message", text: state.message });
	if (state.hints.length === 0) return;
	const list = el.createEl("ul", { cls: "engram-hints" });
	for (const h of state.hints) {
		const li = list.createEl("li");
		if (h.action) {
			const action = h.action;
			const a = li.createEl("a", { cls: "engram-link", text: h.text, href: "#" });
			a.addEventListener("click", (evt) => {
				evt.preventDefault();
				act(action);
			});
		} else li.setText(h.text);
	}
}
