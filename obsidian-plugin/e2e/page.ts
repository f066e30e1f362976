/**
 * Browser side of the e2e harness: the Obsidian shim bundled for Chromium, plus `boot`, which
 * loads the production main.js the way Obsidian does (CommonJS evaluated with a `require` that
 * returns the API). Files and HTTP go through functions the Node side exposes, the way
 * Obsidian's adapter and requestUrl reach the disk and the network outside the page's sandbox.
 */
import * as obsidian from "../tests/shim/obsidian";
import type { HostRequest, HostResponse, ShimHost } from "../tests/shim/obsidian";

interface Bridge {
	__hostExists(path: string): Promise<boolean>;
	__hostRead(path: string): Promise<string>;
	__hostWrite(path: string, data: string): Promise<void>;
	__hostRemove(path: string): Promise<void>;
	__hostRename(from: string, to: string): Promise<void>;
	__hostListNotes(): Promise<string[]>;
	__hostRequest(req: HostRequest): Promise<HostResponse | { error: string }>;
}

interface BootOptions {
	basePath: string;
	mainJs: string;
	manifest: obsidian.PluginManifest;
}

type LoadedPlugin = obsidian.Plugin & { loadAsync(): Promise<void>; settings: Record<string, unknown> };

const bridge = window as unknown as Bridge;

function makeHost(basePath: string): ShimHost {
	return {
		basePath,
		exists: (p) => bridge.__hostExists(p),
		read: (p) => bridge.__hostRead(p),
		write: (p, d) => bridge.__hostWrite(p, d),
		remove: (p) => bridge.__hostRemove(p),
		rename: (a, b) => bridge.__hostRename(a, b),
		listNotes: () => bridge.__hostListNotes(),
		request: async (req) => {
			const res = await bridge.__hostRequest({ ...req, body: typeof req.body === "string" ? req.body : undefined });
			if ("error" in res) throw new Error(res.error);
			return res;
		},
	};
}

/** Node modules the bundle asks for. Spawning is not part of this harness: it starts the backend itself. */
const childProcess = {
	spawn(): never {
		throw new Error("child_process is not available in the browser harness");
	},
};

async function boot(opts: BootOptions): Promise<void> {
	const host = makeHost(opts.basePath);
	const app = new obsidian.App(host, document.body);
	obsidian.setRequestHost(host);
	await app.vault.loadFromHost();
	const module = { exports: {} as Record<string, unknown> };
	const require = (name: string): unknown => {
		if (name === "obsidian") return obsidian;
		if (name === "child_process") return childProcess;
		throw new Error(`Cannot find module '${name}'`);
	};
	// Obsidian evaluates a plugin's main.js as a CommonJS function body, like this.
	// eslint-disable-next-line @typescript-eslint/no-implied-eval
	new Function("require", "module", "exports", opts.mainJs)(require, module, module.exports);
	const PluginClass = module.exports.default as new (app: obsidian.App, m: obsidian.PluginManifest) => LoadedPlugin;
	const plugin = new PluginClass(app, opts.manifest);
	await plugin.loadAsync();
	app.attachHotkeys();
	app.workspace.triggerLayoutReady();
	app.vault.watchHost(500);
	Object.assign(window, { engramApp: app, engramPlugin: plugin, engramShim: obsidian });
}

Object.assign(window, { engramE2E: { boot } });
