/** Settings tab. Values are saved on change; the poll interval restarts polling at once. */
import { PluginSettingTab, Setting, type App, type Plugin } from "obsidian";
import { clampPoll, DEFAULT_FACTS_ROOT, DEFAULT_SETTINGS, normalizeFolder, type EngramSettings } from "../core/settings";

export interface SettingsHost {
	settings: EngramSettings;
	saveSettings(): Promise<void>;
	/** The facts folder the connected backend reports, or null when unknown. */
	reportedFactsRoot(): string | null;
}

export class EngramSettingTab extends PluginSettingTab {
	constructor(
		app: App,
		plugin: Plugin,
		private readonly host: SettingsHost,
	) {
		super(app, plugin);
	}

	display(): void {
		const { containerEl } = this;
		containerEl.empty();
		const s = this.host.settings;
		const save = (): void => void this.host.saveSettings();

		new Setting(containerEl)
			.setName("Backend command")
			.setDesc(
				"How to run the Engram backend. The plugin adds: serve --vault <vault path> --config-dir <config folder>. " +
					"Use the full path if Obsidian does not see your shell's PATH.",
			)
			.addText((t) =>
				t
					.setPlaceholder(DEFAULT_SETTINGS.backendCommand)
					.setValue(s.backendCommand)
					.onChange((v) => {
						s.backendCommand = v.trim();
						save();
					}),
			);

		new Setting(containerEl)
			.setName("Start backend automatically")
			.setDesc("When Obsidian starts and no backend is running for this vault, run the backend command. It is stopped when the plugin unloads.")
			.addToggle((t) =>
				t.setValue(s.autoStart).onChange((v) => {
					s.autoStart = v;
					save();
				}),
			);

		new Setting(containerEl)
			.setName("Status poll interval")
			.setDesc("Seconds between status checks.")
			.addText((t) => {
				t.inputEl.type = "number";
				t.setValue(String(s.pollIntervalSeconds)).onChange((v) => {
					const n = Number(v);
					if (!Number.isFinite(n) || v.trim() === "") return;
					s.pollIntervalSeconds = clampPoll(n);
					save();
				});
			});

		new Setting(containerEl)
			.setName("Default search mode")
			.setDesc("Quick is keyword search; deep expands the query and reranks with models. Begin a query with a question mark for the other mode.")
			.addDropdown((d) =>
				d
					.addOption("search", "Quick (keywords)")
					.addOption("query", "Deep (hybrid)")
					.setValue(s.defaultSearchMode)
					.onChange((v) => {
						s.defaultSearchMode = v === "query" ? "query" : "search";
						save();
					}),
			);

		const reported = this.host.reportedFactsRoot();
		new Setting(containerEl)
			.setName("Facts folder")
			.setDesc(
				"Vault folder where the backend keeps facts; notes inside it are not offered for storing as facts. " +
					"Leave empty to use the folder the backend reports" +
					(reported === null ? " (not connected now)." : ` (now: ${reported}).`),
			)
			.addText((t) =>
				t
					.setPlaceholder(reported ?? DEFAULT_FACTS_ROOT)
					.setValue(s.factsRoot)
					.onChange((v) => {
						s.factsRoot = normalizeFolder(v);
						save();
					}),
			);

		new Setting(containerEl)
			.setName("Index changes as you edit")
			.setDesc("Send created, changed, renamed and deleted notes to the backend a moment after each change.")
			.addToggle((t) =>
				t.setValue(s.autoSync).onChange((v) => {
					s.autoSync = v;
					save();
				}),
			);

		new Setting(containerEl)
			.setName("Share the active note with agents")
			.setDesc("Tell the local backend which note, selection and line you are on, so agents can use it as context.")
			.addToggle((t) =>
				t.setValue(s.reportActiveNote).onChange((v) => {
					s.reportActiveNote = v;
					save();
				}),
			);
	}
}
