// @vitest-environment node
import { describe, expect, it } from "vitest";
import { EngramClient, type HttpRequest, type HttpResponse } from "../src/api/client";
import { decodeSearch } from "../src/api/decode";
import { EngramError, isHttpStatus } from "../src/api/errors";
import { checkReply, checkRequest, recordViolations } from "./contract";

const VAULT = "/v";

function disco(port: number, token: string): string {
	return JSON.stringify({
		name: "engram", version: "1", protocol: 2, url: `http://127.0.0.1:${port}`, port, token,
		pid: 1, startedAt: "", vault: VAULT, capabilities: [],
	});
}

const STATUS = {
	version: "1", vault: { path: VAULT, collection: "notes" }, documents: 3, chunks: 5, embedded: 1,
	indexing: { state: "idle", done: 0, total: 0, lastUpdate: null }, models: {},
	watcher: { enabled: true, queue: 0 }, sync: { configured: false, state: "off", pending: 0, lastSync: null },
	lastError: null,
};

/** A fact as the backend writes it: every property, nulls and empty lists included (the
 * document requires them all), with `over` replacing some. */
function wireFact(over: Record<string, unknown>): Record<string, unknown> {
	return {
		id: "f1", title: "X", text: "x", factType: "fact", timestamp: "2025-01-02T03:04:05+00:00",
		updatedAt: "2025-01-02T03:04:05+00:00", source: "obsidian", createdBy: "obsidian", scope: "default",
		tags: [], entities: [], importanceScore: 0.5, confidence: 1, lifecycleState: "active", supersededBy: null,
		supersedes: null, contradictsWith: [], convexId: null, vaultSyncedAt: null, lastEditedBy: "obsidian",
		path: "Engram/facts/x.md", accessCount: 0, lastAccess: null, syncState: "local", warnings: [],
		importanceTier: "potential", ...over,
	};
}

/**
 * A fake network: `servers` maps port → (token, handler); other ports refuse connections. Every
 * request is checked against the backend's OpenAPI document, and so is every reply unless
 * `offContract` (a test of how the client copes with a broken or older backend).
 */
function setup(
	file: { text: string | null },
	servers: Map<number, { token: string; reply?: (r: HttpRequest) => HttpResponse }>,
	opts: { offContract?: boolean } = {},
) {
	const sent: HttpRequest[] = [];
	const answer = (req: HttpRequest): HttpResponse => {
		const port = Number(new URL(req.url).port);
		const server = servers.get(port);
		if (!server) throw new Error("ECONNREFUSED");
		if (!req.url.endsWith("/v1/health") && req.headers.Authorization !== `Bearer ${server.token}`) {
			return { status: 401, text: '{"error":{"code":"unauthorized","message":"bad token"}}' };
		}
		return server.reply?.(req) ?? { status: 200, text: JSON.stringify(STATUS) };
	};
	const client = new EngramClient({
		vaultPath: VAULT,
		readDiscovery: async () => file.text,
		transport: async (req) => {
			sent.push(req);
			recordViolations(checkRequest(req.method, req.url, req.body));
			const res = answer(req);
			if (!opts.offContract) recordViolations(checkReply(req.method, req.url, res.status, res.text));
			return res;
		},
	});
	return { client, sent };
}

async function kind(p: Promise<unknown>): Promise<string> {
	try {
		await p;
		return "ok";
	} catch (err) {
		return err instanceof EngramError ? err.kind : `other: ${String(err)}`;
	}
}

