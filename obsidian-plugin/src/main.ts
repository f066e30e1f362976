/** Plugin lifecycle: builds the parts, registers everything for cleanup, nothing else. */
import { MarkdownView, Notice, Plugin, type PaneType } from "obsidian";
import { EngramClient } from "./api/client";
import { errorMessage } from "./api/errors";
import type { Fact } from "./api/types";
import { ActiveNoteReporter } from "./core/activeNote";
import { SyncQueue } from "./core/changes";
import { serveArgs, splitCommand } from "./core/command";
import { effectiveFactsRoot, isInside, normalizeSettings, type EngramSettings } from "./core/settings";
import { isOnline, StatusMonitor } from "./core/status";
import { windowTimers } from "./core/timers";
import { BackendProcess } from "./obsidian/backendProcess";
import type { EngramContext } from "./obsidian/context";
import { FactPanelView, VIEW_TYPE_FACTS } from "./obsidian/factPanelView";
import { RelatedView, VIEW_TYPE_RELATED } from "./obsidian/relatedView";
import { GraphSource } from "./obsidian/vaultGraph";
import { openNote } from "./obsidian/navigation";
import { RecallModal } from "./obsidian/recallModal";
import { EngramSettingTab } from "./obsidian/settingsTab";
import { StatusModal } from "./obsidian/statusModal";
import { requestUrlTransport } from "./obsidian/transport";
import { currentActiveNote, registerActiveNoteEvents, registerVaultSync } from "./obsidian/vaultEvents";
import { discoveryPath, readDiscoveryFile, vaultBasePath, vaultPathForms } from "./obsidian/vaultFiles";
import { renderStatusBar } from "./ui/statusBar";

/** How long a backend we spawned may take to write discovery.json and answer. */
const START_TIMEOUT_MS = 60_000;
const START_POLL_MS = 1000;

export default class EngramPlugin extends Plugin {
	settings: EngramSettings = normalizeSettings(null);
	private client!: EngramClient;
	private monitor!: StatusMonitor;
	private sync!: SyncQueue;
	private reporter!: ActiveNoteReporter;
	private readonly backend = new BackendProcess();
	private graph!: GraphSource;
	private statusEl: HTMLElement | null = null;
	private pollTimer: number | null = null;
	private unloaded = false;

	async onload(): Promise<void> {
		this.settings = normalizeSettings(await this.loadData());
		const vaultPath = vaultBasePath(this.app);
		const discoveryFile = discoveryPath(this.app, this.manifest);
		this.client = new EngramClient({
			transport: requestUrlTransport,
			readDiscovery: () => readDiscoveryFile(this.app, discoveryFile),
			vaultPath: vaultPath === null ? "" : await vaultPathForms(vaultPath),
		});
		this.monitor = new StatusMonitor(this.client);
		this.graph = new GraphSource(this.app);
		this.sync = new SyncQueue((req) => this.client.index(req), windowTimers);
		this.reporter = new ActiveNoteReporter((note) => this.client.activeNote(note), windowTimers);
		this.register(() => {
			this.unloaded = true;
			void this.reporter.clear(); // agents must not see a note in an Obsidian that is gone
			this.monitor.dispose();
			this.sync.dispose();
			this.reporter.dispose();
			this.backend.stop();
		});

		const statusEl = this.addStatusBarItem();
		this.statusEl = statusEl;
		this.register(() => (this.statusEl = null));
		statusEl.addClass("mod-clickable");
		renderStatusBar(statusEl, this.monitor.state);
		this.registerDomEvent(statusEl, "click", () => this.openStatus());
		this.register(
			this.monitor.onChange((state, prev) => {
				if (this.statusEl) renderStatusBar(this.statusEl, state);
				if (isOnline(state) && !isOnline(prev)) {
					this.sync.retry();
					this.reporter.reset();
				}
			}),
		);

		const ctx = this.context();
		this.registerView(VIEW_TYPE_FACTS, (leaf) => new FactPanelView(leaf, ctx));
		this.registerView(VIEW_TYPE_RELATED, (leaf) => new RelatedView(leaf, ctx));
		this.addCommands(ctx);
		this.addSettingTab(new EngramSettingTab(this.app, this, this));

		this.app.workspace.onLayoutReady(() => {
			if (this.unloaded) return;
			registerVaultSync(this, this.sync, () => this.settings.autoSync);
			// Related notes read links and tags from a snapshot; a changed note makes a new one.
			this.registerEvent(this.app.metadataCache.on("resolved", () => this.graph.invalidate()));
			this.registerEvent(this.app.metadataCache.on("changed", () => this.graph.invalidate()));
			registerActiveNoteEvents(this, () => {
				if (this.settings.reportActiveNote && isOnline(this.monitor.state)) {
					const note = currentActiveNote(this);
					if (note !== undefined) this.reporter.update(note);
				}
			});
			void this.startup();
		});
		this.restartPolling();
	}

