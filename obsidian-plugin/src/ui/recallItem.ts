/** One row of the recall modal, built with DOM calls only (text is never parsed as HTML). */
import { segments } from "../core/highlight";
import type { RecallItem } from "../core/recall";
import { formatScore } from "./format";

/** Longest snippet shown; the backend's snippets are short, recent facts may not be. */
const MAX_SNIPPET_CHARS = 300;

export function renderRecallItem(el: HTMLElement, item: RecallItem): void {
	el.addClass("engram-recall-item");
	const head = el.createDiv({ cls: "engram-recall-head" });
	head.createSpan({ cls: "engram-recall-title", text: item.title });
	if (item.factType) head.createSpan({ cls: "engram-badge engram-badge-fact", text: item.factType });
	if (item.score !== null) head.createSpan({ cls: "engram-recall-score", text: formatScore(item.score) });
	const where = item.vaultPath ?? `${item.collection}: ${item.path}`;
	el.createDiv({ cls: "engram-recall-path", text: item.line > 1 ? `${where}:${item.line}` : where });
	if (item.snippet) {
		const snippet = el.createDiv({ cls: "engram-recall-snippet" });
		const chars = Array.from(item.snippet);
		const text = chars.length > MAX_SNIPPET_CHARS ? chars.slice(0, MAX_SNIPPET_CHARS).join("") + "…" : item.snippet;
		for (const seg of segments(text, item.highlights)) {
			if (seg.hit) snippet.createEl("mark", { cls: "engram-hit", text: seg.text });
			else snippet.appendText(seg.text);
		}
	}
	if (item.vaultPath === null) el.addClass("engram-recall-external");
}
