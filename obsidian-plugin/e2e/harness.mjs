// Node-side pieces of the e2e harness: the real backend process, a step runner, small helpers.
import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { delimiter, join, relative, resolve } from "node:path";

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
