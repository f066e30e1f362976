/** The related-notes view's content: what it is about, what the list rests on, the list. */
import type { RelatedEntry } from "../core/related";
import { renderRelatedList, type RelatedActions } from "./relatedList";

export type RelatedModel =
	| { kind: "no-note" }
	| { kind: "loading"; title: string }
	| { kind: "ready"; title: string; section: string | null; entries: RelatedEntry[]; note: string | null };

export function renderRelatedView(el: HTMLElement, model: RelatedModel, actions: RelatedActions): void {
	el.empty();
	el.addClass("engram-panel", "engram-related-view");
	if (model.kind === "no-note") {
		el.createDiv({ cls: "engram-empty", text: "Open a note to see the notes related to it." });
		return;
	}
	const head = el.createDiv({ cls: "engram-panel-head" });
	head.createDiv({ cls: "engram-muted", text: "Related to" });
	head.createDiv({ cls: "engram-panel-title", text: model.title });
	if (model.kind === "loading") {
		el.createDiv({ cls: "engram-muted", text: "Finding related notes…" });
		return;
	}
	if (model.section) head.createDiv({ cls: "engram-section-chip", text: `§ ${model.section}`, attr: { title: "The section under the cursor" } });
	if (model.note) el.createDiv({ cls: "engram-muted engram-basis", text: model.note });
	if (model.entries.length === 0) {
		el.createDiv({ cls: "engram-empty", text: "Nothing related yet. Link this note to others, tag it, or run engram embed to relate notes by meaning." });
		return;
	}
	renderRelatedList(el, model.entries, actions);
}
