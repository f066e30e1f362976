/** Related notes as rows: title, folder, why (chips), open on click, drag or insert as a link. */
import type { RelatedEntry } from "../core/related";
import { folderOf } from "./recallItem";

export interface RelatedActions {
	/** Open the note; `evt` tells a modifier click (new tab) from a plain one. */
	open(path: string, evt: MouseEvent): void;
	/** Insert a link to the note at the cursor of the last active editor. */
	insertLink(path: string): void;
	/** Start dragging the note (as a link into an editor, or a file onto a tab). */
	dragStart(path: string, evt: DragEvent): void;
}

const MAX_CHIPS = 3;

export function renderRelatedList(el: HTMLElement, entries: readonly RelatedEntry[], actions: RelatedActions): void {
	const list = el.createDiv({ cls: "engram-related-list" });
	for (const e of entries) {
		const row = list.createDiv({ cls: "engram-related", attr: { draggable: "true", "data-path": e.path } });
		row.addEventListener("dragstart", (evt) => actions.dragStart(e.path, evt));
		const main = row.createDiv({ cls: "engram-related-main" });
		const title = main.createEl("a", { cls: "engram-link engram-related-title", text: e.title, href: "#" });
		title.addEventListener("click", (evt) => {
			evt.preventDefault();
			actions.open(e.path, evt);
		});
		const folder = folderOf(e.path);
		if (folder) main.createSpan({ cls: "engram-related-folder", text: folder });
		const reasons = main.createDiv({ cls: "engram-reasons" });
		// The strongest reasons as chips; every reason in the row's tooltip.
		for (const r of e.reasons.slice(0, MAX_CHIPS)) reasons.createSpan({ cls: `engram-reason engram-reason-${r.kind}`, text: r.label, attr: { title: r.detail } });
		row.setAttr("title", e.reasons.map((r) => r.detail).join("\n"));
		const insert = row.createEl("button", { cls: "clickable-icon engram-related-insert", text: "[[ ]]", attr: { "aria-label": `Insert a link to ${e.title}` } });
		insert.addEventListener("click", (evt) => {
			evt.stopPropagation();
			actions.insertLink(e.path);
		});
	}
}
