// Node-side pieces of the e2e harness: the real backend process, a step runner, small helpers.
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { delimiter, dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import esbuild from "esbuild";
import { chromium } from "playwright-core";

const here = dirname(fileURLToPath(import.meta.url));

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export function assert(cond, message) {
	if (!cond) throw new Error(message);
}

/** Quotes group words, backslashes stay literal (same rule as the plugin's setting). */
export function splitCommand(cmd) {
	return [...cmd.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3]);
}

/** PYTHONPATH with relative entries made absolute (the plugin spawns with the vault as cwd). */
export function absolutePythonPath(value) {
	if (!value) return value;
	return value
		.split(delimiter)
		.map((p) => (p ? resolve(p) : p))
		.join(delimiter);
}

export function walkNotes(vault, dir = vault) {
	return readdirSync(dir).flatMap((name) => {
		if (name.startsWith(".")) return [];
		const p = join(dir, name);
		return statSync(p).isDirectory() ? walkNotes(vault, p) : name.endsWith(".md") ? [relative(vault, p).split("\\").join("/")] : [];
	});
}

/** `key: value` lines of a note's YAML frontmatter (flat keys only; enough for assertions). */
export function frontmatter(text) {
	const m = /^---\n([\s\S]*?)\n---\n/.exec(text);
	if (!m) return {};
	const out = {};
	for (const line of m[1].split("\n")) {
		const kv = /^([A-Za-z_][\w-]*):\s*(.*)$/.exec(line);
		if (kv) out[kv[1]] = kv[2].replace(/^"(.*)"$/, "$1");
	}
	return out;
}

/** Wait for a child process to end; resolves at once if it already has. */
export function exited(child) {
	if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
	return new Promise((r) => child.once("exit", r));
}

/** The real `engram serve` for the test vault; `start` resolves once discovery.json is live. */
export class Backend {
	constructor(command, vault, env, startTimeoutMs) {
		this.argv = [...splitCommand(command), "serve", "--vault", vault, "--config-dir", ".obsidian"];
		this.discovery = join(vault, ".obsidian", "plugins", "engram", "discovery.json");
		this.env = env;
		this.startTimeoutMs = startTimeoutMs;
		this.output = "";
		this.child = null;
	}

	async start() {
		const [cmd, ...args] = this.argv;
		const child = spawn(cmd, args, { env: this.env, stdio: ["ignore", "pipe", "pipe"] });
		this.child = child;
		const collect = (c) => (this.output = (this.output + c.toString()).slice(-8000));
		child.stdout.on("data", collect);
		child.stderr.on("data", collect);
		let failed = null;
		child.on("error", (err) => (failed = err.message));
		return this.waitLive(child, () => failed);
	}

	/** Poll discovery.json until its address answers /v1/health (a stale file's port does not). */
	async waitLive(child, failure = () => null) {
		const deadline = Date.now() + this.startTimeoutMs;
		while (Date.now() < deadline) {
			const why = failure() ?? (child.exitCode !== null || child.signalCode !== null ? `exit ${child.exitCode ?? child.signalCode}` : null);
			if (why !== null) throw new Error(`backend ended (${why}) before writing discovery.json:\n${this.output}`);
			if (existsSync(this.discovery)) {
				try {
					const d = JSON.parse(readFileSync(this.discovery, "utf8"));
					const res = await fetch(`${d.url}/v1/health`);
					if (res.ok) return d;
				} catch {
					// half-written file, or not listening yet
				}
			}
			await sleep(100);
		}
		throw new Error(`no live discovery.json after ${this.startTimeoutMs} ms:\n${this.output}`);
	}

	/** An authenticated GET against the live backend (to check what the plugin caused). */
	async get(path) {
		const d = JSON.parse(readFileSync(this.discovery, "utf8"));
		const res = await fetch(d.url + path, { headers: { Authorization: `Bearer ${d.token}` } });
		return { status: res.status, body: await res.json() };
	}

	/** An authenticated POST of `body` as JSON (to set up what a test needs). */
	async post(path, body) {
		const d = JSON.parse(readFileSync(this.discovery, "utf8"));
		const res = await fetch(d.url + path, {
			method: "POST",
			headers: { Authorization: `Bearer ${d.token}`, "Content-Type": "application/json" },
			body: JSON.stringify(body),
		});
		return { status: res.status, body: await res.json() };
	}

	async kill(signal = "SIGTERM") {
		const child = this.child;
		if (!child || child.exitCode !== null || child.signalCode !== null) return;
		const done = exited(child);
		child.kill(signal);
		const t = setTimeout(() => child.kill("SIGKILL"), 10_000);
		await done;
		clearTimeout(t);
	}
}

/** A tiny step runner: a failed step fails the run and skips the steps after it. */
export class Steps {
	constructor() {
		this.passed = 0;
		this.failed = 0;
		this.skipped = 0;
		this.broken = false;
	}

	async run(name, fn) {
		if (this.broken) {
			this.skipped++;
			process.stdout.write(`  - ${name} (skipped)\n`);
			return;
		}
		const t0 = Date.now();
		try {
			await fn();
			this.passed++;
			process.stdout.write(`  ✓ ${name} (${Date.now() - t0} ms)\n`);
		} catch (err) {
			this.failed++;
			this.broken = true;
			process.stdout.write(`  ✗ ${name}\n    ${String(err?.stack ?? err).split("\n").slice(0, 8).join("\n    ")}\n`);
		}
	}
}

