/** Shim: the App (vault, workspace, commands, hotkeys, modals) and Plugin. */
import { Component, matchesModifiers, type Modifier } from "./core";
import type { ShimHost } from "./host";
import type { Modal, PluginSettingTab } from "./ui";
import { MetadataCache } from "./metadata";
import { TFile, Vault } from "./vault";
import { MarkdownView, Workspace, type ViewCreator } from "./workspace";

export interface Hotkey {
	modifiers: Modifier[];
	key: string;
}

export interface Command {
	id: string;
	name: string;
	hotkeys?: Hotkey[];
	callback?: () => unknown;
	checkCallback?: (checking: boolean) => boolean | void;
	editorCallback?: (editor: unknown, view: MarkdownView) => unknown;
	editorCheckCallback?: (checking: boolean, editor: unknown, view: MarkdownView) => boolean | void;
}

export class Commands {
	readonly commands = new Map<string, Command>();

	add(cmd: Command): void {
		this.commands.set(cmd.id, cmd);
	}
	remove(id: string): void {
		this.commands.delete(id);
	}
	/** Run a command like the palette would; false when it is unavailable. */
	executeCommandById(id: string, app: App): boolean {
		const cmd = this.commands.get(id);
		if (!cmd) return false;
		const view = app.workspace.getActiveViewOfType(MarkdownView);
		if (cmd.checkCallback) {
			if (!cmd.checkCallback(true)) return false;
			cmd.checkCallback(false);
			return true;
		}
		if (cmd.editorCheckCallback) {
			if (!view || !cmd.editorCheckCallback(true, view.editor, view)) return false;
			cmd.editorCheckCallback(false, view.editor, view);
			return true;
		}
		if (cmd.editorCallback) {
			if (!view) return false;
			cmd.editorCallback(view.editor, view);
			return true;
		}
		cmd.callback?.();
		return cmd.callback !== undefined;
	}
}

export interface AppDom {
	root: HTMLElement;
	main: HTMLElement;
	right: HTMLElement;
	statusBar: HTMLElement;
}

/** Build the app's skeleton DOM: main area, right sidebar, status bar. */
function buildDom(parent: HTMLElement): AppDom {
	const root = parent.createDiv({ cls: "app-container" });
	const ws = root.createDiv({ cls: "workspace" });
	const main = ws.createDiv({ cls: "workspace-split mod-root" });
	const right = ws.createDiv({ cls: "workspace-split mod-right-split" });
	const statusBar = root.createDiv({ cls: "status-bar" });
	return { root, main, right, statusBar };
}

export class App {
	readonly vault: Vault;
	readonly workspace: Workspace;
	readonly commands = new Commands();
	readonly viewRegistry = new Map<string, ViewCreator>();
	readonly settingTabs: PluginSettingTab[] = [];
	readonly dom: AppDom;
	readonly fileManager = {
		generateMarkdownLink: (file: TFile, _source: string): string => `[[${file.basename}]]`,
		renameFile: (file: TFile, newPath: string) => this.vault.rename(file, newPath),
	};
	readonly metadataCache: MetadataCache;
	/** User-assigned hotkeys by full command id (Settings → Hotkeys), replacing the defaults. */
	readonly hotkeyOverrides = new Map<string, Hotkey[]>();
	private modals: Modal[] = [];
	private keyListener: ((evt: KeyboardEvent) => void) | null = null;

	constructor(readonly host: ShimHost, parent: HTMLElement = document.body) {
		this.vault = new Vault(host);
		this.metadataCache = new MetadataCache(this.vault);
		this.dom = buildDom(parent);
		this.workspace = new Workspace(this, this.dom.main, this.dom.right);
	}

	pushModal(m: Modal): void {
		this.modals.push(m);
	}
	popModal(m: Modal): void {
		this.modals = this.modals.filter((x) => x !== m);
	}
	get openModals(): Modal[] {
		return [...this.modals];
	}

	/** Shim-only: route keydown to the top modal, else to command hotkeys (Mod = Ctrl here). */
	attachHotkeys(doc: Document = document): void {
		if (this.keyListener) return;
		this.keyListener = (evt: KeyboardEvent) => {
			const top = this.modals[this.modals.length - 1];
			if (top) {
				top.handleKey(evt);
				return;
			}
			for (const cmd of this.commands.commands.values()) {
				for (const hk of this.hotkeyOverrides.get(cmd.id) ?? cmd.hotkeys ?? []) {
					if (hk.key.toLowerCase() === evt.key.toLowerCase() && matchesModifiers(evt, hk.modifiers)) {
						evt.preventDefault();
						this.commands.executeCommandById(cmd.id, this);
						return;
					}
				}
			}
		};
		doc.addEventListener("keydown", this.keyListener);
	}

	detachHotkeys(doc: Document = document): void {
		if (this.keyListener) doc.removeEventListener("keydown", this.keyListener);
		this.keyListener = null;
	}
}

export interface PluginManifest {
	id: string;
	name: string;
	version: string;
	minAppVersion: string;
	description: string;
	author: string;
	isDesktopOnly?: boolean;
	dir?: string;
}

export class Plugin extends Component {
	constructor(
		public app: App,
		public manifest: PluginManifest,
	) {
		super();
	}

	addCommand(cmd: Command): Command {
		const full = { ...cmd, id: `${this.manifest.id}:${cmd.id}` };
		this.app.commands.add(full);
		this.register(() => this.app.commands.remove(full.id));
		return full;
	}

	addStatusBarItem(): HTMLElement {
		const el = this.app.dom.statusBar.createDiv({ cls: `status-bar-item plugin-${this.manifest.id}` });
		this.register(() => el.remove());
		return el;
	}

	addRibbonIcon(icon: string, title: string, cb: (evt: MouseEvent) => unknown): HTMLElement {
		const el = createDiv({ cls: "side-dock-ribbon-action", attr: { "aria-label": title, "data-icon": icon } });
		el.addEventListener("click", cb);
		this.register(() => el.remove());
		return el;
	}

	addSettingTab(tab: PluginSettingTab): void {
		this.app.settingTabs.push(tab);
		this.register(() => this.app.settingTabs.splice(this.app.settingTabs.indexOf(tab), 1));
	}

	registerView(type: string, creator: ViewCreator): void {
		this.app.viewRegistry.set(type, creator);
		this.register(() => {
			this.app.viewRegistry.delete(type);
			// Obsidian detaches a plugin's leaves when it unloads.
			for (const leaf of this.app.workspace.getLeavesOfType(type)) leaf.detach();
		});
	}

	async loadData(): Promise<unknown> {
		const path = `${this.manifest.dir}/data.json`;
		if (!(await this.app.host.exists(path))) return null;
		return JSON.parse(await this.app.host.read(path)) as unknown;
	}

	async saveData(data: unknown): Promise<void> {
		await this.app.host.write(`${this.manifest.dir}/data.json`, JSON.stringify(data, null, 2));
	}
}
