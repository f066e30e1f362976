// End-to-end test: the production main.js in headless Chromium, against a backend process on
// loopback, driven with the keyboard.
//
//   node e2e/run.mjs [--backend "<command>"] [--keep]
//
// The backend command (also ENGRAM_E2E_BACKEND) gets `serve --vault <tmp vault> --config-dir
// .obsidian` appended, exactly what the plugin's "Start backend" runs. Default: the temporary
// stand-in (e2e/standin.ts); the final e2e uses the real `engram`. The harness starts it, waits
// for <vault>/.obsidian/plugins/engram/discovery.json, then loads the plugin as Obsidian does.
import { spawn } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import esbuild from "esbuild";
import { chromium } from "playwright-core";

const here = dirname(fileURLToPath(import.meta.url));
const pluginRoot = resolve(here, "..");
const repoRoot = resolve(pluginRoot, "..");
const buildDir = join(pluginRoot, ".e2e-build");

const argv = process.argv.slice(2);
const flag = (name) => {
	const i = argv.indexOf(name);
	return i >= 0 ? argv[i + 1] : undefined;
};
const keep = argv.includes("--keep");
const startTimeoutMs = Number(process.env.ENGRAM_E2E_START_TIMEOUT_MS ?? 120_000);
const chromiumPath = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/** Quotes group words, backslashes stay literal (same rule as the plugin's setting). */
function splitCommand(cmd) {
	return [...cmd.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3]);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function bundle() {
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
	await esbuild.build({
		entryPoints: [join(here, "standin.ts")],
		bundle: true,
		format: "esm",
		platform: "node",
		target: "node20",
		outfile: join(buildDir, "standin.mjs"),
		logLevel: "warning",
	});
}

function walkNotes(vault, dir = vault) {
	return readdirSync(dir).flatMap((name) => {
		if (name.startsWith(".")) return [];
		const p = join(dir, name);
		return statSync(p).isDirectory() ? walkNotes(vault, p) : name.endsWith(".md") ? [relative(vault, p).split("\\").join("/")] : [];
	});
}

/** A backend process; `start` resolves once its discovery.json exists and /v1/health answers. */
class Backend {
	constructor(command, vault, env) {
		this.argv = [...splitCommand(command), "serve", "--vault", vault, "--config-dir", ".obsidian"];
		this.discovery = join(vault, ".obsidian", "plugins", "engram", "discovery.json");
		this.env = env;
		this.output = "";
		this.child = null;
	}

	async start() {
		const [cmd, ...args] = this.argv;
		const child = spawn(cmd, args, { env: this.env, stdio: ["ignore", "pipe", "pipe"] });
		this.child = child;
		let exited = null;
		child.on("exit", (code, signal) => (exited = signal ?? code));
		child.on("error", (err) => (exited = err.message));
		const collect = (c) => (this.output = (this.output + c.toString()).slice(-8000));
		child.stdout.on("data", collect);
		child.stderr.on("data", collect);
		const deadline = Date.now() + startTimeoutMs;
		while (Date.now() < deadline) {
			if (exited !== null) throw new Error(`backend exited (${exited}) before writing discovery.json:\n${this.output}`);
			if (existsSync(this.discovery)) {
				try {
					const d = JSON.parse(readFileSync(this.discovery, "utf8"));
					const res = await fetch(`${d.url}/v1/health`);
					if (res.ok) return d;
				} catch {
					// half-written file or not listening yet
				}
			}
			await sleep(100);
		}
		throw new Error(`no live discovery.json after ${startTimeoutMs} ms:\n${this.output}`);
	}

	async stop() {
		const child = this.child;
		if (!child || child.exitCode !== null || child.signalCode !== null) return;
		const done = new Promise((r) => child.once("exit", r));
		child.kill("SIGTERM");
		const t = setTimeout(() => child.kill("SIGKILL"), 10_000);
		await done;
		clearTimeout(t);
	}
}

/** A tiny step runner: a failed step fails the run and skips the steps after it. */
class Steps {
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
			process.stdout.write(`  ✗ ${name}\n    ${String(err?.stack ?? err).split("\n").slice(0, 6).join("\n    ")}\n`);
		}
	}
}

function assert(cond, message) {
	if (!cond) throw new Error(message);
}

