import "./shim/obsidian";
import { describe, expect, it, vi } from "vitest";
import type { Fact, NoteMetadata, Status } from "../src/api/types";
import type { RecallItem } from "../src/core/recall";
import { stateFromError, stateFromStatus } from "../src/core/status";
import { renderPanel, type PanelActions } from "../src/ui/factPanel";
import { importanceTier, parseEntity } from "../src/ui/format";
import { renderRecallItem } from "../src/ui/recallItem";
import { renderStatusBar } from "../src/ui/statusBar";
import { renderStatusDetails } from "../src/ui/statusDetails";
import { EngramError } from "../src/api/errors";

function item(over: Partial<RecallItem> = {}): RecallItem {
	return {
		title: "Alpha plan", path: "projects/alpha.md", snippet: "the alpha launch is near", highlights: [[4, 9]],
		score: 0.8734, factType: null, line: 12, vaultPath: "projects/alpha.md", collection: "notes", ...over,
	};
}

const fact: Fact = {
	id: "f1", path: "Engram/decisions/use-sqlite-f1.md", title: "Use SQLite", text: "We use SQLite.", factType: "decision",
	importanceScore: 0.85, importanceTier: "", confidence: 0.9, lifecycleState: "active", tags: ["db"], entities: ["[[SQLite]]", "[[Alice|Al]]"],
	supersededBy: "f0", contradictsWith: ["f7", "f8"], timestamp: "2025-01-02T03:04:05Z", updatedAt: "2025-01-02T03:04:05Z",
	syncState: "pending", warnings: [],
};

function meta(over: Partial<NoteMetadata> = {}): NoteMetadata {
	return {
		path: "a.md", title: "A", frontmatter: {}, fact: null,
		backlinks: [{ path: "b.md", title: "B", line: 3, context: "see [[A]] for details" }],
		related: [{ path: "c.md", title: "C", score: 0.42 }],
		coverage: { indexed: true, indexedAt: "2025-01-02T03:04:05Z", chunks: 4, embedded: false },
		...over,
	};
}

function actions(): PanelActions & Record<string, ReturnType<typeof vi.fn>> {
	return {
		openPath: vi.fn(), openLink: vi.fn(), openFact: vi.fn(), storeAsFact: vi.fn(), archiveFact: vi.fn(), reindex: vi.fn(),
	};
}

const texts = (el: HTMLElement, sel: string) => Array.from(el.querySelectorAll(sel)).map((e) => e.textContent);

describe("recall item", () => {
	it("renders title, path:line, score, and highlights as <mark>", () => {
		const el = createDiv();
		renderRecallItem(el, item({ factType: "decision" }));
		expect(texts(el, ".engram-recall-title")).toEqual(["Alpha plan"]);
		expect(texts(el, ".engram-recall-path")).toEqual(["projects/alpha.md:12"]);
		expect(texts(el, ".engram-recall-score")).toEqual(["0.87"]);
		expect(texts(el, ".engram-badge-fact")).toEqual(["decision"]);
		expect(texts(el, "mark")).toEqual(["alpha"]);
		expect(el.querySelector(".engram-recall-snippet")?.textContent).toBe("the alpha launch is near");
	});

	it("keeps markup in snippets as text", () => {
		const el = createDiv();
		renderRecallItem(el, item({ title: "<b>x</b>", snippet: '<img src=x onerror="alert(1)">', highlights: [[0, 4]] }));
		expect(el.querySelector("img")).toBeNull();
		expect(el.querySelector("b")).toBeNull();
		expect(texts(el, "mark")).toEqual(["<img"]);
	});

	it("shows the collection for notes outside the vault and no score for recent facts", () => {
		const el = createDiv();
		renderRecallItem(el, item({ vaultPath: null, collection: "work", line: 1, score: null }));
		expect(texts(el, ".engram-recall-path")).toEqual(["work: projects/alpha.md"]);
		expect(el.querySelector(".engram-recall-score")).toBeNull();
		expect(el.hasClass("engram-recall-external")).toBe(true);
	});
});

