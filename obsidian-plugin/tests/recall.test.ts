// @vitest-environment node
import { describe, expect, it } from "vitest";
import type { Fact, SearchRequest, SearchResponse, SearchResult } from "../src/api/types";
import { DEEP_DEBOUNCE_MS, itemFromResult, parseRecallQuery, QUICK_DEBOUNCE_MS, RecallController, type RecallMode } from "../src/core/recall";
import { FakeTimers } from "./fakeTimers";

function result(path: string, collection = "notes"): SearchResult {
	return { docid: "abc123", collection, path, title: path, score: 0.5, snippet: "s", highlights: [], line: 4, page: null, context: null, factType: null };
}

function fact(id: string): Fact {
	return {
		id, path: `Engram/facts/${id}.md`, title: id, text: "t", factType: "decision", importanceScore: 0.9, importanceTier: "structural", confidence: 1,
		lifecycleState: "active", tags: [], entities: [], supersededBy: null, contradictsWith: [], timestamp: "", updatedAt: "",
		syncState: "local", warnings: [],
	};
}

/** A backend whose replies are released by hand, in any order. */
class ManualBackend {
	/** Each request with the route it went to (`mode`). */
	queries: Array<SearchRequest & { mode: RecallMode }> = [];
	factCalls = 0;
	private pending: Array<{ req: SearchRequest; resolve: (r: SearchResponse) => void; reject: (e: Error) => void }> = [];
	search(mode: RecallMode, req: SearchRequest): Promise<SearchResponse> {
		this.queries.push({ ...req, mode });
		return new Promise((resolve, reject) => this.pending.push({ req, resolve, reject }));
	}
	recentFacts(): Promise<Fact[]> {
		this.factCalls++;
		return Promise.resolve([fact("f1"), fact("f2")]);
	}
	reply(q: string, paths: string[]): void {
		const p = this.pending.find((x) => x.req.q === q);
		p?.resolve({ results: paths.map((x) => result(x)), notices: [] });
	}
	fail(q: string): void {
		this.pending.find((x) => x.req.q === q)?.reject(new Error("backend down"));
	}
}

const flush = () => new Promise((r) => setTimeout(r, 0));

function setup(mode: "search" | "query" = "search") {
	const timers = new FakeTimers();
	const backend = new ManualBackend();
	const c = new RecallController(backend, timers, () => mode, () => "notes");
	return { timers, backend, c };
}

describe("parseRecallQuery", () => {
	it.each([
		["foo", "search", "foo", "search"],
		["?foo", "search", "foo", "query"],
		["  ? foo bar ", "search", "foo bar", "query"],
		["?foo", "query", "foo", "search"],
		["foo", "query", "foo", "query"],
		["", "search", "", "search"],
		["?", "search", "", "query"],
	] as const)("%s with default %s", (raw, def, text, mode) => {
		expect(parseRecallQuery(raw, def)).toEqual({ text, mode });
	});
});

describe("RecallController", () => {
	it("sends one request per typing pause", async () => {
		const { timers, backend, c } = setup();
		const promises = ["a", "al", "alp", "alph", "alpha"].map((q) => {
			timers.advance(50);
			return c.request(q);
		});
		timers.advance(QUICK_DEBOUNCE_MS - 1);
		expect(backend.queries).toHaveLength(0);
		timers.advance(1);
		expect(backend.queries.map((q) => q.q)).toEqual(["alpha"]);
		// Only this vault's collection: the backend searches all of them unless told.
		expect(backend.queries[0]).toEqual({ q: "alpha", mode: "search", n: 20, collections: ["notes"] });
		backend.reply("alpha", ["a.md"]);
		const outcomes = await Promise.all(promises);
		// Every waiting keystroke gets the newest results, none hangs.
		for (const o of outcomes) expect(o.items.map((i) => i.path)).toEqual(["a.md"]);
	});

	it("drops a slow reply that arrives after a newer one", async () => {
		const { timers, backend, c } = setup();
		const first = c.request("alpha");
		timers.advance(QUICK_DEBOUNCE_MS);
		const second = c.request("beta");
		timers.advance(QUICK_DEBOUNCE_MS);
		expect(backend.queries.map((q) => q.q)).toEqual(["alpha", "beta"]);
		backend.reply("beta", ["b.md"]);
		await flush();
		backend.reply("alpha", ["a.md"]);
		await flush();
		expect((await first).items.map((i) => i.path)).toEqual(["b.md"]);
		expect((await second).items.map((i) => i.path)).toEqual(["b.md"]);
		expect(c.dropped).toBe(1);
	});

	it("waits longer before a deep query", () => {
		const { timers, backend, c } = setup();
		void c.request("?meaning of life");
		timers.advance(DEEP_DEBOUNCE_MS - 1);
		expect(backend.queries).toHaveLength(0);
		timers.advance(1);
		expect(backend.queries[0]?.mode).toBe("query");
	});

	it("shows recent facts at once for an empty query", async () => {
		const { backend, c } = setup();
		const o = await c.request("  ");
		expect(backend.factCalls).toBe(1);
		expect(o.items.map((i) => i.title)).toEqual(["f1", "f2"]);
		expect(o.items[0]?.factType).toBe("decision");
		expect(o.items[0]?.score).toBeNull();
		expect(o.items[0]?.vaultPath).toBe("Engram/facts/f1.md");
	});

	it("turns a failure into an outcome with an error", async () => {
		const { timers, backend, c } = setup();
		const p = c.request("x");
		timers.advance(QUICK_DEBOUNCE_MS);
		backend.fail("x");
		const o = await p;
		expect(o.items).toEqual([]);
		expect(o.error?.message).toBe("backend down");
	});

	it("settles waiters and ignores replies after dispose", async () => {
		const { timers, backend, c } = setup();
		const p = c.request("x");
		c.dispose();
		timers.advance(1000);
		expect(backend.queries).toHaveLength(0);
		expect((await p).items).toEqual([]);
		expect(timers.pending).toBe(0);
	});

	it("searches every collection while the vault's collection is not known yet", async () => {
		const timers = new FakeTimers();
		const backend = new ManualBackend();
		const c = new RecallController(backend, timers, () => "search", () => null);
		void c.request("x");
		timers.advance(QUICK_DEBOUNCE_MS);
		expect(backend.queries).toEqual([{ q: "x", mode: "search", n: 20 }]);
		await flush();
	});

	it("marks results outside the vault's collection as not openable", () => {
		expect(itemFromResult(result("a.md", "notes"), "notes").vaultPath).toBe("a.md");
		expect(itemFromResult(result("a.md", "work"), "notes").vaultPath).toBeNull();
		expect(itemFromResult(result("a.md", "notes"), null).vaultPath).toBeNull();
		expect(itemFromResult({ ...result("a.md"), line: 0 }, "notes").line).toBe(1);
	});
});
