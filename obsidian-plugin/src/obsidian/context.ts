/** What views and modals get from the plugin (instead of a reference to the plugin itself). */
import type { App, PaneType } from "obsidian";
import type { EngramClient } from "../api/client";
import type { Fact } from "../api/types";
import type { EngramSettings } from "../core/settings";
import type { StatusMonitor } from "../core/status";
import type { GraphSource } from "./vaultGraph";

export interface EngramContext {
	app: App;
	client: EngramClient;
	monitor: StatusMonitor;
	/** The vault's link graph and tags, from Obsidian's metadata cache. */
	graph: GraphSource;
	settings(): EngramSettings;
	/** The facts folder in effect (setting, else what the backend reports). */
	factsRoot(): string;
	openNote(path: string, line?: number, pane?: PaneType | boolean): Promise<boolean>;
	/** Open a vault PDF at a 1-based page (Obsidian's viewer reads `#page=N`). */
	openPdfPage(path: string, page: number, pane?: PaneType | boolean): Promise<void>;
	/** Store the note (or the selection in it) as a fact; shows a notice either way. */
	storeAsFact(path: string, selection?: string): Promise<Fact | null>;
	/** Start the backend with the configured command (the status window's button). */
	startBackend(): void;
	showStatus(): void;
	/** Open (or reveal) the related-notes view. */
	showRelated(): void;
}