describe("fact panel", () => {
	it("shows a fact's fields with clickable entities and links", () => {
		const el = createDiv();
		const a = actions();
		renderPanel(el, { kind: "ready", meta: meta({ path: fact.path, fact }), canStore: false, busy: false }, a);
		expect(texts(el, ".engram-badge")).toEqual(["decision", "active", "sync: pending"]);
		const fields = Object.fromEntries(
			Array.from(el.querySelectorAll(".engram-field")).map((f) => [f.querySelector(".engram-field-label")?.textContent, f.querySelector(".engram-field-value")?.textContent]),
		);
		expect(fields.Importance).toBe("0.85 (structural)");
		expect(fields.Confidence).toBe("0.90");
		expect(fields.Entities).toBe("SQLite, Al");
		expect(fields["Superseded by"]).toBe("f0");
		expect(fields.Contradicts).toBe("f7, f8");
		expect(fields.Tags).toBe("#db");
		const links = Array.from(el.querySelectorAll<HTMLElement>("a.engram-link"));
		links.find((l) => l.textContent === "Al")?.click();
		expect(a.openLink).toHaveBeenCalledWith("Alice", fact.path);
		links.find((l) => l.textContent === "f0")?.click();
		expect(a.openFact).toHaveBeenCalledWith("f0");
		links.find((l) => l.textContent === "B")?.click();
		expect(a.openPath).toHaveBeenCalledWith("b.md", 3);
		const archive = Array.from(el.querySelectorAll("button")).find((b) => b.textContent === "Archive");
		archive?.click();
		expect(a.archiveFact).toHaveBeenCalledWith(fact);
		expect(texts(el, "button")).not.toContain("Store as fact");
	});

	it("offers Store as fact on a plain note and shows backlinks, related and coverage", () => {
		const el = createDiv();
		const a = actions();
		renderPanel(el, { kind: "ready", meta: meta(), canStore: true, busy: false }, a);
		expect(texts(el, ".engram-section-title")).toEqual(["Backlinks (1)", "Related", "Index"]);
		expect(texts(el, ".engram-context")).toEqual(["see [[A]] for details"]);
		expect(texts(el, ".engram-related .engram-recall-score")).toEqual(["0.42"]);
		(Array.from(el.querySelectorAll("button")).find((b) => b.textContent === "Store as fact") as HTMLButtonElement).click();
		expect(a.storeAsFact).toHaveBeenCalledWith("a.md");
		(Array.from(el.querySelectorAll("button")).find((b) => b.textContent === "Reindex note") as HTMLButtonElement).click();
		expect(a.reindex).toHaveBeenCalledWith("a.md");
	});

	it.each([
		[{ chunks: 0, embedded: false }, "not embedded yet (run engram embed)"],
		[{ chunks: 4, embedded: false }, "not embedded yet (run engram embed)"],
		[{ chunks: 1, embedded: true }, "yes, 1 passage"],
		[{ chunks: 4, embedded: true }, "yes, 4 passages"],
		[{ chunks: 0, embedded: true }, "nothing to embed"],
	])("says how far an indexed note is embedded: %o", (state, text) => {
		const el = createDiv();
		const coverage = { indexed: true, indexedAt: "2025-01-02T03:04:05Z", ...state };
		renderPanel(el, { kind: "ready", meta: meta({ coverage }), canStore: false, busy: false }, actions());
		const fields = Object.fromEntries(
			Array.from(el.querySelectorAll(".engram-field")).map((f) => [f.querySelector(".engram-field-label")?.textContent, f.querySelector(".engram-field-value")?.textContent]),
		);
		expect(fields.Embedded).toBe(text);
		expect(fields.Chunks).toBeUndefined(); // "Chunks: 0" read as broken
	});

	it("disables actions while busy and Archive for an archived fact", () => {
		const el = createDiv();
		renderPanel(el, { kind: "ready", meta: meta({ fact: { ...fact, lifecycleState: "archived" } }), canStore: true, busy: false }, actions());
		expect((Array.from(el.querySelectorAll("button")).find((b) => b.textContent === "Archive") as HTMLButtonElement).disabled).toBe(true);
		renderPanel(el, { kind: "ready", meta: meta(), canStore: true, busy: true }, actions());
		expect(Array.from(el.querySelectorAll("button")).every((b) => b.disabled)).toBe(true);
	});

	it.each([
		[{ kind: "no-note" } as const, "Open a note"],
		[{ kind: "offline", message: "Engram is not connected." } as const, "not connected"],
		[{ kind: "loading", path: "a.md" } as const, "Loading a.md"],
		[{ kind: "unknown", path: "a.md" } as const, "not indexed yet"],
		[{ kind: "error", path: "a.md", message: "boom" } as const, "boom"],
	])("renders the %o state", (model, text) => {
		const el = createDiv();
		renderPanel(el, model, actions());
		expect(el.textContent).toContain(text);
		renderPanel(el, { kind: "no-note" }, actions());
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
		expect(el.querySelector(".engram-error")?.textContent).toContain("could not parse x.md");
		expect(texts(el, "button")).toEqual(["Reindex vault", "Refresh"]);
		expect(el.querySelector(".engram-warning")).toBeNull();
	});

	it("says which model serves the vault's languages when the embedder does not", () => {
		const el = createDiv();
		const acts = { startBackend: vi.fn(), reindexAll: vi.fn(), refresh: vi.fn() };
		const advice = "9 of 12 notes (75%) are in German: run `engram models pull multilingual`";
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

describe("format", () => {
	it("tiers and entities", () => {
		expect([0.8, 0.79, 0.4, 0.39].map(importanceTier)).toEqual(["structural", "potential", "potential", "contextual"]);
		expect(parseEntity("[[People/Bob#Intro|Bobby]]")).toEqual({ linktext: "People/Bob#Intro", display: "Bobby" });
		expect(parseEntity("Plain")).toEqual({ linktext: "Plain", display: "Plain" });
	});
});
