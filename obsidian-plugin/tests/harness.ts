/** Builds a shimmed Obsidian app with a vault, a fake backend and the plugin, for lifecycle tests. */
import { vi } from "vitest";
import manifestJson from "../../manifest.json";
import EngramPlugin from "../src/main";
import { FakeEngram } from "./fakeBackend";
import { App, memoryHost, setRequestHost, type PluginManifest } from "./shim/obsidian";

export const PLUGIN_DIR = ".obsidian/plugins/engram";
export const DISCOVERY = `${PLUGIN_DIR}/discovery.json`;
export const BASE = "/vaults/test";

export const NOTES: Record<string, string> = {
	"Alpha.md": "# Alpha\n\nThe alpha launch plan.\nSee [[Beta]] for the budget.\n",
	"Beta.md": "# Beta\n\nBudget notes.\nThe alpha budget is tight.\n",
	"folder/Gamma.md": "# Gamma\n\nLinks to [[Alpha]] and more.\n",
};

export interface Harness {
	app: App;
	plugin: EngramPlugin;
	fake: FakeEngram;
	host: ReturnType<typeof memoryHost>;
	/** Run timers and let promises settle. */
	tick(ms?: number): Promise<void>;
	statusText(): string;
	writeDiscovery(port: number): void;
	/** Unload the plugin and detach the app from the document. */
	dispose(): void;
}

let current: Harness | null = null;

/** Tear down the harness of the previous test (its document listeners are global). */
export function disposeCurrent(): void {
	current?.dispose();
	current = null;
}

export async function createHarness(
	opts: { discovery?: boolean; layoutReady?: boolean; data?: Record<string, unknown>; basePath?: string } = {},
): Promise<Harness> {
	disposeCurrent();
	document.body.empty();
	const base = opts.basePath ?? BASE;
	const host = memoryHost({ ...NOTES }, undefined, base);
	const fake = new FakeEngram(
		{
			list: async () => [...host.files.keys()].filter((p) => p.endsWith(".md") && !p.startsWith(".")),
			read: async (p) => host.files.get(p) ?? "",
			write: async (p, t) => void host.files.set(p, t),
		},
		base,
		() => new Date("2025-03-04T05:06:07Z"),
	);
	// Only the port written in discovery.json answers; any other is "connection refused".
	let livePort = 4100;
	host.handler = (req) => {
		if (new URL(req.url).port !== String(livePort)) return Promise.reject(new Error("net::ERR_CONNECTION_REFUSED"));
		return fake.handle(req);
	};
	const writeDiscovery = (port: number): void => {
		livePort = port;
		host.files.set(DISCOVERY, JSON.stringify(fake.discovery(`http://127.0.0.1:${port}`, 999)));
	};
	if (opts.discovery !== false) writeDiscovery(livePort);
	if (opts.data) host.files.set(`${PLUGIN_DIR}/data.json`, JSON.stringify(opts.data));

	const app = new App(host, document.body);
	setRequestHost(host);
	await app.vault.loadFromHost();
	const manifest = { ...(manifestJson as PluginManifest), dir: PLUGIN_DIR };
	// The shim's App stands in for Obsidian's; the plugin only uses the API surface it implements.
	const plugin = new EngramPlugin(app as never, manifest as never);
	await (plugin as unknown as { loadAsync(): Promise<void> }).loadAsync();
	app.attachHotkeys();
	const tick = async (ms = 0): Promise<void> => {
		await vi.advanceTimersByTimeAsync(ms);
		for (let i = 0; i < 5; i++) await Promise.resolve();
	};
	if (opts.layoutReady !== false) {
		app.workspace.triggerLayoutReady();
		await tick();
	}
	const statusText = (): string => app.dom.statusBar.querySelector(".engram-status-text")?.textContent ?? "";
	const dispose = (): void => {
		plugin.unload();
		app.detachHotkeys();
		setRequestHost(null);
	};
	current = { app, plugin, fake, host, tick, statusText, writeDiscovery, dispose };
	return current;
}

export function key(k: string, mods: { ctrl?: boolean; shift?: boolean; alt?: boolean } = {}): void {
	document.dispatchEvent(new KeyboardEvent("keydown", { key: k, ctrlKey: !!mods.ctrl, shiftKey: !!mods.shift, altKey: !!mods.alt, bubbles: true }));
}

export function type(input: HTMLInputElement, text: string): void {
	input.value = text;
	input.dispatchEvent(new Event("input"));
}