	async saveSettings(): Promise<void> {
		await this.saveData(this.settings);
		if (!this.settings.reportActiveNote) void this.reporter.clear();
		this.restartPolling();
	}

	private context(): EngramContext {
		return {
			app: this.app,
			client: this.client,
			monitor: this.monitor,
			graph: this.graph,
			settings: () => this.settings,
			factsRoot: () => this.factsRoot(),
			openNote: (path: string, line?: number, pane?: PaneType | boolean) => openNote(this.app, path, line, pane),
			openPdfPage: (path: string, page: number, pane?: PaneType | boolean) =>
				this.app.workspace.openLinkText(`${path}#page=${page}`, "", pane),
			storeAsFact: (path: string, selection?: string) => this.storeAsFact(path, selection),
			startBackend: () => void this.startBackend(),
			showStatus: () => this.openStatus(),
			showRelated: () => void this.openSideView(VIEW_TYPE_RELATED),
		};
	}

	/** The facts folder the connected backend reports (settings tab), or null. */
	reportedFactsRoot(): string | null {
		return this.monitor.status?.facts?.root ?? null;
	}

	private factsRoot(): string {
		return effectiveFactsRoot(this.settings, this.monitor.status);
	}

	private addCommands(ctx: EngramContext): void {
		this.addCommand({
			id: "recall",
			name: "Recall",
			// The linter warns about default hotkeys: fine for a BRAT build (PLUGIN.md), users can rebind.
			hotkeys: [{ modifiers: ["Mod", "Shift"], key: "R" }],
			callback: () => new RecallModal(ctx).open(),
		});
		this.addCommand({
			id: "store-as-fact",
			name: "Store as fact",
			checkCallback: (checking) => {
				const file = this.app.workspace.getActiveFile();
				if (!file || file.extension !== "md" || isInside(file.path, this.factsRoot())) return false;
				if (!checking) {
					const view = this.app.workspace.getActiveViewOfType(MarkdownView);
					const selection = view?.file?.path === file.path ? view.editor.getSelection() : "";
					void this.storeAsFact(file.path, selection || undefined);
				}
				return true;
			},
		});
		this.addCommand({ id: "open-fact-panel", name: "Open fact panel", callback: () => void this.openSideView(VIEW_TYPE_FACTS) });
		this.addCommand({ id: "open-related-notes", name: "Open related notes", callback: () => void this.openSideView(VIEW_TYPE_RELATED) });
		this.addCommand({ id: "show-status", name: "Show status", callback: () => this.openStatus() });
		this.addCommand({ id: "reindex-vault", name: "Reindex vault", callback: () => void this.reindexAll() });
		this.addCommand({ id: "start-backend", name: "Start backend", callback: () => void this.startBackend() });
		this.addCommand({
			id: "stop-backend",
			name: "Stop backend started by the plugin",
			checkCallback: (checking) => {
				if (!this.backend.running) return false;
				if (!checking) this.backend.stop();
				return true;
			},
		});
	}

	private restartPolling(): void {
		if (this.pollTimer !== null) window.clearInterval(this.pollTimer);
		this.pollTimer = window.setInterval(() => void this.poll(), this.settings.pollIntervalSeconds * 1000);
		this.registerInterval(this.pollTimer);
	}

