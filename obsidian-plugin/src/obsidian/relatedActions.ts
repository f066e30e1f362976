/** What a related-note row does in the app: open, insert a link in the editor, drag as a link. */
import { Keymap, MarkdownView, Notice } from "obsidian";
import type { RelatedActions } from "../ui/relatedList";
import type { EngramContext } from "./context";
import { insertLink } from "./navigation";

/** The editor showing `path` (the note the related list is about), else the last one used. */
function editorFor(ctx: EngramContext, path: string | null): MarkdownView | null {
	const views = ctx.app.workspace
		.getLeavesOfType("markdown")
		.map((l) => l.view)
		.filter((v): v is MarkdownView => v instanceof MarkdownView);
	return views.find((v) => v.file?.path === path) ?? ctx.app.workspace.getActiveViewOfType(MarkdownView) ?? views[0] ?? null;
}

/** Row actions for a list about the note at `source()`. */
export function relatedActions(ctx: EngramContext, source: () => string | null): RelatedActions {
	return {
		open: (path, evt) => void ctx.openNote(path, 1, Keymap.isModEvent(evt)),
		insertLink: (path) => {
			const view = editorFor(ctx, source());
			if (!view || !insertLink(ctx.app, view, path)) new Notice("Engram: open a note in an editor to insert a link.");
		},
		dragStart: (path, evt) => {
			const file = ctx.app.vault.getFileByPath(path);
			if (!file || !evt.dataTransfer) return;
			// Dropped into an editor, plain text is inserted as typed: a link in the user's format.
			const link = ctx.app.fileManager.generateMarkdownLink(file, source() ?? "");
			evt.dataTransfer.setData("text/plain", link);
			evt.dataTransfer.effectAllowed = "copyLink";
		},
	};
}
