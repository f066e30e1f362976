/** Opening notes at a line and inserting links: the only places that move the user around. */
import { MarkdownView, Notice, type App, type PaneType } from "obsidian";

/** Open a vault note at a 1-based line; `pane` as from Keymap.isModEvent (false = current tab). */
export async function openNote(app: App, path: string, line = 1, pane: PaneType | boolean = false): Promise<boolean> {
	const file = app.vault.getFileByPath(path);
	if (!file) {
		new Notice(`Engram: ${path} is not in this vault (yet).`);
		return false;
	}
	const leaf = app.workspace.getLeaf(pane);
	const target = Math.max(0, line - 1);
	await leaf.openFile(file, { active: true, eState: { line: target } });
	const view = leaf.view;
	if (view instanceof MarkdownView && line > 1) {
		const pos = { line: target, ch: 0 };
		view.editor.setCursor(pos);
		view.editor.scrollIntoView({ from: pos, to: pos }, true);
	}
	return true;
}

/** Insert a link to `path` at the cursor of `view`, in the user's link format. */
export function insertLink(app: App, view: MarkdownView, path: string): boolean {
	const file = app.vault.getFileByPath(path);
	if (!file || !view.file) return false;
	view.editor.replaceSelection(app.fileManager.generateMarkdownLink(file, view.file.path));
	return true;
}
