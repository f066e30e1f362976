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

interface SpawnBridge {
	__hostSpawn(cmd: string, args: string[], cwd: string | null): Promise<number>;
	__hostKill(id: number, signal: string): Promise<boolean>;
	__hostRealpath(path: string): Promise<string>;
}

type Listener = (...args: unknown[]) => void;

/**
 * What `child_process.spawn` returns, for the plugin's "Start backend": the process really runs
 * on the Node side of the harness (as it would in Electron); its stderr, errors and exit come
 * back through `__childEvent`. Events that arrive before the id is known are queued.
 */
class BridgedChild {
	private readonly listeners = new Map<string, Listener[]>();
	private readonly stderrListeners: Listener[] = [];
	private id: number | null = null;
	private pendingKill: string | null = null;
	readonly stderr = {
		setEncoding: (): void => undefined,
		on: (event: string, fn: Listener): unknown => {
			if (event === "data") this.stderrListeners.push(fn);
			return this.stderr;
		},
	};

	constructor(cmd: string, args: string[], cwd: string | null) {
		void (window as unknown as SpawnBridge).__hostSpawn(cmd, args, cwd).then((id) => {
			this.id = id;
			children.set(id, this);
			for (const e of early.get(id) ?? []) this.deliver(e);
			early.delete(id);
			if (this.pendingKill) void (window as unknown as SpawnBridge).__hostKill(id, this.pendingKill);
		});
	}

	on(event: string, fn: Listener): this {
		const list = this.listeners.get(event) ?? [];
		list.push(fn);
		this.listeners.set(event, list);
		return this;
	}

	kill(signal = "SIGTERM"): boolean {
		if (this.id === null) this.pendingKill = signal;
		else void (window as unknown as SpawnBridge).__hostKill(this.id, signal);
		return true;
	}

	deliver(e: ChildEvent): void {
		if (e.type === "stderr") {
			for (const fn of this.stderrListeners) fn(e.a);
		} else if (e.type === "error") {
			const info = e.a as { code?: string; message?: string };
			const err = Object.assign(new Error(info.message ?? "spawn failed"), { code: info.code });
			for (const fn of this.listeners.get("error") ?? []) fn(err);
		} else {
			for (const fn of this.listeners.get("exit") ?? []) fn(e.a, e.b);
		}
	}
}

interface ChildEvent {
	type: "stderr" | "error" | "exit";
	a: unknown;
	b: unknown;
}

const children = new Map<number, BridgedChild>();
const early = new Map<number, ChildEvent[]>();

function childEvent(id: number, type: ChildEvent["type"], a: unknown, b: unknown): void {
	const child = children.get(id);
	if (child) child.deliver({ type, a, b });
	else early.set(id, [...(early.get(id) ?? []), { type, a, b }]);
}

/** Node modules the bundle asks for: `child_process` runs processes on the harness's side. */
const childProcess = {
	spawn(cmd: string, args: string[], opts: { cwd?: string } = {}): BridgedChild {
		return new BridgedChild(cmd, args, opts.cwd ?? null);
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
		if (name === "fs") return { promises: { realpath: (p: string) => (window as unknown as SpawnBridge).__hostRealpath(p) } };
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

Object.assign(window, { engramE2E: { boot }, __childEvent: childEvent });
