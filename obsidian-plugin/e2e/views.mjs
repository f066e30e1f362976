// The plugin's views on a copy of a real vault, as a person sees them: the recall modal, the
// fact panel on an ordinary note and on a fact, the related-notes view and the status window,
// each in the dark and the light theme, against the real `engram serve`.
//
//   node e2e/views.mjs [--vault DIR] [--backend "<command>"] [--keep] [--docs-images]
//
// The vault is DIR (also ENGRAM_E2E_VAULT; its notes are copied, the original is never
// touched), else the Obsidian Help vault in German that the benchmarks use
// (../shared/bench/xling-de/corpus.jsonl, one note per line). With neither, nothing runs.
// `--docs-images` copies the screenshots to docs/images/ (what docs/plugin.md shows).
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { absolutePythonPath, assert, Backend, bootApp, bundlePage, sleep, Steps } from "./harness.mjs";

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
const chromiumPath = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const CORPUS = join(repoRoot, "..", "shared", "bench", "xling-de", "corpus.jsonl");
/** Switching notes must show the new note's related notes within this (the issue's bar). */
const RELATED_BUDGET_MS = 1000;
/** Words a highlight must never sit on alone. */
const STOPWORDS = new Set("a an and are as at be by for from in is it of on or that the this to was with der die das und ein eine ist zu".split(" "));

/** Copy the markdown notes of `src` (no hidden folders, no attachments) into `dest`. */
function copyNotes(src, dest, dir = src) {
	let n = 0;
	for (const name of readdirSync(dir)) {
		if (name.startsWith(".")) continue;
		const p = join(dir, name);
		if (statSync(p).isDirectory()) n += copyNotes(src, dest, p);
		else if (name.endsWith(".md")) {
			const to = join(dest, p.slice(src.length + 1));
			mkdirSync(dirname(to), { recursive: true });
			cpSync(p, to);
			n++;
		}
	}
	return n;
}