	/** Refresh the status, and keep the backend's view of the active note alive. */
	private async poll(): Promise<void> {
		const state = await this.monitor.poll();
		if (!this.unloaded && isOnline(state) && this.settings.reportActiveNote) {
			this.reporter.refresh(currentActiveNote(this));
		}
	}

	/** First contact: use a live backend, or start one when configured to. */
	private async startup(): Promise<void> {
		const state = await this.monitor.poll();
		if (isOnline(state) || !this.settings.autoStart || this.unloaded) return;
		// "Live" means it answers: a stale discovery.json from a crashed backend does not count.
		try {
			await this.client.health();
			return;
		} catch {
			await this.startBackend();
		}
	}

	private async startBackend(): Promise<void> {
		if (this.backend.running) return;
		const basePath = vaultBasePath(this.app);
		if (basePath === null) {
			new Notice("Engram: starting the backend needs the desktop app.");
			return;
		}
		let argv: string[];
		try {
			argv = [...splitCommand(this.settings.backendCommand), ...serveArgs(basePath, this.app.vault.configDir)];
		} catch (err) {
			new Notice(`Engram: ${errorMessage(err)}`);
			return;
		}
		this.monitor.markStarting(START_TIMEOUT_MS);
		try {
			this.backend.start(argv, basePath, () => {
				this.monitor.clearStarting();
				void this.monitor.poll();
			});
		} catch (err) {
			this.monitor.clearStarting();
			new Notice(`Engram: could not start the backend: ${errorMessage(err)}`);
			return;
		}
		const deadline = Date.now() + START_TIMEOUT_MS;
		while (!this.unloaded && this.backend.running && Date.now() < deadline) {
			this.client.invalidate();
			if (isOnline(await this.monitor.poll())) return;
			await new Promise<void>((resolve) => window.setTimeout(resolve, START_POLL_MS));
		}
		this.monitor.clearStarting();
		if (!this.unloaded) void this.monitor.poll();
	}

	private openStatus(): void {
		new StatusModal(
			this.context(),
			() => ({
				state: this.monitor.state,
				discovery: this.client.current,
				process: this.backend.running || this.backend.info.exit ? this.backend.info : null,
				command: this.settings.backendCommand,
				pendingChanges: this.sync.pending,
			}),
			{
				startBackend: () => void this.startBackend(),
				reindexAll: () => void this.reindexAll(),
				refresh: () => {
					this.client.invalidate();
					void this.monitor.poll();
				},
			},
		).open();
	}

	/** Reveal the right-sidebar view of `type`, opening it first if needed. */
	private async openSideView(type: string): Promise<void> {
		const { workspace } = this.app;
		let leaf = workspace.getLeavesOfType(type)[0] ?? null;
		if (!leaf) {
			leaf = workspace.getRightLeaf(false);
			if (!leaf) return;
			await leaf.setViewState({ type, active: true });
		}
		await workspace.revealLeaf(leaf);
	}

	private async reindexAll(): Promise<void> {
		try {
			await this.client.index();
			new Notice("Engram: reindexing the vault.");
			void this.monitor.poll();
		} catch (err) {
			new Notice(`Engram: could not start a reindex: ${errorMessage(err)}`);
		}
	}

	private async storeAsFact(path: string, selection?: string): Promise<Fact | null> {
		try {
			const fact = await this.client.factFromNote(path, selection);
			const message = createFragment((f) => {
				f.appendText(selection ? "Stored the selection as a fact: " : "Stored as a fact: ");
				const a = f.createEl("a", { text: fact.title, href: "#", cls: "engram-link" });
				a.addEventListener("click", (evt) => {
					evt.preventDefault();
					void openNote(this.app, fact.path);
				});
			});
			new Notice(message, 8000);
			return fact;
		} catch (err) {
			new Notice(`Engram: could not store the fact: ${errorMessage(err)}`);
			return null;
		}
	}
}
