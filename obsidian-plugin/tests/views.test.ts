import "./shim/obsidian";
import { describe, expect, it, vi } from "vitest";
import type { Fact, NoteMetadata, Status } from "../src/api/types";
import { emptyState, type RecallItem, type RecallOutcome } from "../src/core/recall";
import { stateFromError, stateFromStatus } from "../src/core/status";
import { renderPanel, type EntityTarget, type PanelActions, type PanelEnv, type RelatedState } from "../src/ui/factPanel";
import { importanceTier, parseEntity } from "../src/ui/format";
import { renderEmptyState, renderRecallItem } from "../src/ui/recallItem";
import { renderStatusBar } from "../src/ui/statusBar";
import { renderStatusDetails } from "../src/ui/statusDetails";
import { EngramError } from "../src/api/errors";
import { factTypeLabel, modelLabel } from "../src/core/labels";

function item(over: Partial<RecallItem> = {}): RecallItem {
	return {
		title: "Alpha plan", path: "projects/alpha.md", snippet: "the **alpha** launch is [[Launch|near]]", highlights: [[6, 11]], terms: [],
		score: 0.8734, rank: 1, explain: null, factType: null, line: 12, page: null, vaultPath: "projects/alpha.md", collection: "notes", ...over,
	};
}

const fact: Fact = {
	id: "f1", path: "Engram/decisions/use-sqlite-f1.md", title: "Use SQLite", text: "We use SQLite.", factType: "steering_rule",
	importanceScore: 0.85, importanceTier: "", confidence: 0.9, lifecycleState: "active", tags: ["db"], entities: ["[[SQLite]]", "[[Alice|Al]]", "Obsidian Sync", "Nowhere"],
	supersededBy: "f0", contradictsWith: ["f7", "f8"], timestamp: "2025-01-02T03:04:05Z", updatedAt: "2025-01-02T03:04:05Z",
	syncState: "pending", warnings: [],
};

function meta(over: Partial<NoteMetadata> = {}): NoteMetadata {
	return {
		path: "a.md", title: "A", frontmatter: {}, fact: null,
		backlinks: [{ path: "b.md", title: "B", line: 3, context: "see [[A]] for **details**" }],
		related: [{ path: "c.md", title: "C", score: 0.42 }],
		coverage: { indexed: true, indexedAt: "2025-01-02T03:04:05Z", chunks: 4, embedded: false },
		...over,
	};
}

function actions(): PanelActions & Record<string, ReturnType<typeof vi.fn>> {
	return {
		openPath: vi.fn(), openFact: vi.fn(), storeAsFact: vi.fn(), archiveFact: vi.fn(), reindex: vi.fn(), showRelated: vi.fn(),
		open: vi.fn(), insertLink: vi.fn(), dragStart: vi.fn(),
	};
}

const TARGETS: Record<string, EntityTarget> = {
	SQLite: { kind: "note", path: "Tech/SQLite.md", title: "SQLite" },
	Alice: { kind: "note", path: "People/Alice.md", title: "Alice" },
	"Obsidian Sync": { kind: "alias", path: "Sync/Introduction to Obsidian Sync.md", title: "Introduction to Obsidian Sync" },
};

function env(over: Partial<PanelEnv> = {}): PanelEnv {
	return {
		resolve: (linktext) => TARGETS[linktext] ?? { kind: "unresolved" },
		isGenerated: (p) => p.startsWith("Engram/daily/") || p.startsWith("Engram/ledger/"),
		toggled: new Set(),
		...over,
	};
}

const ready = (m: NoteMetadata, over: { canStore?: boolean; busy?: boolean; related?: RelatedState | null } = {}) =>
	({ kind: "ready", meta: m, canStore: over.canStore ?? false, busy: over.busy ?? false, related: over.related === undefined ? null : over.related }) as const;

const texts = (el: HTMLElement, sel: string) => Array.from(el.querySelectorAll(sel)).map((e) => e.textContent);
const fieldsOf = (el: HTMLElement) =>
	Object.fromEntries(Array.from(el.querySelectorAll(".engram-field")).map((f) => [f.querySelector(".engram-field-label")?.textContent, f.querySelector(".engram-field-value")?.textContent]));