/** A vault from a BEIR corpus of notes: `title` is the file name, `text` the note. */
function vaultFromCorpus(file, dest) {
	const names = new Set();
	for (const line of readFileSync(file, "utf8").split("\n")) {
		if (!line.trim()) continue;
		const doc = JSON.parse(line);
		const base = String(doc.title).replace(/[\\/:*?"<>|#^[\]]/g, " ").trim() || doc._id;
		let name = base;
		for (let i = 2; names.has(name.toLowerCase()); i++) name = `${base} (${i})`;
		names.add(name.toLowerCase());
		writeFileSync(join(dest, `${name}.md`), String(doc.text));
	}
	return names.size;
}

async function main() {
	const source = flag("--vault") ?? process.env.ENGRAM_E2E_VAULT;
	if (!source && !existsSync(CORPUS)) {
		process.stdout.write(`views: no vault (--vault, ENGRAM_E2E_VAULT) and no ${CORPUS}: nothing to run\n0 passed, 0 failed\n`);
		return;
	}
	await bundlePage(buildDir);
	const mainJsPath = join(pluginRoot, "main.js");
	assert(existsSync(mainJsPath), "main.js is missing: run `npm run build` first");
	const tmp = mkdtempSync(join(tmpdir(), "engram-views-"));
	const shots = mkdtempSync(join(tmpdir(), "engram-views-shots-"));
	const vault = join(tmp, "vault");
	mkdirSync(vault);
	const notes = source ? copyNotes(resolve(source), vault) : vaultFromCorpus(CORPUS, vault);
	process.stdout.write(`views: ${notes} notes from ${source ?? CORPUS}\n`);
	const pluginDir = join(vault, ".obsidian", "plugins", "engram");
	mkdirSync(pluginDir, { recursive: true });
	cpSync(mainJsPath, join(pluginDir, "main.js"));
	cpSync(join(repoRoot, "manifest.json"), join(pluginDir, "manifest.json"));
	cpSync(join(pluginRoot, "styles.css"), join(pluginDir, "styles.css"));
	const command = flag("--backend") ?? process.env.ENGRAM_E2E_BACKEND ?? "python3 -m engram";
	writeFileSync(join(pluginDir, "data.json"), JSON.stringify({ backendCommand: command, pollIntervalSeconds: 1 }));
	const env = {
		...process.env,
		PYTHONPATH: absolutePythonPath(process.env.PYTHONPATH),
		XDG_DATA_HOME: join(tmp, "data"),
		XDG_CONFIG_HOME: join(tmp, "config"),
		XDG_CACHE_HOME: join(tmp, "cache"),
	};
	const backend = new Backend(command, vault, env, Number(process.env.ENGRAM_E2E_START_TIMEOUT_MS ?? 120_000));
	const steps = new Steps();
	const requests = [];
	const spawned = [];
	const consoleLines = [];
	const taken = [];
	let context = null;
	let page = null;
	const report = [];

	const theme = (name) => page.evaluate((t) => document.body.classList.replace(t === "light" ? "theme-dark" : "theme-light", `theme-${t}`), name);
	/** A screenshot of `el` in both themes: NAME-dark.png and NAME-light.png. A sidebar view
	 * is shown alone in the sidebar, as a person with one tab there sees it. */
	const shots2 = async (name, el) => {
		const alone = el.startsWith(".workspace-leaf[");
		if (alone) await page.evaluate((sel) => document.querySelectorAll(".mod-right-split > .workspace-leaf").forEach((l) => l.classList.toggle("engram-shot-hidden", !l.matches(sel))), el);
		for (const t of ["dark", "light"]) {
			await theme(t);
			const file = join(shots, `${name}-${t}.png`);
			await page.locator(el).first().screenshot({ path: file });
			taken.push(`${name}-${t}.png`);
		}
		await theme("dark");
		if (alone) await page.evaluate(() => document.querySelectorAll(".engram-shot-hidden").forEach((l) => l.classList.remove("engram-shot-hidden")));
	};
	const openNote = (path) => page.evaluate((p) => window.engramApp.workspace.openLinkText(p, ""), path);
	const openRecall = async (query) => {
		await page.keyboard.press("Control+Shift+R");
		await page.locator(".prompt-input").waitFor();
		if (query) await page.keyboard.type(query, { delay: 15 });
	};
	const clearNotices = () => page.evaluate(() => document.querySelectorAll(".notice").forEach((n) => n.remove()));

	try {
		await steps.run("engram serve indexes the copied vault", async () => {
			const t0 = Date.now();
			await backend.start();
			let status = null;
			for (let i = 0; i < 600; i++, await sleep(200)) {
				status = (await backend.get("/v1/status")).body;
				if (status.documents >= notes && status.indexing.state === "idle") break;
			}
			assert(status.documents >= notes, `indexed ${status.documents} of ${notes}`);
			report.push(`indexed ${status.documents} notes in ${Date.now() - t0} ms (${status.embedded} of ${status.chunks} passages embedded)`);
		});

		await steps.run("the plugin loads in Chromium and connects", async () => {
			({ context, page } = await bootApp({ tmp, vault, pluginDir, env, chromiumPath, buildDir, requests, spawned, consoleLines, viewport: { width: 1280, height: 820 } }));
			await page.waitForFunction(() => /^Engram( · .*)?$/.test(document.querySelector(".engram-status-text")?.textContent ?? ""), null, { timeout: 30_000 });
			await page.evaluate(() => {
				const keys = window.engramApp.hotkeyOverrides;
				keys.set("engram:open-fact-panel", [{ modifiers: ["Mod", "Shift"], key: "E" }]);
				keys.set("engram:open-related-notes", [{ modifiers: ["Mod", "Shift"], key: "L" }]);
			});
		});

		// The note most notes link to: the busiest backlinks, a title many snippets mention.
		let hub = null;
		await steps.run("Obsidian's metadata cache has the vault's links", async () => {
			hub = await page.evaluate(() => {
				const counts = new Map();
				for (const targets of Object.values(window.engramApp.metadataCache.resolvedLinks)) for (const t of Object.keys(targets)) counts.set(t, (counts.get(t) ?? 0) + 1);
				const [path, n] = [...counts].sort((a, b) => b[1] - a[1])[0];
				return { path, n, title: path.split("/").pop().replace(/\.md$/, "") };
			});
			assert(hub.n >= 5, `the most linked note has ${hub.n} backlinks`);
			report.push(`most linked note: ${hub.path} (${hub.n} notes link to it)`);
		});

		await steps.run("recall: rows are text, with whole-word highlights, title, folder and line", async () => {
			await openNote(hub.path);
			await openRecall(hub.title.toLowerCase());
			await page.locator(".suggestion-item .engram-recall-title").first().waitFor({ timeout: 15_000 });
			await sleep(400);
			const rows = await page.locator(".suggestion-item").evaluateAll((items) =>
				items.map((el) => ({
					title: el.querySelector(".engram-recall-title")?.textContent ?? "",
					folder: el.querySelector(".engram-recall-folder")?.textContent ?? "",
					snippet: el.querySelector(".engram-recall-snippet")?.textContent ?? "",
					marks: [...el.querySelectorAll(".engram-recall-snippet mark")].map((m) => ({
						text: m.textContent,
						before: (m.previousSibling?.textContent ?? " ").slice(-1),
						after: (m.nextSibling?.textContent ?? " ").charAt(0),
					})),
					numbers: /\b0\.\d\d\b/.test(el.textContent ?? ""),
				})),
			);
			assert(rows.length >= 3, `${rows.length} results for ${hub.title}`);
			const markdown = /\[\[|\]\]|\]\(|(^|\s)#{1,6}\s|\*\*|__|```|==|(^|\s)>\s\[!/;
			const raw = rows.filter((r) => markdown.test(r.snippet));
			assert(raw.length === 0, `markdown in rows: ${JSON.stringify(raw.map((r) => r.snippet))}`);
			const marks = rows.flatMap((r) => r.marks);
			assert(marks.length > 0, "no highlights");
			const partial = marks.filter((m) => /[\p{L}\p{N}]/u.test(m.before) || /[\p{L}\p{N}]/u.test(m.after) || STOPWORDS.has(m.text.toLowerCase()) || m.text.length < 2);
			assert(partial.length === 0, `highlights that are not whole words: ${JSON.stringify(partial)}`);
			assert(!rows.some((r) => r.numbers), "a bare score is shown");
			report.push(`recall "${hub.title.toLowerCase()}": ${rows.length} rows, ${marks.length} highlights, no markdown markers`);
			await clearNotices();
			await shots2("recall", ".modal-container .prompt");
		});

		await steps.run("recall: Mod+I shows the numbers behind each result", async () => {
			await page.keyboard.press("Control+I");
			await page.locator(".suggestion-item .engram-recall-details").first().waitFor({ timeout: 10_000 });
			const d = await page.locator(".suggestion-item .engram-recall-details").first().textContent();
			assert(/^score \d\.\d{3} · #1/.test(d), `details ${d}`);
			await shots2("recall-details", ".modal-container .prompt");
			await page.keyboard.press("Control+I");
			await page.keyboard.press("Escape");
		});

		await steps.run("recall: an empty result says what to try next", async () => {
			await openRecall("qzxv blorfting");
			await page.waitForFunction(() => document.querySelector(".suggestion-empty")?.textContent?.includes("No notes match"), null, { timeout: 15_000 });
			const empty = await page.locator(".suggestion-empty").textContent();
			assert(empty.includes("No notes match") && empty.includes("Deep search for") && empty.includes("fewer words"), `empty state ${empty}`);
			await shots2("recall-empty", ".modal-container .prompt");
			await page.locator(".suggestion-empty a", { hasText: "Deep search for" }).click();
			await page.waitForFunction(() => document.querySelector(".engram-recall-bar")?.textContent?.includes("Deep search") && document.querySelector(".suggestion-empty .engram-hints"), null, { timeout: 15_000 });
			await shots2("recall-empty-deep", ".modal-container .prompt");
			// what to do about embeddings: in the backend's notice above the list, or in the hints
			const deep = (await page.locator(".engram-recall-bar").textContent()) + (await page.locator(".suggestion-empty").textContent());
			const status = (await backend.get("/v1/status")).body;
			if (status.embedded === 0) assert(deep.includes("engram embed"), `deep empty state ${deep}`);
			await page.keyboard.press("Escape");
		});

		await steps.run("fact panel on a note: related and index first, one backlink row per note", async () => {
			await openNote(hub.path);
			await page.keyboard.press("Control+Shift+E");
			await page.waitForFunction((t) => document.querySelector(".engram-facts-leaf .engram-panel-title, .workspace-leaf[data-type=engram-facts] .engram-panel-title")?.textContent === t, hub.title, { timeout: 15_000 });
			const panel = page.locator(".workspace-leaf[data-type=engram-facts]");
			await panel.locator(".engram-panel-related .engram-related").first().waitFor({ timeout: 15_000 });
			const meta = (await backend.get(`/v1/notes/metadata?path=${encodeURIComponent(hub.path)}`)).body;
			const linking = new Set(meta.backlinks.map((b) => b.path));
			const rows = await panel.locator(".engram-backlinks .engram-backlink-group").evaluateAll((els) => els.map((e) => e.getAttribute("data-path")));
			assert(rows.length === linking.size, `${rows.length} backlink rows for ${linking.size} linking notes`);
			assert(new Set(rows).size === rows.length, `a note listed twice: ${JSON.stringify(rows)}`);
			const order = await panel.locator(".engram-panel > *").evaluateAll((els) => els.map((e) => e.className));
			const at = (cls) => order.findIndex((c) => c.includes(cls));
			assert(at("engram-panel-related") < at("engram-backlinks") && at("engram-index-line") < at("engram-backlinks"), `order ${JSON.stringify(order)}`);
			const contexts = await panel.locator(".engram-context").allTextContents();
			assert(contexts.every((c) => !/\[\[|\]\]|\*\*/.test(c)), `markdown in backlink contexts: ${JSON.stringify(contexts.filter((c) => /\[\[|\]\]|\*\*/.test(c)))}`);
			report.push(`fact panel on "${hub.title}": ${rows.length} backlink rows for ${meta.backlinks.length} links from ${linking.size} notes`);
			await shots2("fact-panel-note", ".workspace-leaf[data-type=engram-facts]");
		});

		let fact = null;
		await steps.run("fact panel on a fact: words for its type, entities resolved, generated notes apart", async () => {
			// An alias some note holds (Obsidian does not resolve links to aliases; the panel does).
			const alias = await page.evaluate(() => {
				const { vault, metadataCache } = window.engramApp;
				const into = new Map();
				for (const targets of Object.values(metadataCache.resolvedLinks)) for (const t of Object.keys(targets)) into.set(t, (into.get(t) ?? 0) + 1);
				const found = [];
				for (const f of vault.getMarkdownFiles()) {
					const fm = metadataCache.getFileCache(f)?.frontmatter;
					const list = Array.isArray(fm?.aliases) ? fm.aliases : [];
					const a = list.find((x) => typeof x === "string" && !metadataCache.getFirstLinkpathDest(x, ""));
					if (a) found.push({ alias: a, path: f.path, title: f.basename, n: into.get(f.path) ?? 0 });
				}
				return found.sort((x, y) => y.n - x.n)[0] ?? null;
			});
			const entities = [hub.title, ...(alias ? [alias.alias] : []), "Nonexistent Thing"];
			const made = await backend.post("/v1/facts", { text: `Prefer ${hub.title} over menus for repeated actions.`, title: `Prefer ${hub.title}`, type: "steering_rule", entities, source: "obsidian" });
			assert(made.status === 201, `POST /v1/facts ${made.status} ${JSON.stringify(made.body)}`);
			fact = made.body.fact;
			await page.waitForFunction((p) => !!window.engramApp.vault.getFileByPath(p), fact.path, { timeout: 15_000 });
			await sleep(1500); // the backend writes the daily note and the ledger, then indexes them
			await openNote(fact.path);
			const panel = page.locator(".workspace-leaf[data-type=engram-facts]");
			await page.waitForFunction((t) => document.querySelector(".workspace-leaf[data-type=engram-facts] .engram-panel-title")?.textContent === t, fact.title, { timeout: 15_000 });
			await panel.locator(".engram-fact .engram-badge-fact").waitFor();
			const badge = await panel.locator(".engram-fact .engram-badge-fact").textContent();
			assert(badge === "Steering rule", `type badge ${badge}`);
			const about = await panel.locator(".engram-field", { hasText: "About" }).textContent();
			assert(!about.includes("_") && !about.includes("[["), `entities ${about}`);
			assert((await panel.locator(".engram-unresolved", { hasText: "Nonexistent Thing" }).count()) === 1, "unresolved entity not shown as such");
			if (alias) {
				const a = panel.locator(".engram-entity", { hasText: alias.alias });
				assert((await a.count()) === 1, `alias ${alias.alias} is not a link`);
				report.push(`entity "${alias.alias}" resolves by alias to "${alias.title}"`);
			}
			const mine = await panel.locator(".engram-backlinks .engram-backlink-title").allTextContents();
			const meta = (await backend.get(`/v1/notes/metadata?path=${encodeURIComponent(fact.path)}`)).body;
			const generated = meta.backlinks.filter((b) => /^Engram\/(daily|ledger)\//.test(b.path));
			assert(!mine.some((t) => generated.some((g) => g.title === t)), `generated notes among the backlinks: ${JSON.stringify(mine)}`);
			if (generated.length > 0) {
				const box = panel.locator(".engram-generated");
				assert((await box.getAttribute("class")).includes("is-collapsed"), "generated notes not folded");
				await box.locator(".engram-collapse-head").click();
				const contexts = await box.locator(".engram-context").allTextContents();
				assert(contexts.every((c) => !c.includes("[[") && !c.includes("Engram/")), `raw links ${JSON.stringify(contexts)}`);
			}
			report.push(`fact "${fact.title}": ${generated.length} backlinks from generated notes, shown apart`);
			await clearNotices();
			await shots2("fact-panel-fact", ".workspace-leaf[data-type=engram-facts]");
		});

		await steps.run("related notes view: follows the active note within 1 s, with reasons", async () => {
			await page.keyboard.press("Control+Shift+L");
			await page.locator(".engram-related-view").waitFor({ timeout: 10_000 });
			const targets = await page.evaluate(() =>
				Object.entries(window.engramApp.metadataCache.resolvedLinks)
					.filter(([p]) => !p.startsWith("Engram/"))
					.sort((a, b) => Object.keys(b[1]).length - Object.keys(a[1]).length)
					.slice(0, 12)
					.map(([p]) => p),
			);
			const times = [];
			for (const path of targets) {
				const ms = await page.evaluate(async (p) => {
					const t0 = performance.now();
					await window.engramApp.workspace.openLinkText(p, "");
					const title = p.split("/").pop().replace(/\.md$/, "");
					for (;;) {
						const el = document.querySelector(".engram-related-view");
						const shown = el?.querySelector(".engram-panel-title")?.textContent === title && el.getAttribute("data-path") === p;
						if (shown && (el.querySelector(".engram-related") || el.querySelector(".engram-empty"))) return performance.now() - t0;
						if (performance.now() - t0 > 5000) return -1;
						await new Promise((r) => setTimeout(r, 5));
					}
				}, path);
				assert(ms >= 0, `related notes for ${path} did not show`);
				times.push(ms);
			}
			times.sort((a, b) => a - b);
			const median = times[Math.floor(times.length / 2)];
			const max = times[times.length - 1];
			report.push(`related notes after switching notes (${times.length} switches): median ${median.toFixed(0)} ms, max ${max.toFixed(0)} ms`);
			assert(max < RELATED_BUDGET_MS, `slowest switch ${max.toFixed(0)} ms`);
			const reasons = await page.locator(".engram-related-view .engram-reason").allTextContents();
			assert(reasons.length > 0, "no reasons shown");
			const status = (await backend.get("/v1/status")).body;
			if (status.embedded === 0) {
				const basis = await page.locator(".engram-related-view .engram-basis").textContent();
				assert(basis.includes("Nothing is embedded yet"), `basis ${basis}`);
			}
			await openNote(hub.path);
			await page.waitForFunction((t) => document.querySelector(".engram-related-view .engram-panel-title")?.textContent === t, hub.title, { timeout: 5000 });
			await sleep(300);
			await shots2("related", ".workspace-leaf[data-type=engram-related]");
		});

		await steps.run("related notes view: the section under the cursor", async () => {
			const target = await page.evaluate(() => {
				const { vault, metadataCache } = window.engramApp;
				for (const f of vault.getMarkdownFiles()) {
					const hs = metadataCache.getFileCache(f)?.headings ?? [];
					if (hs.length >= 3 && !f.path.startsWith("Engram/")) return { path: f.path, line: hs[1].position.start.line + 1, heading: hs[1].heading };
				}
				return null;
			});
			assert(target, "no note with sections");
			await openNote(target.path);
			await page.evaluate((line) => {
				const view = window.engramApp.workspace.getActiveViewOfType(window.engramShim.MarkdownView);
				view.editor.setCursor({ line, ch: 0 });
				document.dispatchEvent(new Event("selectionchange"));
			}, target.line);
			await page.waitForFunction((h) => document.querySelector(".engram-related-view .engram-section-chip")?.textContent === `§ ${h}`, target.heading, { timeout: 5000 });
			report.push(`section "${target.heading}" of ${target.path}: ${await page.locator(".engram-related-view .engram-related").count()} related notes`);
		});

		await steps.run("related notes view: insert a link from a row", async () => {
			const before = await page.evaluate(() => window.engramApp.workspace.getActiveViewOfType(window.engramShim.MarkdownView)?.editor.getValue());
			const row = page.locator(".engram-related-view .engram-related").first();
			const title = await row.locator(".engram-related-title").textContent();
			await row.hover();
			await row.locator(".engram-related-insert").click();
			const after = await page.evaluate(() => {
				const v = window.engramApp.workspace.getLeavesOfType("markdown").map((l) => l.view).find((x) => x.file);
				return v?.editor.getValue();
			});
			assert(after !== before && after.includes(`[[${title}`), `no link to ${title} inserted`);
		});

		await steps.run("status window: models nobody configured say so", async () => {
			await page.locator(".status-bar-item.plugin-engram").click();
			await page.locator(".engram-status-modal .engram-table").first().waitFor();
			const text = await page.locator(".engram-status-modal").textContent();
			const status = (await backend.get("/v1/status")).body;
			for (const [role, label] of [["rerank", "Reranker"], ["generate", "Generator"]]) {
				const m = status.models[role];
				if (m && m.state === "missing" && !m.id) assert(text.includes(`${label}not configured`), `${label}: ${text}`);
			}
			assert(!/\(missing\)/.test(text), `"missing" in ${text}`);
			await sleep(300);
			await shots2("status", ".engram-status-modal");
			await page.keyboard.press("Escape");
		});

		await steps.run("every request and reply matches the backend's OpenAPI document", async () => {
			const { checkReply, checkRequest } = await import(pathToFileURL(join(buildDir, "contract.mjs")).href);
			const answered = requests.filter((r) => r.status > 0);
			const problems = answered.flatMap((r) => [...checkRequest(r.method, r.url, r.body ?? undefined), ...checkReply(r.method, r.url, r.status, r.text ?? "")]);
			assert(problems.length === 0, `off the document:\n${[...new Set(problems)].join("\n")}`);
		});

		await steps.run("no console output", async () => {
			assert(consoleLines.length === 0, `console:\n${consoleLines.join("\n")}`);
		});
	} finally {
		if (context) await context.close().catch(() => undefined);
		await backend.kill().catch(() => undefined);
		if (!keep) rmSync(tmp, { recursive: true, force: true });
	}
	for (const line of report) process.stdout.write(`views: ${line}\n`);
	if (docsImages && steps.failed === 0) {
		const dest = join(repoRoot, "docs", "images");
		mkdirSync(dest, { recursive: true });
		for (const name of taken) cpSync(join(shots, name), join(dest, `plugin-${name}`));
		process.stdout.write(`views: copied ${taken.length} screenshots to ${dest}\n`);
	}
	process.stdout.write(`views: screenshots in ${shots}: ${taken.join(" ")}\n`);
	if (keep) process.stdout.write(`views: kept ${tmp}\n`);
	process.stdout.write(`${steps.passed} passed, ${steps.failed} failed${steps.skipped ? `, ${steps.skipped} skipped` : ""}\n`);
	process.exitCode = steps.failed > 0 ? 1 : 0;
}

main().catch((err) => {
	process.stdout.write(`views: ${err?.stack ?? err}\n0 passed, 1 failed\n`);
	process.exitCode = 1;
});