/** Bundle the browser side (the shim and `boot`) and the contract checker into `buildDir`. */
export async function bundlePage(buildDir) {
	mkdirSync(buildDir, { recursive: true });
	await esbuild.build({
		entryPoints: [join(here, "page.ts")],
		bundle: true,
		format: "iife",
		platform: "browser",
		target: "es2020",
		outfile: join(buildDir, "page.js"),
		logLevel: "warning",
	});
	// The unit tests' check of requests and replies against the backend's OpenAPI document, run
	// here on what the real backend answered.
	await esbuild.build({
		entryPoints: [join(here, "..", "tests", "contract.ts")],
		bundle: true,
		format: "esm",
		platform: "node",
		packages: "external",
		outfile: join(buildDir, "contract.mjs"),
		logLevel: "warning",
	});
}

/**
 * Headless Chromium with the plugin installed in `pluginDir` loaded the way Obsidian loads it:
 * files, HTTP (requestUrl) and child processes go through functions the Node side exposes.
 * Every request lands in `requests`, every process the plugin starts in `spawned`, console
 * output in `consoleLines`.
 */
export async function bootApp({ tmp, vault, pluginDir, env, chromiumPath, buildDir, requests, spawned, consoleLines, viewport }) {
	const context = await chromium.launchPersistentContext(join(tmp, "profile"), {
		executablePath: chromiumPath,
		headless: true,
		viewport: viewport ?? { width: 1100, height: 640 },
		args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
	});
	const page = context.pages()[0] ?? (await context.newPage());
	page.on("console", (m) => consoleLines.push(`${m.type()}: ${m.text()}`));
	page.on("pageerror", (e) => consoleLines.push(`pageerror: ${e.message}`));
	const inVault = (p) => {
		const full = resolve(vault, p);
		if (full !== vault && !full.startsWith(vault + "/")) throw new Error(`path escapes the vault: ${p}`);
		return full;
	};
	await page.exposeFunction("__hostExists", (p) => existsSync(inVault(p)));
	await page.exposeFunction("__hostRead", (p) => readFileSync(inVault(p), "utf8"));
	await page.exposeFunction("__hostWrite", (p, d) => {
		mkdirSync(dirname(inVault(p)), { recursive: true });
		writeFileSync(inVault(p), d);
	});
	await page.exposeFunction("__hostRemove", (p) => rmSync(inVault(p), { recursive: true, force: true }));
	await page.exposeFunction("__hostRename", (a, b) => {
		mkdirSync(dirname(inVault(b)), { recursive: true });
		renameSync(inVault(a), inVault(b));
	});
	await page.exposeFunction("__hostListNotes", () => walkNotes(vault));
	// requestUrl runs outside the page in Obsidian (no CORS): here it runs in Node.
	await page.exposeFunction("__hostRequest", async (req) => {
		const entry = { method: req.method ?? "GET", url: req.url, body: req.body ?? null, status: 0 };
		requests.push(entry);
		try {
			const res = await fetch(req.url, { method: entry.method, headers: req.headers, body: req.body ?? undefined });
			entry.status = res.status;
			entry.text = await res.text();
			return { status: res.status, text: entry.text, headers: Object.fromEntries(res.headers) };
		} catch (err) {
			entry.status = -1;
			return { error: `net::ERR_CONNECTION_REFUSED (${err.cause?.code ?? err.message})` };
		}
	});
	// child_process.spawn for "Start backend": Electron runs it in Node, so does the harness.
	await page.exposeFunction("__hostSpawn", (cmd, args, cwd) => {
		const child = spawn(cmd, args, { cwd: cwd ?? undefined, env, stdio: ["ignore", "ignore", "pipe"] });
		const id = spawned.length;
		spawned.push({ cmd, args, cwd, child });
		const send = (type, a = null, b = null) =>
			page.evaluate(([i, t, x, y]) => window.__childEvent(i, t, x, y), [id, type, a, b]).catch(() => undefined);
		child.stderr.setEncoding("utf8");
		child.stderr.on("data", (chunk) => void send("stderr", chunk));
		child.on("error", (err) => void send("error", { code: err.code, message: err.message }));
		child.on("exit", (code, signal) => void send("exit", code, signal));
		return id;
	});
	await page.exposeFunction("__hostKill", (id, signal) => spawned[id]?.child.kill(signal) ?? false);
	await page.exposeFunction("__hostRealpath", (p) => realpathSync(p));
	const css = readFileSync(join(here, "theme.css"), "utf8") + "\n" + readFileSync(join(pluginDir, "styles.css"), "utf8");
	await page.setContent(`<!doctype html><html><head><meta charset="utf-8"><style>${css}</style></head><body class="theme-dark"></body></html>`);
	await page.addScriptTag({ content: readFileSync(join(buildDir, "page.js"), "utf8") });
	const manifest = { ...JSON.parse(readFileSync(join(pluginDir, "manifest.json"), "utf8")), dir: relative(vault, pluginDir).split("\\").join("/") };
	await page.evaluate((opts) => window.engramE2E.boot(opts), {
		basePath: vault,
		mainJs: readFileSync(join(pluginDir, "main.js"), "utf8"),
		manifest,
	});
	return { context, page };
}