describe("recall item", () => {
	it("renders title, folder, line and the snippet as text with whole-word highlights", () => {
		const el = createDiv();
		renderRecallItem(el, item({ factType: "steering_rule" }));
		expect(texts(el, ".engram-recall-title")).toEqual(["Alpha plan"]);
		expect(texts(el, ".engram-recall-folder")).toEqual(["projects"]);
		expect(texts(el, ".engram-recall-line")).toEqual(["line 12"]);
		expect(texts(el, ".engram-badge-fact")).toEqual(["Steering rule"]);
		expect(el.querySelector(".engram-recall-snippet")?.textContent).toBe("the alpha launch is near");
		expect(texts(el, "mark")).toEqual(["alpha"]);
		// no number a person cannot read; it is in the details on demand
		expect(el.textContent).not.toContain("0.87");
		expect(el.querySelector(".engram-recall-details")).toBeNull();
	});

	it("shows the score and how it was made in the details", () => {
		const el = createDiv();
		const explain = { lists: { "bm25:original": { rank: 1, score: 0.83 }, "vec:original": { rank: 4, score: 0.61 } }, rrf: 0.0325, rerank: 0.91 };
		renderRecallItem(el, item({ explain, rank: 2 }), { details: true });
		expect(el.querySelector(".engram-recall-details")?.textContent).toBe("score 0.873 · #2 · keywords #1 (0.83) · meaning #4 (0.61) · fused 0.0325 · rerank 0.91");
	});

	it("highlights the query's words in the title", () => {
		const el = createDiv();
		renderRecallItem(el, item({ terms: ["plan"], highlights: [] }));
		expect(texts(el, ".engram-recall-title mark")).toEqual(["plan"]);
	});

	it("keeps markup in titles and snippets as text", () => {
		const el = createDiv();
		renderRecallItem(el, item({ title: "<b>x</b>", snippet: 'a <img src=x onerror="alert(1)"> b', highlights: [[0, 1]] }));
		expect(el.querySelector("img")).toBeNull();
		expect(el.querySelector("b")).toBeNull();
		expect(texts(el, ".engram-recall-title")).toEqual(["<b>x</b>"]);
	});

	it("shows code as code", () => {
		const el = createDiv();
		renderRecallItem(el, item({ snippet: "run `engram embed` now", highlights: [] }));
		expect(texts(el, ".engram-recall-snippet code")).toEqual(["engram embed"]);
	});

	it("shows the collection for notes outside the vault", () => {
		const el = createDiv();
		renderRecallItem(el, item({ vaultPath: null, collection: "work", line: 1, score: null }));
		expect(texts(el, ".engram-recall-collection")).toEqual(["work"]);
		expect(el.querySelector(".engram-recall-line")).toBeNull();
		expect(el.hasClass("engram-recall-external")).toBe(true);
	});

	it("shows a PDF result's page, not its line", () => {
		const el = document.createElement("div");
		renderRecallItem(el, item({ path: "papers/study.pdf", vaultPath: "papers/study.pdf", line: 40, page: 3 }));
		expect(el.querySelector(".engram-recall-line")?.textContent).toBe("page 3");
	});
});

describe("recall empty states", () => {
	const outcome = (over: Partial<RecallOutcome> = {}): RecallOutcome => ({ query: { text: "lighthouse keeper", mode: "search" }, items: [], notices: [], error: null, ...over });

	it("offers a deep search and fewer words, and says to embed when nothing is", () => {
		const st = emptyState(outcome(), { documents: 10, embedded: 0 });
		expect(st.message).toBe("No notes match “lighthouse keeper”.");
		expect(st.hints.map((h) => h.action ?? "")).toEqual(["deep", "", ""]);
		expect(st.hints.map((h) => h.text).join(" ")).toMatch(/fewer words.*engram embed/);
		const el = createDiv();
		const act = vi.fn();
		renderEmptyState(el, st, act);
		el.querySelector<HTMLElement>("a")?.click();
		expect(act).toHaveBeenCalledWith("deep");
	});

	it("in deep search, with embeddings, suggests other words only", () => {
		const st = emptyState(outcome({ query: { text: "lens", mode: "query" } }), { documents: 10, embedded: 5 });
		expect(st.hints.map((h) => h.text)).toEqual(["Check the spelling, or try another word for the same thing."]);
	});

	it.each([
		["not-running", "Engram is not running for this vault.", "start"],
		["unreachable", "The Engram backend does not answer.", "start"],
		["unauthorized", "The backend refused the plugin's token.", "status"],
		["http", "Search failed: boom", "status"],
	] as const)("%s says what to do", (kind, message, action) => {
		const st = emptyState(outcome({ error: { kind, message: "boom" } }), null);
		expect(st.message).toBe(message);
		expect(st.hints[0]?.action).toBe(action);
	});

	it("an empty fact list says how facts are made", () => {
		const st = emptyState(outcome({ query: { text: "", mode: "search" } }), { documents: 3, embedded: 0 });
		expect(st.message).toBe("No facts yet.");
		expect(st.hints.map((h) => h.text).join(" ")).toContain("Store as fact");
	});
});

