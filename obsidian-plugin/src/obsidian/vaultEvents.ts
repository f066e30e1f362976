/** Vault and workspace events feeding auto-sync and the active-note reporter. */
import { MarkdownView, TFile, TFolder, type Plugin, type TAbstractFile } from "obsidian";
import type { ActiveNote } from "../api/types";
import type { SyncQueue } from "../core/changes";

function isNote(file: TAbstractFile): file is TFile {
	return file instanceof TFile && file.extension === "md";
}

/** Every note at or under `file` (a folder's descendants, or the file itself). */
function notesUnder(file: TAbstractFile): TFile[] {
	if (isNote(file)) return [file];
	if (!(file instanceof TFolder)) return [];
	const out: TFile[] = [];
	const walk = (f: TAbstractFile): void => {
		if (isNote(f)) out.push(f);
		else if (f instanceof TFolder) f.children.forEach(walk);
	};
	walk(file);
	return out;
}

/**
 * Register vault handlers (call inside onLayoutReady: `create` fires for every file while the
 * vault loads). Folder renames and deletes are expanded to the notes inside them.
 */
export function registerVaultSync(plugin: Plugin, queue: SyncQueue, enabled: () => boolean): void {
	const { vault } = plugin.app;
	plugin.registerEvent(
		vault.on("create", (file) => {
			if (enabled() && isNote(file)) queue.changed(file.path);
		}),
	);
	plugin.registerEvent(
		vault.on("modify", (file) => {
			if (enabled() && isNote(file)) queue.changed(file.path);
		}),
	);
	plugin.registerEvent(
		vault.on("delete", (file) => {
			if (!enabled()) return;
			for (const note of notesUnder(file)) queue.removed(note.path);
		}),
	);
	plugin.registerEvent(
		vault.on("rename", (file, oldPath) => {
			if (!enabled()) return;
			if (file instanceof TFolder) {
				for (const note of notesUnder(file)) queue.renamed(oldPath + note.path.slice(file.path.length), note.path);
			} else if (isNote(file)) {
				queue.renamed(oldPath, file.path);
			} else if (oldPath.endsWith(".md")) {
				queue.removed(oldPath); // renamed away from .md: no longer a note
			}
		}),
	);
}

/**
 * The active markdown editor's note, selection and 1-based cursor line; null when no note is
 * open in any tab; undefined when the focus is elsewhere (a sidebar, the graph) while notes stay
 * open, which keeps the last report.
 */
export function currentActiveNote(plugin: Plugin): ActiveNote | null | undefined {
	const ws = plugin.app.workspace;
	const view = ws.getActiveViewOfType(MarkdownView);
	if (!view?.file) return ws.getLeavesOfType("markdown").length === 0 ? null : undefined;
	const editor = view.editor;
	return { path: view.file.path, selection: editor.getSelection(), cursorLine: editor.getCursor().line + 1 };
}

/** Watch what the user looks at; `report` is called on every change (it debounces). */
export function registerActiveNoteEvents(plugin: Plugin, report: () => void): void {
	const ws = plugin.app.workspace;
	plugin.registerEvent(ws.on("active-leaf-change", report));
	plugin.registerEvent(ws.on("file-open", report));
	plugin.registerEvent(ws.on("layout-change", report)); // a closed tab, even without focus
	plugin.registerEvent(ws.on("editor-change", report));
	// CodeMirror has no public selection event in the plugin API; the DOM one covers it.
	plugin.registerDomEvent(document, "selectionchange", report);
}