async function main() {
	const t0 = Date.now();
	await bundle();
	const mainJsPath = join(pluginRoot, "main.js");
	assert(existsSync(mainJsPath), "main.js is missing: run `npm run build` first");

	const tmp = mkdtempSync(join(tmpdir(), "engram-e2e-"));
	const shots = mkdtempSync(join(tmpdir(), "engram-e2e-shots-"));
	const vault = join(tmp, "vault");
	cpSync(join(here, "fixtures", "vault"), vault, { recursive: true });
	// Install the plugin as BRAT would: the three release files in <configDir>/plugins/engram/.
	const pluginDir = join(vault, ".obsidian", "plugins", "engram");
	mkdirSync(pluginDir, { recursive: true });
	cpSync(mainJsPath, join(pluginDir, "main.js"));
	cpSync(join(repoRoot, "manifest.json"), join(pluginDir, "manifest.json"));
	cpSync(join(pluginRoot, "styles.css"), join(pluginDir, "styles.css"));

	const command = flag("--backend") ?? process.env.ENGRAM_E2E_BACKEND ?? `"${process.execPath}" "${join(buildDir, "standin.mjs")}"`;
	const env = {
		...process.env,
		XDG_DATA_HOME: join(tmp, "data"),
		XDG_CONFIG_HOME: join(tmp, "config"),
		XDG_CACHE_HOME: join(tmp, "cache"),
	};
	process.stdout.write(`e2e: backend command: ${command}\ne2e: vault: ${vault}\n`);
	const backend = new Backend(command, vault, env);

	const steps = new Steps();
	const requests = []; // every request the plugin made: {method, url, body, status}
	const consoleLines = [];
	let context = null;
	let page = null;

	const shot = async (name, el) => {
		const file = join(shots, `${name}.png`);
		if (el) await page.locator(el).first().screenshot({ path: file });
		else await page.screenshot({ path: file });
	};
	const statusText = () => page.locator(".engram-status-text").textContent();
	const waitStatus = async (pattern, timeout = 60_000) => {
		await page.waitForFunction(
			(src) => new RegExp(src).test(document.querySelector(".engram-status-text")?.textContent ?? ""),
			pattern.source,
			{ timeout },
		);
	};
	const since = (mark, pred) => requests.slice(mark).filter(pred);
	const openRecall = async (query) => {
		await page.keyboard.press("Control+Shift+R");
		await page.locator(".prompt-input").waitFor();
		if (query) await page.keyboard.type(query, { delay: 30 });
	};
	const cursorLine = () => page.locator(".workspace-leaf:not(.is-hidden) .markdown-source-view").getAttribute("data-cursor-line");
	const openPath = () => page.locator(".workspace-leaf:not(.is-hidden) .markdown-source-view").getAttribute("data-path");

	try {
		const tStart = Date.now();
		await steps.run("backend starts and writes discovery.json", async () => {
			const d = await backend.start();
			assert(d.url.startsWith("http://127.0.0.1:"), `discovery url ${d.url}`);
			process.stdout.write(`    backend up in ${Date.now() - tStart} ms at ${d.url}\n`);
		});

		await steps.run("Chromium loads the production main.js like Obsidian", async () => {
			context = await chromium.launchPersistentContext(join(tmp, "profile"), {
				executablePath: chromiumPath,
				headless: true,
				viewport: { width: 1280, height: 800 },
				args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
			});
			page = context.pages()[0] ?? (await context.newPage());
			page.on("console", (m) => consoleLines.push(`${m.type()}: ${m.text()}`));
			page.on("pageerror", (e) => consoleLines.push(`pageerror: ${e.message}`));
			const inVault = (p) => {
				const full = resolve(vault, p);
				if (!full.startsWith(vault)) throw new Error(`path escapes the vault: ${p}`);
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
			const css = readFileSync(join(here, "theme.css"), "utf8") + "\n" + readFileSync(join(pluginDir, "styles.css"), "utf8");
			await page.setContent(`<!doctype html><html><head><meta charset="utf-8"><style>${css}</style></head><body class="theme-dark"></body></html>`);
			await page.addScriptTag({ content: readFileSync(join(buildDir, "page.js"), "utf8") });
			const manifest = { ...JSON.parse(readFileSync(join(pluginDir, "manifest.json"), "utf8")), dir: ".obsidian/plugins/engram" };
			await page.evaluate((opts) => window.engramE2E.boot(opts), {
				basePath: vault,
				mainJs: readFileSync(join(pluginDir, "main.js"), "utf8"),
				manifest,
			});
		});

		await steps.run("status bar shows connected", async () => {
			await waitStatus(/^Engram( · .*)?$/);
			await shot("01-status-bar", ".status-bar");
		});

		await steps.run("Ctrl+Shift+R opens recall; typing searches with few requests", async () => {
			// Open a note first so Shift+Enter has an editor later.
			await page.evaluate(() => window.engramApp.workspace.openLinkText("Journal/2025-01-02", ""));
			const mark = requests.length;
			await openRecall("lighthouse");
			await page.locator(".suggestion-item").first().waitFor({ timeout: 30_000 });
			await sleep(400);
			const queries = since(mark, (r) => r.url.endsWith("/v1/query"));
			assert(queries.length >= 1 && queries.length < "lighthouse".length, `${queries.length} query requests for 10 keystrokes`);
			const last = JSON.parse(queries[queries.length - 1].body);
			assert(last.q === "lighthouse" && last.mode === "search", `last query ${JSON.stringify(last)}`);
			const marks = await page.locator(".suggestion-item mark").allTextContents();
			assert(marks.some((m) => m.toLowerCase() === "lighthouse"), `highlights: ${JSON.stringify(marks)}`);
			await shot("02-recall");
		});

		await steps.run("Enter opens the note at the matching line", async () => {
			const reply = JSON.parse([...requests].reverse().find((r) => r.url.endsWith("/v1/query")).text);
			const first = reply.results[0];
			await page.keyboard.press("Enter");
			await page.waitForFunction((p) => document.querySelector(".workspace-leaf:not(.is-hidden) .markdown-source-view")?.getAttribute("data-path") === p, first.path);
			assert(Number(await cursorLine()) === Math.max(1, first.line) - 1, `cursor line ${await cursorLine()} for result line ${first.line}`);
			assert((await page.locator(".prompt").count()) === 0, "modal still open");
		});

		await steps.run("Shift+Enter inserts a link, and the edit is sent for indexing", async () => {
			await page.evaluate(() => window.engramApp.workspace.openLinkText("Journal/2025-01-02", ""));
			await page.evaluate(() => {
				const view = window.engramApp.workspace.getActiveViewOfType(window.engramShim.MarkdownView);
				view.editor.setCursor({ line: 3, ch: 0 });
			});
			const mark = requests.length;
			await openRecall("budget");
			await page.locator(".suggestion-item").first().waitFor({ timeout: 30_000 });
			await page.keyboard.press("Shift+Enter");
			const text = readFileSync(join(vault, "Journal", "2025-01-02.md"), "utf8");
			assert(/\[\[[^\]]+\]\]\s*$/.test(text.split("\n")[3] ?? ""), `line 4 is ${JSON.stringify(text.split("\n")[3])}`);
			const deadline = Date.now() + 10_000;
			while (Date.now() < deadline && since(mark, (r) => r.url.endsWith("/v1/index")).length === 0) await sleep(100);
			const index = since(mark, (r) => r.url.endsWith("/v1/index"));
			assert(index.length === 1, `${index.length} index requests`);
			assert(JSON.parse(index[0].body).paths?.includes("Journal/2025-01-02.md"), `index body ${index[0].body}`);
		});

		await steps.run("a ? prefix runs a deep query", async () => {
			const mark = requests.length;
			await openRecall("?lens");
			await page.waitForFunction(() => document.querySelector(".engram-recall-bar")?.textContent?.includes("Deep search"), null, { timeout: 60_000 });
			const q = since(mark, (r) => r.url.endsWith("/v1/query")).map((r) => JSON.parse(r.body));
			assert(q.length >= 1 && q[q.length - 1].mode === "query" && q[q.length - 1].q === "lens", JSON.stringify(q));
			await shot("03-deep-search");
			await page.keyboard.press("Escape");
		});

		await steps.run("Store as fact (user hotkey) from a selection shows a notice with a link", async () => {
			await page.evaluate(() => {
				const app = window.engramApp;
				app.hotkeyOverrides.set("engram:store-as-fact", [{ modifiers: ["Mod", "Shift"], key: "F" }]);
				app.hotkeyOverrides.set("engram:open-fact-panel", [{ modifiers: ["Mod", "Shift"], key: "E" }]);
			});
			await page.evaluate(() => window.engramApp.workspace.openLinkText("Coastal budget", ""));
			await page.evaluate(() => {
				const view = window.engramApp.workspace.getActiveViewOfType(window.engramShim.MarkdownView);
				view.editor.setSelection({ line: 4, ch: 0 }, { line: 4, ch: 42 });
			});
			await page.keyboard.press("Control+Shift+F");
			const notice = page.locator(".notice", { hasText: "Stored the selection as a fact" });
			await notice.waitFor({ timeout: 30_000 });
			await shot("04-store-fact-notice", ".notice-container");
			const reply = JSON.parse([...requests].reverse().find((r) => r.url.endsWith("/v1/facts/from-note")).text);
			const selection = JSON.parse([...requests].reverse().find((r) => r.url.endsWith("/v1/facts/from-note")).body).selection;
			assert(selection === "The budget for repairs is tight this year.", `selection ${JSON.stringify(selection)}`);
			await page.waitForFunction((p) => !!window.engramApp.vault.getFileByPath(p), reply.fact.path, { timeout: 10_000 });
			await notice.locator("a").click();
			await page.waitForFunction((p) => document.querySelector(".workspace-leaf:not(.is-hidden) .markdown-source-view")?.getAttribute("data-path") === p, reply.fact.path);
		});

		await steps.run("the fact panel follows the active note", async () => {
			await page.keyboard.press("Control+Shift+E");
			await page.locator(".engram-panel .engram-badge-fact").waitFor({ timeout: 30_000 });
			await shot("05-fact-panel-fact");
			await page.evaluate(() => window.engramApp.workspace.openLinkText("Lighthouse keeper", ""));
			await page.waitForFunction(() => document.querySelector(".engram-panel-title")?.textContent === "Lighthouse keeper", null, { timeout: 30_000 });
			const backlinks = await page.locator(".engram-backlink .engram-link").allTextContents();
			assert(backlinks.some((b) => b.startsWith("Journal")), `backlinks ${JSON.stringify(backlinks)}`);
			await shot("06-fact-panel-note");
			await page.locator(".engram-backlink .engram-link").first().click();
			await page.waitForFunction(() => document.querySelector(".workspace-leaf:not(.is-hidden) .markdown-source-view")?.getAttribute("data-path") === "Journal/2025-01-02.md");
		});

		await steps.run("an empty query lists recent facts", async () => {
			await openRecall("");
			await page.waitForFunction(() => document.querySelector(".engram-recall-bar")?.textContent === "Recent facts", null, { timeout: 30_000 });
			const titles = await page.locator(".suggestion-item .engram-recall-title").allTextContents();
			assert(titles.some((t) => t.includes("budget for repairs")), `recent facts ${JSON.stringify(titles)}`);
			await page.keyboard.press("Escape");
		});

		await steps.run("clicking the status bar opens the status modal", async () => {
			await page.locator(".status-bar-item.plugin-engram").click();
			await page.locator(".engram-status-modal .engram-table").first().waitFor();
			const text = await page.locator(".engram-status-modal").textContent();
			assert(text.includes("Notes") && text.includes("127.0.0.1"), text);
			await shot("07-status-modal");
			await page.keyboard.press("Escape");
		});

		await steps.run("a backend restart (new port and token) is followed", async () => {
			const before = JSON.parse(readFileSync(backend.discovery, "utf8"));
			await backend.stop();
			await waitStatus(/not running|offline/, 30_000);
			await shot("08-not-running", ".status-bar");
			const after = await backend.start();
			assert(after.port !== before.port || after.token !== before.token, "same port and token after restart");
			await waitStatus(/^Engram( · .*)?$/, 60_000);
			await openRecall("harbour");
			await page.locator(".suggestion-item .engram-recall-title", { hasText: "Coastal budget" }).waitFor({ timeout: 30_000 });
			await page.keyboard.press("Escape");
		});

		await steps.run("unload removes the status item, commands and hotkey", async () => {
			await page.evaluate(() => window.engramPlugin.unload());
			assert((await page.locator(".status-bar-item").count()) === 0, "status item left");
			assert((await page.evaluate(() => window.engramApp.commands.commands.size)) === 0, "commands left");
			assert((await page.locator(".engram-panel").count()) === 0, "panel left");
			await page.keyboard.press("Control+Shift+R");
			await sleep(200);
			assert((await page.locator(".prompt").count()) === 0, "hotkey still opens recall");
		});

		await steps.run("no console output, and only 127.0.0.1 was contacted", async () => {
			assert(consoleLines.length === 0, `console:\n${consoleLines.join("\n")}`);
			const hosts = [...new Set(requests.map((r) => new URL(r.url).hostname))];
			assert(hosts.length === 1 && hosts[0] === "127.0.0.1", `hosts ${JSON.stringify(hosts)}`);
		});
	} finally {
		if (context) await context.close().catch(() => undefined);
		await backend.stop().catch(() => undefined);
		if (!keep) rmSync(tmp, { recursive: true, force: true });
	}
	process.stdout.write(`e2e: ${requests.length} backend requests, ${Date.now() - t0} ms total\n`);
	process.stdout.write(`e2e: screenshots in ${shots}\n`);
	if (keep) process.stdout.write(`e2e: kept ${tmp}\n`);
	process.stdout.write(`${steps.passed} passed, ${steps.failed} failed${steps.skipped ? `, ${steps.skipped} skipped` : ""}\n`);
	process.exitCode = steps.failed > 0 ? 1 : 0;
}

main().catch((err) => {
	process.stdout.write(`e2e: ${err?.stack ?? err}\n0 passed, 1 failed\n`);
	process.exitCode = 1;
});
