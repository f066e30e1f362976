// End-to-end test: the production main.js in headless Chromium, against the real `engram serve`
// on a temporary vault, driven with the keyboard.
//
//   node e2e/run.mjs [--backend "<command>"] [--keep] [--docs-images]
//
// The backend command (also ENGRAM_E2E_BACKEND; default `python3 -m engram`) gets `serve --vault
// <tmp vault> --config-dir .obsidian` appended, exactly what the plugin's "Start backend" runs.
// XDG_DATA_HOME, XDG_CONFIG_HOME and XDG_CACHE_HOME point into the temporary folder, so the
// backend's index, config and token never touch the user's. `--docs-images` copies a few
// screenshots to docs/images/ (what docs/plugin.md shows).
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { absolutePythonPath, assert, Backend, bootApp, bundlePage, exited, frontmatter, sleep, Steps } from "./harness.mjs";

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
const docsImages = argv.includes("--docs-images");
const startTimeoutMs = Number(process.env.ENGRAM_E2E_START_TIMEOUT_MS ?? 60_000);
const chromiumPath = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
/** Screenshots copied to docs/images/ with --docs-images (small, representative). */
const DOC_SHOTS = ["recall", "fact-panel", "status-modal", "status-offline"];
const NOTE_VIEW = ".workspace-leaf:not(.is-hidden) .markdown-source-view";
/** A fact type as the plugin labels it: `steering_rule` → "Steering rule". */
const typeLabel = (t) => {
	const words = t.replace(/[_-]+/g, " ").toLowerCase();
	return words.charAt(0).toUpperCase() + words.slice(1);
};