describe("fact panel", () => {
	it("shows a fact in words, with entities resolved as Obsidian would", () => {
		const el = createDiv();
		const a = actions();
		renderPanel(el, ready(meta({ path: fact.path, fact })), a, env());
		expect(texts(el, ".engram-fact .engram-badge")).toEqual(["Steering rule", "Active", "Waiting to sync"]);
		const fields = fieldsOf(el);
		expect(fields.Importance).toBe("High (core)");
		expect(fields.Confidence).toBe("Very sure");
		expect(fields.About).toBe("SQLite, Al, Obsidian Sync (Introduction to Obsidian Sync), Nowhere");
		expect(fields["Replaced by"]).toBe("f0");
		expect(fields.Contradicts).toBe("f7, f8");
		expect(fields.Tags).toBe("#db");
		expect(texts(el, ".engram-unresolved")).toEqual(["Nowhere"]);
		const links = Array.from(el.querySelectorAll<HTMLElement>("a.engram-link"));
		links.find((l) => l.textContent === "Al")?.click();
		expect(a.openPath).toHaveBeenCalledWith("People/Alice.md");
		links.find((l) => l.textContent === "Obsidian Sync")?.click();
		expect(a.openPath).toHaveBeenCalledWith("Sync/Introduction to Obsidian Sync.md");
		links.find((l) => l.textContent === "f0")?.click();
		expect(a.openFact).toHaveBeenCalledWith("f0");
		(Array.from(el.querySelectorAll("button")).find((b) => b.textContent === "Archive") as HTMLButtonElement).click();
		expect(a.archiveFact).toHaveBeenCalledWith(fact);
		expect(texts(el, "button")).not.toContain("Store as fact");
	});

	it("puts related notes and the index first, then backlinks grouped by note", () => {
		const el = createDiv();
		const a = actions();
		const backlinks = [
			{ path: "b.md", title: "B", line: 3, context: "see [[A]] for **details**" },
			{ path: "b.md", title: "B", line: 3, context: "see [[A]] for **details**" },
			{ path: "b.md", title: "B", line: 9, context: "- [[A#Part|a part]]" },
			{ path: "c.md", title: "C", line: 1, context: "[[A]]" },
		];
		const related: RelatedState = {
			entries: [{ path: "r/R.md", title: "R", score: 2, reasons: [{ kind: "meaning", weight: 1, label: "similar meaning", detail: "x" }] }],
			note: "Nothing is embedded yet",
		};
		renderPanel(el, ready(meta({ backlinks }), { canStore: true, related }), a, env());
		expect(texts(el, ".engram-section-title")).toEqual(["Related notes", "Backlinks · 2 notes, 4 links"]);
		const order = Array.from(el.children).map((c) => c.className);
		expect(order.indexOf("engram-index-line")).toBeLessThan(order.indexOf("engram-section engram-backlinks"));
		expect(texts(el, ".engram-backlink-title")).toEqual(["B", "C"]);
		expect(texts(el, ".engram-count")).toEqual(["3", "1"]);
		expect(texts(el, ".engram-backlink-group:first-child .engram-context, .engram-backlinks .engram-backlink-group .engram-context").slice(0, 2)).toEqual(["see A for details", "• a part"]);
		expect(texts(el, ".engram-context mark")).toEqual(["A", "a part", "A"]);
		expect(texts(el, ".engram-related-title")).toEqual(["R"]);
		expect(texts(el, ".engram-reason")).toEqual(["similar meaning"]);
		(el.querySelector(".engram-context") as HTMLElement).click();
		expect(a.openPath).toHaveBeenCalledWith("b.md", 3);
		(Array.from(el.querySelectorAll("button")).find((b) => b.textContent === "Store as fact") as HTMLButtonElement).click();
		expect(a.storeAsFact).toHaveBeenCalledWith("a.md");
		(Array.from(el.querySelectorAll("button")).find((b) => b.textContent === "Reindex note") as HTMLButtonElement).click();
		expect(a.reindex).toHaveBeenCalledWith("a.md");
		(el.querySelector(".engram-related-insert") as HTMLElement).click();
		expect(a.insertLink).toHaveBeenCalledWith("r/R.md");
	});

	it("folds a group on click and remembers it across renders", () => {
		const el = createDiv();
		const e = env();
		renderPanel(el, ready(meta()), actions(), e);
		const head = el.querySelector<HTMLElement>(".engram-backlink-group .engram-collapse-head");
		head?.click();
		expect(el.querySelector(".engram-backlink-group")?.hasClass("is-collapsed")).toBe(true);
		renderPanel(el, ready(meta()), actions(), e);
		expect(el.querySelector(".engram-backlink-group")?.hasClass("is-collapsed")).toBe(true);
	});

	it("keeps Engram's daily notes and ledger apart, folded", () => {
		const el = createDiv();
		const backlinks = [
			{ path: "Engram/daily/2025-01-02.md", title: "2025-01-02", line: 5, context: "- [[Engram/decisions/use-sqlite-f1|Use SQLite]]" },
			{ path: "Engram/ledger/2025-01.md", title: "2025-01", line: 2, context: "[[Engram/decisions/use-sqlite-f1|Use SQLite]]" },
		];
		renderPanel(el, ready(meta({ path: fact.path, fact, backlinks })), actions(), env());
		expect(texts(el, ".engram-backlinks .engram-muted")).toEqual(["No notes of yours link here."]);
		const gen = el.querySelector(".engram-generated");
		expect(gen?.hasClass("is-collapsed")).toBe(true);
		expect(gen?.querySelector(".engram-section-title")?.textContent).toBe("From Engram's daily notes and ledger · 2");
		expect(texts(gen as HTMLElement, ".engram-context")).toEqual(["Use SQLite", "• Use SQLite"]);
	});

	it("says how far an indexed note is embedded, in one line", () => {
		const el = createDiv();
		renderPanel(el, ready(meta()), actions(), env());
		expect(el.querySelector(".engram-index-line")?.textContent).toMatch(/^Indexed .* · not embedded yet \(run engram embed\)Reindex note$/);
	});

	it("disables actions while busy and Archive for an archived fact", () => {
		const el = createDiv();
		renderPanel(el, ready(meta({ fact: { ...fact, lifecycleState: "archived" } }), { canStore: true }), actions(), env());
		expect((Array.from(el.querySelectorAll("button")).find((b) => b.textContent === "Archive") as HTMLButtonElement).disabled).toBe(true);
		renderPanel(el, ready(meta(), { canStore: true, busy: true }), actions(), env());
		expect(Array.from(el.querySelectorAll("button")).filter((b) => !b.hasClass("engram-related-insert")).every((b) => b.disabled)).toBe(true);
	});

	it.each([
		[{ kind: "no-note" } as const, "Open a note"],
		[{ kind: "offline", message: "Engram is not connected." } as const, "not connected"],
		[{ kind: "loading", path: "a.md" } as const, "Loading a.md"],
		[{ kind: "unknown", path: "a.md" } as const, "not indexed yet"],
		[{ kind: "error", path: "a.md", message: "boom" } as const, "boom"],
	])("renders the %o state", (model, text) => {
		const el = createDiv();
		renderPanel(el, model, actions(), env());
		expect(el.textContent).toContain(text);
		renderPanel(el, { kind: "no-note" }, actions(), env());
		expect(el.querySelectorAll(".engram-empty")).toHaveLength(1);
	});
});