describe("EngramClient", () => {
	it("sends the bearer token, but not to /v1/health", async () => {
		const { client, sent } = setup({ text: disco(1, "t1") }, new Map([[1, { token: "t1", reply: () => ({ status: 200, text: '{"ok":true,"name":"engram","version":"1","protocol":2}' }) }]]));
		await client.health();
		expect(sent[0]?.headers.Authorization).toBeUndefined();
		const { client: c2, sent: s2 } = setup({ text: disco(1, "t1") }, new Map([[1, { token: "t1" }]]));
		const status = await c2.status();
		expect(status.vault.collection).toBe("notes");
		expect(s2[0]?.headers.Authorization).toBe("Bearer t1");
	});

	it("is not-running without discovery.json", async () => {
		const { client, sent } = setup({ text: null }, new Map());
		expect(await kind(client.status())).toBe("not-running");
		expect(sent).toHaveLength(0);
	});

	it("re-reads discovery.json after a restart on a new port and retries once", async () => {
		const file = { text: disco(1, "t1") };
		const servers = new Map([[1, { token: "t1" }]]);
		const { client, sent } = setup(file, servers, { offContract: true });
		await client.status();
		servers.delete(1);
		servers.set(2, { token: "t2" });
		file.text = disco(2, "t2");
		await kind(client.noteMetadata("a.md")); // the fake answers status: only the route matters
		expect(sent.map((r) => r.url)).toEqual([
			"http://127.0.0.1:1/v1/status",
			"http://127.0.0.1:1/v1/notes/metadata?path=a.md",
			"http://127.0.0.1:2/v1/notes/metadata?path=a.md",
		]);
		expect(client.current?.port).toBe(2);
	});

	it("re-reads discovery.json when a call is refused with 401, and retries with the new token", async () => {
		const file = { text: disco(1, "t1") };
		const servers = new Map<number, { token: string; reply?: () => HttpResponse }>([[1, { token: "t1" }]]);
		const { client, sent } = setup(file, servers);
		await client.status();
		const facts = (): HttpResponse => ({ status: 200, text: '{"facts":[]}' });
		servers.set(1, { token: "t2", reply: facts }); // a restart on the same --port, or a rotation
		file.text = disco(1, "t2");
		expect(await kind(client.recentFacts())).toBe("ok");
		expect(sent.slice(1).map((r) => r.headers.Authorization)).toEqual(["Bearer t1", "Bearer t2"]);
		expect(client.current?.token).toBe("t2");
	});

	it("picks up a changed discovery.json at the next status poll, without a refused call", async () => {
		const file = { text: disco(1, "t1") };
		const servers = new Map([[1, { token: "t1" }]]);
		const { client, sent } = setup(file, servers);
		await client.status();
		servers.set(1, { token: "t2" });
		file.text = disco(1, "t2");
		expect(await kind(client.status())).toBe("ok");
		expect(sent.map((r) => r.headers.Authorization)).toEqual(["Bearer t1", "Bearer t2"]);
	});

	it("is not running at the next status poll once discovery.json is gone", async () => {
		const file: { text: string | null } = { text: disco(1, "t1") };
		const { client } = setup(file, new Map([[1, { token: "t1" }]]));
		await client.status();
		file.text = null; // the backend stopped cleanly
		expect(await kind(client.status())).toBe("not-running");
	});

	it("is unreachable when the port is dead and the file did not change", async () => {
		const { client, sent } = setup({ text: disco(1, "t1") }, new Map());
		expect(await kind(client.status())).toBe("unreachable");
		expect(sent).toHaveLength(1);
	});

	it("is unauthorized when the token is refused and the file has no other", async () => {
		const { client } = setup({ text: disco(1, "wrong") }, new Map([[1, { token: "t1" }]]));
		expect(await kind(client.status())).toBe("unauthorized");
	});

	it("maps error bodies to http errors with code and status", async () => {
		const { client } = setup(
			{ text: disco(1, "t") },
			new Map([[1, { token: "t", reply: () => ({ status: 404, text: '{"error":{"code":"not_found","message":"a.md is not indexed"}}' }) }]]),
		);
		try {
			await client.noteMetadata("a.md");
			expect.unreachable();
		} catch (err) {
			expect(isHttpStatus(err, 404)).toBe(true);
			expect((err as EngramError).code).toBe("not_found");
			expect((err as Error).message).toBe("a.md is not indexed");
		}
	});

	it("adds the backend's hint to the message", async () => {
		const body = '{"error":{"code":"not_found","message":"no indexed document matches \'Nope.md\'","hint":"did you mean: vault/Home.md"}}';
		const { client } = setup({ text: disco(1, "t") }, new Map([[1, { token: "t", reply: () => ({ status: 404, text: body }) }]]));
		const err = (await client.noteMetadata("Nope.md").catch((e: unknown) => e)) as EngramError;
		expect(err.hint).toBe("did you mean: vault/Home.md");
		expect(err.message).toBe("no indexed document matches 'Nope.md' (did you mean: vault/Home.md)");
	});

	it("reads the facts folder, importance tier and sync state the backend reports", async () => {
		const status = JSON.stringify({ ...STATUS, facts: { root: "Memory/Engram" } });
		const fact = JSON.stringify({
			fact: wireFact({ path: "Memory/Engram/facts/x.md", importanceScore: 0.4, importanceTier: "potential", syncState: "pending", warnings: ["daily note: busy"] }),
		});
		const { client } = setup(
			{ text: disco(1, "t") },
			new Map([[1, { token: "t", reply: (r) => ({ status: 200, text: r.url.endsWith("/v1/status") ? status : fact }) }]]),
		);
		expect((await client.status()).facts).toEqual({ root: "Memory/Engram" });
		const f = await client.getFact("f1");
		expect([f.importanceTier, f.syncState, f.warnings]).toEqual(["potential", "pending", ["daily note: busy"]]);
		const old = setup({ text: disco(1, "t") }, new Map([[1, { token: "t", reply: () => ({ status: 200, text: '{"vault":{"collection":"v"}}' }) }]]), { offContract: true });
		expect((await old.client.status()).facts).toBeNull();
	});

	it("never echoes a non-JSON error body", async () => {
		const { client } = setup({ text: disco(1, "t") }, new Map([[1, { token: "t", reply: () => ({ status: 502, text: "<html>proxy secret</html>" }) }]]), { offContract: true });
		await expect(client.status()).rejects.toThrow(/^HTTP 502$/);
	});

	it("reports a malformed reply as a protocol error", async () => {
		const { client } = setup({ text: disco(1, "t") }, new Map([[1, { token: "t", reply: () => ({ status: 200, text: "not json" }) }]]), { offContract: true });
		expect(await kind(client.status())).toBe("protocol");
		const { client: c2 } = setup({ text: disco(1, "t") }, new Map([[1, { token: "t", reply: () => ({ status: 200, text: '{"vault":{}}' }) }]]), { offContract: true });
		expect(await kind(c2.status())).toBe("protocol");
	});

	it("builds requests as the contract says", async () => {
		const result = {
			docid: "abc123", collection: "notes", path: "a.md", title: "A", score: 0.5, snippet: "x", highlights: [[0, 1]], line: 3,
			page: null, context: null, factType: null, body: null, passages: [], explain: null, spelling: null, notice: null,
			uri: "engram://notes/a.md",
		};
		const fact = wireFact({});
		const replies: Record<string, unknown> = {
			"POST /v1/search": { results: [result] },
			"POST /v1/query": { results: [], stages: { keyword: "on" }, notices: ["keyword search only: no embeddings yet"], expansions: [] },
			"GET /v1/notes/metadata": {
				path: "a b/é.md", collection: "notes", docid: "abc123", title: "é", frontmatter: {}, fact: null,
				backlinks: [{ path: "b.md", title: "B", line: 2, context: "see [[é]]" }], related: [],
				coverage: { indexed: true, indexedAt: null, chunks: 1, embedded: false },
			},
			"GET /v1/facts": { facts: [] },
			"POST /v1/facts": { fact },
			"PATCH /v1/facts/f%201": { fact },
			"POST /v1/facts/from-note": { fact },
			"POST /v1/index": { job: { id: "j", state: "queued" } },
		};
		const status: Record<string, number> = { "POST /v1/facts": 201, "POST /v1/facts/from-note": 201, "POST /v1/index": 202, "POST /v1/active-note": 204 };
		const { client, sent } = setup(
			{ text: disco(1, "t") },
			new Map([[1, {
				token: "t",
				reply: (r) => {
					const at = `${r.method} ${new URL(r.url).pathname}`;
					return { status: status[at] ?? 200, text: at in replies ? JSON.stringify(replies[at]) : "" };
				},
			}]]),
		);
		const q = await client.search("search", { q: "x", n: 20, collections: ["notes"] });
		expect(q.results[0]?.line).toBe(3);
		expect(q.results[0]?.factType).toBeNull();
		expect(q.notices).toEqual([]);
		expect((await client.search("query", { q: "x", n: null })).notices).toEqual(["keyword search only: no embeddings yet"]);
		await client.noteMetadata("a b/é.md");
		await client.recentFacts(20);
		await client.recentFacts(5, "decision");
		const made = await client.createFact({ text: "x", type: "decision", tags: ["t"] });
		expect(made.syncState).toBe("local");
		await client.updateFact("f 1", { importance: 0.9, lifecycleState: "dormant" });
		await client.factFromNote("a.md", "sel");
		await client.index({ paths: ["a.md"] });
		await client.index();
		await client.activeNote({ path: "a.md", selection: "", cursorLine: 1 });
		await client.activeNote(null);
		expect(sent.map((r) => `${r.method} ${r.url.replace("http://127.0.0.1:1", "")}`)).toEqual([
			"POST /v1/search",
			"POST /v1/query",
			"GET /v1/notes/metadata?path=a+b%2F%C3%A9.md",
			"GET /v1/facts?limit=20",
			"GET /v1/facts?limit=5&type=decision",
			"POST /v1/facts",
			"PATCH /v1/facts/f%201",
			"POST /v1/facts/from-note",
			"POST /v1/index",
			"POST /v1/index",
			"POST /v1/active-note",
			"POST /v1/active-note",
		]);
		const body = (i: number): unknown => JSON.parse(sent[i]?.body ?? "");
		expect(body(0)).toEqual({ q: "x", n: 20, collections: ["notes"] });
		expect(body(1)).toEqual({ q: "x", n: null });
		expect(body(5)).toEqual({ text: "x", type: "decision", tags: ["t"], source: "obsidian" });
		expect(body(7)).toEqual({ path: "a.md", selection: "sel" });
		expect(sent[9]?.body).toBeUndefined();
		expect(body(11)).toEqual({ path: null });
		expect(sent[0]?.headers["Content-Type"]).toBe("application/json");
	});

	it("lets the contract check catch a request the backend would refuse", () => {
		// the check itself, so a silent pass above means something
		expect(checkRequest("GET", "http://127.0.0.1:1/v1/facts?limit=20&sort=recent", undefined)).toEqual([
			"GET /v1/facts: unknown query parameter sort",
		]);
		expect(checkRequest("GET", "http://127.0.0.1:1/v1/facts?limit=5&limit=6", undefined)).toEqual(["GET /v1/facts: query parameter limit given 2 times"]);
		// a list parameter is the parameter repeated, each value checked
		expect(checkRequest("GET", "http://127.0.0.1:1/v1/tags?collections=a&collections=b&sort=count", undefined)).toEqual([]);
		expect(checkRequest("GET", `http://127.0.0.1:1/v1/tags?collections=a&collections=${"x".repeat(129)}`, undefined)[0]).toMatch(/collections=.*\/1 must NOT have more than 128 characters/);
		expect(checkRequest("POST", "http://127.0.0.1:1/v1/search", '{"q":"x","mode":"search"}')[0]).toMatch(/must NOT have additional properties \(mode\)/);
		expect(checkReply("POST", "http://127.0.0.1:1/v1/search", 200, '{"results":[],"notices":[]}')[0]).toMatch(/notices/);
	});
});

describe("decodeSearch", () => {
	it("lists a keyword search's notice as the query's notices are listed", () => {
		const notice = "b* is in 100,000 notes of 100,000: ranked within the 5,000 newest notes only";
		expect(decodeSearch({ results: [{ path: "a.md", notice }, { path: "b.md", notice }] }).notices).toEqual([notice]);
		expect(decodeSearch({ results: [{ path: "a.md", notice: null }] }).notices).toEqual([]);
		expect(decodeSearch({ results: [] }).notices).toEqual([]);
	});
});