async function main() {
	const t0 = Date.now();
	await bundlePage(buildDir);
	const mainJsPath = join(pluginRoot, "main.js");
	assert(existsSync(mainJsPath), "main.js is missing: run `npm run build` first");

	const tmp = mkdtempSync(join(tmpdir(), "engram-e2e-"));
	const shots = mkdtempSync(join(tmpdir(), "engram-e2e-shots-"));
	// The vault is opened through a symlink, as on macOS (/tmp, /var) or with a linked Documents
	// folder: Obsidian reports the path it was given, the backend the resolved one.
	mkdirSync(join(tmp, "real"));
	symlinkSync(join(tmp, "real"), join(tmp, "link"), "dir");
	const vault = join(tmp, "link", "vault");
	const realVault = join(tmp, "real", "vault");
	cpSync(join(here, "fixtures", "vault"), vault, { recursive: true });
	// Install the plugin as BRAT would: the three release files in <configDir>/plugins/engram/.
	const pluginDir = join(vault, ".obsidian", "plugins", "engram");
	mkdirSync(pluginDir, { recursive: true });
	cpSync(mainJsPath, join(pluginDir, "main.js"));
	cpSync(join(repoRoot, "manifest.json"), join(pluginDir, "manifest.json"));
	cpSync(join(pluginRoot, "styles.css"), join(pluginDir, "styles.css"));

	const command = flag("--backend") ?? process.env.ENGRAM_E2E_BACKEND ?? "python3 -m engram";
	// The user's settings: the same backend command for "Start backend", a quick status poll.
	writeFileSync(join(pluginDir, "data.json"), JSON.stringify({ backendCommand: command, pollIntervalSeconds: 1 }));
	const env = {
		...process.env,
		PYTHONPATH: absolutePythonPath(process.env.PYTHONPATH),
		XDG_DATA_HOME: join(tmp, "data"),
		XDG_CONFIG_HOME: join(tmp, "config"),
		XDG_CACHE_HOME: join(tmp, "cache"),
	};
	process.stdout.write(`e2e: backend command: ${command}\ne2e: vault: ${vault}\n`);
	const backend = new Backend(command, vault, env, startTimeoutMs);

	const steps = new Steps();
	const requests = []; // every request the plugin made: {method, url, body, status, text}
	const spawned = []; // processes the plugin started: {cmd, args, cwd, child}
	const consoleLines = [];
	let context = null;
	let page = null;

	const shot = async (name, el) => {
		const file = join(shots, `${name}.png`);
		if (el) await page.locator(el).first().screenshot({ path: file });
		else await page.screenshot({ path: file });
	};
	const waitStatus = async (pattern, timeout = 30_000) => {
		await page.waitForFunction(
			(src) => new RegExp(src).test(document.querySelector(".engram-status-text")?.textContent ?? ""),
			pattern.source,
			{ timeout },
		);
	};
	const since = (mark, pred) => requests.slice(mark).filter(pred);
	const lastTo = (suffix) => [...requests].reverse().find((r) => new URL(r.url).pathname === suffix);
	const openRecall = async (query) => {
		await page.keyboard.press("Control+Shift+R");
		await page.locator(".prompt-input").waitFor();
		if (query) await page.keyboard.type(query, { delay: 30 });
	};
	const openNote = (path) => page.evaluate((p) => window.engramApp.workspace.openLinkText(p, ""), path);
	const waitOpen = (path) =>
		page.waitForFunction(([sel, p]) => document.querySelector(sel)?.getAttribute("data-path") === p, [NOTE_VIEW, path], { timeout: 10_000 });
	const cursorLine = () => page.locator(NOTE_VIEW).getAttribute("data-cursor-line");

	try {
		const tStart = Date.now();
		await steps.run("engram serve starts on the seeded vault and writes discovery.json", async () => {
			const d = await backend.start();
			assert(d.url.startsWith("http://127.0.0.1:"), `discovery url ${d.url}`);
			assert(d.vault === realpathSync(realVault), `discovery vault ${d.vault}`);
			process.stdout.write(`    backend up in ${Date.now() - tStart} ms at ${d.url}\n`);
		});

		await steps.run("Chromium loads the production main.js like Obsidian", async () => {
			({ context, page } = await bootApp({ tmp, vault, pluginDir, env, chromiumPath, buildDir, requests, spawned, consoleLines }));
		});

		await steps.run("status bar reaches connected", async () => {
			await waitStatus(/^Engram( · .*)?$/);
			const status = JSON.parse(lastTo("/v1/status").text);
			assert(status.vault.collection === "vault" && status.facts?.root === "Engram", `status ${JSON.stringify(status.vault)} ${JSON.stringify(status.facts)}`);
			await shot("status-bar", ".status-bar");
		});

		await steps.run("Ctrl+Shift+R, typing finds a seeded note (this vault's collection only)", async () => {
			await openNote("Journal/2025-01-02"); // an editor for Shift+Enter later
			const mark = requests.length;
			await openRecall("lighthouse");
			await page.locator(".suggestion-item .engram-recall-title", { hasText: "Lighthouse keeper" }).waitFor({ timeout: 15_000 });
			await sleep(300);
			const queries = since(mark, (r) => r.url.endsWith("/v1/search"));
			assert(queries.length >= 1 && queries.length < "lighthouse".length, `${queries.length} search requests for 10 keystrokes`);
			const body = JSON.parse(queries[queries.length - 1].body);
			assert(body.q === "lighthouse" && !("mode" in body), `last search ${JSON.stringify(body)}`);
			assert(JSON.stringify(body.collections) === '["vault"]', `collections ${JSON.stringify(body.collections)}`);
			const reply = JSON.parse(queries[queries.length - 1].text);
			assert(reply.results[0]?.path === "Lighthouse keeper.md" && reply.results[0].score > 0, `top result ${JSON.stringify(reply.results[0])}`);
			const marks = await page.locator(".suggestion-item mark").allTextContents();
			assert(marks.some((m) => m.toLowerCase() === "lighthouse"), `highlights: ${JSON.stringify(marks)}`);
			await shot("recall", ".modal-container .prompt");
		});

		await steps.run("Enter opens the note at the matching line", async () => {
			const first = JSON.parse(lastTo("/v1/search").text).results[0];
			await page.keyboard.press("Enter");
			await waitOpen(first.path);
			assert(Number(await cursorLine()) === Math.max(1, first.line) - 1, `cursor line ${await cursorLine()} for result line ${first.line}`);
			assert((await page.locator(".prompt").count()) === 0, "modal still open");
		});

		await steps.run("Shift+Enter inserts a link; the edit goes to POST /v1/index and gets indexed", async () => {
			await openNote("Journal/2025-01-02");
			await page.evaluate(() => {
				const view = window.engramApp.workspace.getActiveViewOfType(window.engramShim.MarkdownView);
				view.editor.setCursor({ line: 3, ch: 0 });
			});
			const mark = requests.length;
			await openRecall("sourdough");
			await page.locator(".suggestion-item .engram-recall-title", { hasText: "Sourdough" }).waitFor({ timeout: 15_000 });
			await page.keyboard.press("Shift+Enter");
			const text = readFileSync(join(vault, "Journal", "2025-01-02.md"), "utf8");
			assert(/\[\[Sourdough\]\]\s*$/.test(text.split("\n")[3] ?? ""), `line 4 is ${JSON.stringify(text.split("\n")[3])}`);
			let index = [];
			// status 0 until the answer is in: on a busy machine it can come after the request is seen
			for (let i = 0; i < 100 && (index.length === 0 || index[0].status === 0); i++, await sleep(100)) index = since(mark, (r) => r.url.endsWith("/v1/index"));
			assert(index.length === 1, `${index.length} index requests`);
			assert(JSON.parse(index[0].body).paths?.includes("Journal/2025-01-02.md"), `index body ${index[0].body}`);
			assert(index[0].status === 202, `index answered ${index[0].status}`);
			// The backend re-read the note: Sourdough now has a backlink from the journal.
			let backlinks = [];
			for (let i = 0; i < 100; i++, await sleep(100)) {
				const meta = await backend.get(`/v1/notes/metadata?path=${encodeURIComponent("Recipes/Sourdough.md")}`);
				backlinks = meta.body.backlinks.map((b) => b.path);
				if (backlinks.includes("Journal/2025-01-02.md")) break;
			}
			assert(backlinks.includes("Journal/2025-01-02.md"), `Sourdough backlinks ${JSON.stringify(backlinks)}`);
		});

		await steps.run("a ? prefix runs a deep query (keyword fallback without models)", async () => {
			const mark = requests.length;
			await openRecall("?lens");
			await page.waitForFunction(() => document.querySelector(".engram-recall-bar")?.textContent?.includes("Deep search"), null, { timeout: 30_000 });
			await page.locator(".suggestion-item .engram-recall-title", { hasText: "Überlegungen" }).waitFor({ timeout: 15_000 });
			const q = since(mark, (r) => r.url.endsWith("/v1/query")).map((r) => JSON.parse(r.body));
			assert(q.length >= 1 && q[q.length - 1].q === "lens", JSON.stringify(q));
			assert(since(mark, (r) => r.url.endsWith("/v1/search")).length === 0, "a deep query went to /v1/search");
			const notices = await page.locator(".engram-recall-bar .engram-notice").allTextContents();
			assert(notices.some((n) => n.includes("keyword search only")), `notices ${JSON.stringify(notices)}`);
			await page.keyboard.press("Escape");
		});

		let fact = null;
		await steps.run("Store as fact (user hotkey) from a selection writes a fact note into the vault", async () => {
			await page.evaluate(() => {
				const app = window.engramApp;
				app.hotkeyOverrides.set("engram:store-as-fact", [{ modifiers: ["Mod", "Shift"], key: "F" }]);
				app.hotkeyOverrides.set("engram:open-fact-panel", [{ modifiers: ["Mod", "Shift"], key: "E" }]);
			});
			await openNote("Coastal budget");
			await page.evaluate(() => {
				const view = window.engramApp.workspace.getActiveViewOfType(window.engramShim.MarkdownView);
				view.editor.setSelection({ line: 4, ch: 0 }, { line: 4, ch: 42 });
			});
			await page.keyboard.press("Control+Shift+F");
			const notice = page.locator(".notice", { hasText: "Stored the selection as a fact" });
			await notice.waitFor({ timeout: 15_000 });
			const req = lastTo("/v1/facts/from-note");
			assert(req.status === 201, `from-note answered ${req.status}: ${req.text}`);
			assert(JSON.parse(req.body).selection === "The budget for repairs is tight this year.", `body ${req.body}`);
			fact = JSON.parse(req.text).fact;
			// The file on disk, as the backend wrote it.
			const file = join(vault, fact.path);
			assert(fact.path.startsWith("Engram/") && existsSync(file), `no fact file at ${fact.path}`);
			const text = readFileSync(file, "utf8");
			const fm = frontmatter(text);
			assert(fm.id === fact.id && fm.factType === fact.factType && fm.lifecycleState === "active", `frontmatter ${JSON.stringify(fm)}`);
			assert(fm.source === "[[Coastal budget]]", `source ${fm.source}`);
			assert(text.trimEnd().endsWith("The budget for repairs is tight this year."), `body of ${fact.path}:\n${text}`);
			process.stdout.write(`    fact file: ${fact.path} (${fm.factType}, importance ${fm.importanceScore})\n`);
			await page.waitForFunction((p) => !!window.engramApp.vault.getFileByPath(p), fact.path, { timeout: 10_000 });
			await notice.locator("a").click();
			await waitOpen(fact.path);
		});

		await steps.run("the fact panel shows the fact's type, lifecycle and importance in words", async () => {
			await page.keyboard.press("Control+Shift+E");
			await page.locator(".engram-panel .engram-badge-fact").waitFor({ timeout: 15_000 });
			const badges = await page.locator(".engram-panel .engram-badges .engram-badge").allTextContents();
			assert(badges[0] === typeLabel(fact.factType) && badges[1] === "Active" && badges[2] === "On this device only", `badges ${JSON.stringify(badges)}`);
			const fields = await page.locator(".engram-panel .engram-field").allTextContents();
			assert(fields.some((f) => /^Importance(High|Medium|Low)/.test(f)), `fields ${JSON.stringify(fields)}`);
			assert(fields.some((f) => /^Confidence[A-Z]/.test(f)), `fields ${JSON.stringify(fields)}`);
			const importance = await page.locator(".engram-panel .engram-field", { hasText: "Importance" }).locator(".engram-field-value").getAttribute("title");
			assert(importance === `${fact.importanceScore.toFixed(2)} · ${fact.importanceTier}`, `importance tooltip ${importance}`);
			assert(/^Indexed /.test((await page.locator(".engram-index-line").textContent()) ?? ""), "no index line");
			await page.evaluate(() => document.querySelectorAll(".notice").forEach((n) => n.remove())); // for the picture
			await shot("fact-panel", ".mod-right-split");
		});

		await steps.run("the fact panel follows the active note: backlinks grouped by note, with context", async () => {
			await openNote("Lighthouse keeper");
			await page.waitForFunction(() => document.querySelector(".engram-panel-title")?.textContent === "Lighthouse keeper", null, { timeout: 15_000 });
			const backlinks = await page.locator(".engram-backlinks .engram-backlink-title").allTextContents();
			assert(backlinks.includes("Journal 2025-01-02"), `backlinks ${JSON.stringify(backlinks)}`);
			assert(new Set(backlinks).size === backlinks.length, `a note listed twice: ${JSON.stringify(backlinks)}`);
			const contexts = await page.locator(".engram-backlinks .engram-context").allTextContents();
			assert(contexts.every((c) => !c.includes("[[")), `raw links in ${JSON.stringify(contexts)}`);
			assert((await page.locator(".engram-panel button", { hasText: "Store as fact" }).count()) === 1, "no Store as fact button");
			await shot("fact-panel-note", ".mod-right-split");
			await page.locator(".engram-backlinks .engram-backlink-title", { hasText: "Journal 2025-01-02" }).click();
			await waitOpen("Journal/2025-01-02.md");
		});

		await steps.run("an empty query lists recent facts; a search finds the fact with its type", async () => {
			await openRecall("");
			await page.waitForFunction(() => document.querySelector(".engram-recall-bar")?.textContent === "Recent facts", null, { timeout: 15_000 });
			const titles = await page.locator(".suggestion-item .engram-recall-title").allTextContents();
			assert(titles.includes(fact.title), `recent facts ${JSON.stringify(titles)}`);
			// Searching finds the fact note too, with its type as a badge.
			await page.keyboard.type("repairs tight", { delay: 20 });
			const item = page.locator(".suggestion-item", { has: page.locator(".engram-recall-title", { hasText: fact.title }) });
			await item.first().waitFor({ timeout: 15_000 });
			const badge = await item.first().locator(".engram-badge-fact").textContent();
			assert(badge === typeLabel(fact.factType), `badge ${badge}`);
			await page.keyboard.press("Escape");
		});

		await steps.run("Archive in the fact panel archives the fact note on disk", async () => {
			await openNote(fact.path);
			await page.waitForFunction((t) => document.querySelector(".engram-panel-title")?.textContent === t, fact.title, { timeout: 15_000 });
			await page.locator(".engram-panel button", { hasText: "Archive" }).click();
			await page.locator(".notice", { hasText: "archived" }).waitFor({ timeout: 15_000 });
			assert(lastTo(`/v1/facts/${fact.id}`)?.method === "DELETE", "no DELETE /v1/facts/{id}");
			const fm = frontmatter(readFileSync(join(vault, fact.path), "utf8"));
			assert(fm.lifecycleState === "archived", `lifecycleState ${fm.lifecycleState}`);
			await page.waitForFunction(() => [...document.querySelectorAll(".engram-panel .engram-badge")].some((b) => b.textContent === "Archived"), null, { timeout: 15_000 });
			await page.evaluate(() => document.querySelectorAll(".notice").forEach((n) => n.remove()));
		});

		await steps.run("clicking the status bar opens the status window", async () => {
			await page.locator(".status-bar-item.plugin-engram").click();
			await page.locator(".engram-status-modal .engram-table").first().waitFor();
			const text = await page.locator(".engram-status-modal").textContent();
			assert(/Notes\d+/.test(text) && text.includes("Facts folderEngram") && text.includes("127.0.0.1"), text);
			// A calmer picture: let the watcher and the plugin's change queue settle (not asserted).
			await page
				.waitForFunction(() => /on, 0 queued/.test(document.querySelector(".engram-status-modal")?.textContent ?? ""), null, { timeout: 5000 })
				.catch(() => undefined);
			await page.waitForFunction(() => !/waiting to be sent/.test(document.querySelector(".engram-status-modal")?.textContent ?? ""), null, { timeout: 5000 });
			await shot("status-modal", ".engram-status-modal");
			await page.keyboard.press("Escape");
		});

		await steps.run("killing the backend turns the status to offline", async () => {
			await backend.kill("SIGKILL");
			assert(existsSync(backend.discovery), "a killed backend cannot remove discovery.json");
			await waitStatus(/^Engram: offline$/, 15_000);
			await shot("status-bar-offline", ".status-bar");
		});

		await steps.run('"Start backend" in the status window runs engram serve; the plugin reconnects', async () => {
			const before = JSON.parse(readFileSync(backend.discovery, "utf8"));
			await page.locator(".status-bar-item.plugin-engram").click();
			const start = page.locator(".engram-status-modal button", { hasText: "Start backend" });
			await start.waitFor({ timeout: 5000 });
			await shot("status-offline", ".engram-status-modal");
			await start.click();
			for (let i = 0; i < 50 && spawned.length === 0; i++) await sleep(100);
			assert(spawned.length === 1, `${spawned.length} processes spawned`);
			const run = spawned[0];
			const wanted = [...backend.argv.slice(1)];
			assert(run.cmd === backend.argv[0] && JSON.stringify(run.args) === JSON.stringify(wanted), `spawned ${run.cmd} ${JSON.stringify(run.args)}`);
			assert(run.cwd === vault, `cwd ${run.cwd}`);
			const after = await backend.waitLive(run.child);
			assert(after.port !== before.port, "same port after restart");
			await waitStatus(/^Engram( · .*)?$/, 30_000);
			await page.keyboard.press("Escape");
			await openRecall("harbour");
			await page.locator(".suggestion-item .engram-recall-title", { hasText: "Coastal budget" }).waitFor({ timeout: 15_000 });
			await page.keyboard.press("Escape");
		});

		await steps.run("unload stops the backend it started and leaves nothing behind", async () => {
			await page.evaluate(() => window.engramPlugin.unload());
			assert((await page.locator(".status-bar-item").count()) === 0, "status item left");
			assert((await page.evaluate(() => window.engramApp.commands.commands.size)) === 0, "commands left");
			assert((await page.locator(".engram-panel").count()) === 0, "panel left");
			await page.keyboard.press("Control+Shift+R");
			await exited(spawned[0].child);
			for (let i = 0; i < 50 && existsSync(backend.discovery); i++) await sleep(100);
			assert(!existsSync(backend.discovery), "discovery.json left: the backend did not stop cleanly");
			const mark = requests.length;
			await sleep(1500); // more than the 1 s poll interval
			assert((await page.locator(".prompt").count()) === 0, "hotkey still opens recall");
			assert(requests.length === mark, `${requests.length - mark} requests after unload`);
		});

		await steps.run("every request and reply matches the backend's OpenAPI document", async () => {
			const { checkReply, checkRequest, OPENAPI_FILE } = await import(pathToFileURL(join(buildDir, "contract.mjs")).href);
			const answered = requests.filter((r) => r.status > 0);
			const problems = answered.flatMap((r) => [
				...checkRequest(r.method, r.url, r.body ?? undefined),
				...checkReply(r.method, r.url, r.status, r.text ?? ""),
			]);
			const routes = [...new Set(answered.map((r) => `${r.method} ${new URL(r.url).pathname.replace(/\/facts\/(?!from-note$)[^/]+$/, "/facts/{id}")}`))].sort();
			process.stdout.write(`    ${answered.length} exchanges checked against ${OPENAPI_FILE}: ${routes.join(", ")}\n`);
			assert(routes.length >= 9, `routes ${JSON.stringify(routes)}`);
			assert(problems.length === 0, `off the document:\n${[...new Set(problems)].join("\n")}`);
		});

		await steps.run("no console output, and only 127.0.0.1 was contacted", async () => {
			assert(consoleLines.length === 0, `console:\n${consoleLines.join("\n")}`);
			const hosts = [...new Set(requests.map((r) => new URL(r.url).hostname))];
			assert(hosts.length === 1 && hosts[0] === "127.0.0.1", `hosts ${JSON.stringify(hosts)}`);
		});
	} finally {
		if (context) await context.close().catch(() => undefined);
		await backend.kill().catch(() => undefined);
		for (const s of spawned) {
			if (s.child.exitCode === null && s.child.signalCode === null) {
				s.child.kill("SIGTERM");
				await exited(s.child);
			}
		}
		if (!keep) rmSync(tmp, { recursive: true, force: true });
	}
	if (docsImages && steps.failed === 0) {
		const dest = join(repoRoot, "docs", "images");
		mkdirSync(dest, { recursive: true });
		for (const name of DOC_SHOTS) cpSync(join(shots, `${name}.png`), join(dest, `plugin-${name}.png`));
		process.stdout.write(`e2e: copied ${DOC_SHOTS.length} screenshots to ${dest}\n`);
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