const STATUS: Status = {
	version: "0.1.0", vault: { path: "/v", collection: "notes" }, facts: { root: "Memory" }, documents: 12, chunks: 30, embedded: 20,
	indexing: { state: "idle", done: 0, total: 0, lastUpdate: null },
	models: { embed: { id: "embeddinggemma", state: "loaded" }, rerank: { id: "qwen3-reranker", state: "available" } },
	watcher: { enabled: true, queue: 2 }, sync: { configured: false, state: "off", pending: 0, lastSync: null },
	lastError: { message: "could not parse x.md", at: "2025-01-02T03:04:05Z" }, languageAdvice: null,
};

describe("status bar and status modal", () => {
	it("swaps state classes and text", () => {
		const el = createDiv();
		renderStatusBar(el, stateFromStatus(STATUS));
		expect(el.hasClass("engram-state-connected")).toBe(true);
		renderStatusBar(el, stateFromError(new EngramError("unreachable", "x"), false));
		expect(el.hasClass("engram-state-connected")).toBe(false);
		expect(el.hasClass("engram-state-offline")).toBe(true);
		expect(el.textContent).toBe("Engram: offline");
		expect(el.getAttribute("aria-label")).toBe("x");
	});

	it("lists counts, models and the last error when connected", () => {
		const el = createDiv();
		const acts = { startBackend: vi.fn(), reindexAll: vi.fn(), refresh: vi.fn() };
		renderStatusDetails(el, { state: stateFromStatus(STATUS), discovery: null, process: null, command: "engram", pendingChanges: 0 }, acts);
		const rows = Object.fromEntries(Array.from(el.querySelectorAll("tr")).map((r) => [r.querySelector("th")?.textContent, r.querySelector("td")?.textContent]));
		expect(rows.Notes).toBe("12");
		expect(rows.Embedded).toBe("20 of 30");
		const fresh = createDiv();
		renderStatusDetails(fresh, { state: stateFromStatus({ ...STATUS, chunks: 0, embedded: 0 }), discovery: null, process: null, command: "engram", pendingChanges: 0 }, acts);
		const freshRows = Object.fromEntries(Array.from(fresh.querySelectorAll("tr")).map((r) => [r.querySelector("th")?.textContent, r.querySelector("td")?.textContent]));
		expect(freshRows.Embedded).toBe("not embedded yet (run engram embed)");
		expect(rows.Embedding).toBe("embeddinggemma (loaded)");
		expect(rows.Generator).toBe("not configured");
		expect(rows.Reranker).toBe("qwen3-reranker (ready, loads when needed)");
		expect(el.querySelector(".engram-error")?.textContent).toContain("could not parse x.md");
		expect(texts(el, "button")).toEqual(["Reindex vault", "Refresh"]);
		expect(el.querySelector(".engram-warning")).toBeNull();
	});

	it("says which model serves the vault's languages when the embedder does not", () => {
		const el = createDiv();
		const acts = { startBackend: vi.fn(), reindexAll: vi.fn(), refresh: vi.fn() };
		const advice = "9 of 12 notes (75%) are in German: run `engram embed --model multilingual`";
		renderStatusDetails(el, { state: stateFromStatus({ ...STATUS, languageAdvice: advice }), discovery: null, process: null, command: "engram", pendingChanges: 0 }, acts);
		expect(el.querySelector(".engram-warning")?.textContent).toBe(advice);
	});

	it("offers Start backend only when a command is set and nothing runs", () => {
		const el = createDiv();
		const acts = { startBackend: vi.fn(), reindexAll: vi.fn(), refresh: vi.fn() };
		const down = stateFromError(new EngramError("not-running", "no discovery.json"), false);
		const process = { running: false, exit: "The backend exited with code 2", stderrTail: "error: no such option" };
		renderStatusDetails(el, { state: down, discovery: null, process, command: "engram", pendingChanges: 3 }, acts);
		expect(texts(el, "button")).toEqual(["Start backend", "Refresh"]);
		expect(el.querySelector("pre")?.textContent).toBe("error: no such option");
		expect(el.textContent).toContain("3 vault changes waiting");
		expect(el.querySelector(".engram-status-headline")?.textContent).toBe("Backend not running");
		(el.querySelector("button.mod-cta") as HTMLButtonElement).click();
		expect(acts.startBackend).toHaveBeenCalled();
		renderStatusDetails(el, { state: down, discovery: null, process: null, command: "", pendingChanges: 0 }, acts);
		expect(texts(el, "button")).toEqual(["Refresh"]);
	});
});

describe("labels", () => {
	it("says not configured, not missing, for a role nobody set up", () => {
		expect(modelLabel({ id: "", state: "missing" })).toBe("not configured");
		expect(modelLabel(undefined)).toBe("not configured");
		expect(modelLabel({ id: "bge-m3", state: "missing" })).toBe("bge-m3 (not downloaded: run engram models pull)");
	});

	it.each([
		["steering_rule", "Steering rule"],
		["session_summary", "Session summary"],
		["decision", "Decision"],
		["sessionSummary", "Session summary"],
	])("fact type %s reads %s", (type, label) => {
		expect(factTypeLabel(type)).toBe(label);
	});
});

describe("format", () => {
	it("tiers and entities", () => {
		expect([0.8, 0.79, 0.4, 0.39].map(importanceTier)).toEqual(["structural", "potential", "potential", "contextual"]);
		expect(parseEntity("[[People/Bob#Intro|Bobby]]")).toEqual({ linktext: "People/Bob#Intro", display: "Bobby" });
		expect(parseEntity("Plain")).toEqual({ linktext: "Plain", display: "Plain" });
	});
});
