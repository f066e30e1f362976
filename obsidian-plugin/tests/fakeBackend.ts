/**
 * A small in-memory implementation of the Engram HTTP contract (protocol 2) for the unit tests.
 * Keyword matching only; it exists to exercise the plugin fast. The end-to-end test runs the
 * real `engram serve` instead (e2e/run.mjs).
 *
 * Every request it receives and every reply it sends is checked against the backend's OpenAPI
 * document (tests/contract.ts): a request off the contract is refused with 400 as the real
 * backend would, and any problem fails the running test (tests/contractSetup.ts).
 */
import { checkReply, checkRequest, recordViolations } from "./contract";
import type { HostRequest, HostResponse } from "./shim/host";

export interface NoteStore {
	list(): Promise<string[]>;
	read(path: string): Promise<string>;
	write(path: string, text: string): Promise<void>;
}

/** A fact as the backend's JSON has it: every property, always. */
interface FactRecord {
	id: string;
	title: string;
	text: string;
	factType: string;
	timestamp: string;
	updatedAt: string;
	source: string;
	createdBy: string;
	scope: string;
	tags: string[];
	entities: string[];
	importanceScore: number;
	confidence: number;
	lifecycleState: string;
	supersededBy: string | null;
	supersedes: string | null;
	contradictsWith: string[];
	convexId: string | null;
	vaultSyncedAt: string | null;
	lastEditedBy: string;
	path: string;
	accessCount: number;
	lastAccess: string | null;
	syncState: "local";
	warnings: string[];
	importanceTier: string;
}

function tier(importance: number): string {
	return importance >= 0.8 ? "structural" : importance >= 0.4 ? "potential" : "contextual";
}

const COLLECTION = "vault";

function json(status: number, body: unknown): HostResponse {
	return { status, text: JSON.stringify(body), headers: { "content-type": "application/json" } };
}

function error(status: number, code: string, message: string): HostResponse {
	return json(status, { error: { code, message } });
}

function titleOf(path: string, text: string): string {
	const m = /^#\s+(.+)$/m.exec(text);
	return m?.[1]?.trim() ?? (path.split("/").pop() ?? path).replace(/\.md$/, "");
}

function slug(s: string): string {
	return s.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "").slice(0, 40) || "fact";
}

export class FakeEngram {
	token = "test-token";
	facts: FactRecord[] = [];
	indexRequests: unknown[] = [];
	activeNotes: unknown[] = [];
	/** Search requests (`POST /v1/search`, `/v1/vsearch`, `/v1/query`), in order. */
	queries: Array<{ mode: string; body: Record<string, unknown> }> = [];
	/** Reported as `facts.root` in the status; facts are written below it. */
	factsRoot = "Engram";
	requests: Array<{ method: string; path: string }> = [];
	/** Artificial latency per request path prefix, in ms (to test stale replies). */
	delays = new Map<string, number>();
	private nextId = 1;

	constructor(
		private readonly notes: NoteStore,
		readonly vaultPath: string,
		private readonly now: () => Date = () => new Date(),
	) {}

	async handle(req: HostRequest): Promise<HostResponse> {
		const url = new URL(req.url);
		const method = (req.method ?? "GET").toUpperCase();
		this.requests.push({ method, path: url.pathname + url.search });
		for (const [prefix, ms] of this.delays) {
			if (url.pathname.startsWith(prefix)) await new Promise((r) => setTimeout(r, ms));
		}
		const body = typeof req.body === "string" ? req.body : undefined;
		const refused = checkRequest(method, req.url, body);
		recordViolations(refused);
		const res = refused.length ? error(400, "bad_request", refused.join("; ")) : await this.answer(method, url, req, body);
		recordViolations(checkReply(method, req.url, res.status, res.text));
		return res;
	}

	private async answer(method: string, url: URL, req: HostRequest, text: string | undefined): Promise<HostResponse> {
		if (url.pathname === "/v1/health") {
			return json(200, { ok: true, name: "engram", version: "0.1.0-fake", protocol: 2 });
		}
		const auth = req.headers?.Authorization ?? req.headers?.authorization;
		if (auth !== `Bearer ${this.token}`) return error(401, "unauthorized", "Missing or wrong bearer token");
		let body: Record<string, unknown> = {};
		if (text !== undefined && text !== "") {
			try {
				body = JSON.parse(text) as Record<string, unknown>;
			} catch {
				return error(400, "invalid_json", "Body is not JSON");
			}
		}
		try {
			return await this.route(method, url, body);
		} catch (err) {
			return error(500, "internal", (err as Error).message);
		}
	}

	private async route(method: string, url: URL, body: Record<string, unknown>): Promise<HostResponse> {
		const p = url.pathname;
		if (method === "GET" && p === "/v1/status") return json(200, await this.status());
		const search = /^\/v1\/(search|vsearch|query)$/.exec(p);
		if (method === "POST" && search) {
			const mode = search[1] ?? "";
			this.queries.push({ mode, body });
			// Like the real backend: every collection unless `collections` narrows it.
			const cols = Array.isArray(body.collections) ? body.collections : [COLLECTION];
			const results = cols.includes(COLLECTION) ? await this.search(String(body.q ?? ""), typeof body.n === "number" ? body.n : 10) : [];
			if (mode !== "query") return json(200, { results });
			const stages = { keyword: "on", vector: "off (no embedding model)", expansion: "off (no model)", rerank: "off (no model)" };
			return json(200, { results, stages, notices: ["Deep search: the stand-in matches keywords only"], expansions: [] });
		}
		if (method === "GET" && p === "/v1/facts") {
			const limit = Number(url.searchParams.get("limit") ?? 20);
			const type = url.searchParams.get("type");
			const live = this.facts.filter((f) => f.lifecycleState !== "archived" && f.lifecycleState !== "pruned" && (!type || f.factType === type));
			return json(200, { facts: [...live].reverse().slice(0, limit) });
		}
		if (method === "POST" && p === "/v1/facts") return json(201, { fact: await this.addFact(body, null) });
		if (method === "POST" && p === "/v1/facts/from-note") return this.fromNote(body);
		const factMatch = /^\/v1\/facts\/([^/]+)$/.exec(p);
		if (factMatch) {
			const fact = this.facts.find((f) => f.id === decodeURIComponent(factMatch[1] ?? ""));
			if (!fact) return error(404, "not_found", "No such fact");
			if (method === "GET") return json(200, { fact });
			if (method === "DELETE") {
				fact.lifecycleState = url.searchParams.get("prune") === "true" ? "pruned" : "archived";
				return json(200, { fact });
			}
			if (method === "PATCH") return this.patchFact(fact, body);
		}
		if (method === "GET" && p === "/v1/notes/metadata") return this.metadata(url.searchParams.get("path") ?? "");
		if (method === "POST" && p === "/v1/index") {
			this.indexRequests.push(Object.keys(body).length ? body : null);
			return json(202, { job: { id: `job-${this.indexRequests.length}`, state: "queued" } });
		}
		if (method === "POST" && p === "/v1/active-note") {
			this.activeNotes.push(body);
			return { status: 204, text: "", headers: {} };
		}
		return error(404, "not_found", `No route ${method} ${p}`);
	}

	private async status(): Promise<unknown> {
		const notes = await this.notes.list();
		return {
			version: "0.1.0-fake",
			vault: { path: this.vaultPath, collection: COLLECTION },
			facts: { root: this.factsRoot },
			documents: notes.length,
			chunks: notes.length * 2,
			embedded: 0,
			indexing: { state: "idle", done: notes.length, total: notes.length, lastUpdate: this.now().toISOString() },
			models: { embed: { id: "none", state: "missing" }, rerank: { id: "none", state: "missing" }, generate: { id: "none", state: "missing" } },
			watcher: { enabled: false, queue: 0 },
			sync: { configured: false, state: "off", pending: 0, lastSync: null },
			lastError: null,
			languageAdvice: null,
		};
	}

	private async search(q: string, n: number): Promise<unknown[]> {
		const terms = q.toLowerCase().split(/\s+/).filter(Boolean);
		const results = [];
		for (const path of await this.notes.list()) {
			const text = await this.notes.read(path);
			const lines = text.split("\n");
			let hits = 0;
			let best = -1;
			lines.forEach((line, i) => {
				const lower = line.toLowerCase();
				const n = terms.filter((t) => lower.includes(t)).length;
				if (n > 0 && best < 0) best = i;
				hits += n;
			});
			if (hits === 0 || best < 0) continue;
			const snippet = lines[best] ?? "";
			const chars = Array.from(snippet.toLowerCase());
			const lowerSnippet = chars.join("");
			const highlights: Array<[number, number]> = [];
			for (const t of terms) {
				let from = 0;
				for (;;) {
					const at = lowerSnippet.indexOf(t, from);
					if (at < 0) break;
					const start = Array.from(lowerSnippet.slice(0, at)).length;
					highlights.push([start, start + Array.from(t).length]);
					from = at + t.length;
				}
			}
			const fm = /^factType:\s*(\S+)/m.exec(text);
			results.push({
				docid: slug(path).slice(0, 6),
				collection: COLLECTION,
				path,
				title: titleOf(path, text),
				score: Math.min(1, hits / (terms.length * 2)),
				snippet,
				line: best + 1,
				highlights,
				context: null,
				factType: fm?.[1] ?? null,
				body: null,
				passages: [],
				explain: null,
				page: null,
				spelling: null,
				notice: null,
				uri: `engram://${COLLECTION}/${path}`,
			});
		}
		results.sort((a, b) => b.score - a.score || a.path.localeCompare(b.path));
		return results.slice(0, n);
	}

	/** Store a fact from a `POST /v1/facts` body (`cites`: the note a from-note fact came from). */
	private async addFact(body: Record<string, unknown>, cites: string | null): Promise<FactRecord> {
		const text = String(body.text ?? "");
		const id = `f${String(this.nextId++).padStart(7, "0")}`;
		const title = typeof body.title === "string" ? body.title : text.split("\n")[0]?.replace(/^#+\s*/, "").slice(0, 60) || "Fact";
		const path = `${this.factsRoot}/facts/${slug(title)}-${id.slice(0, 8)}.md`;
		const at = this.now().toISOString();
		const importance = typeof body.importance === "number" ? body.importance : 0.5;
		const strings = (v: unknown): string[] => (Array.isArray(v) ? v.map(String) : []);
		const fact: FactRecord = {
			id, title, text, factType: typeof body.type === "string" ? body.type : "fact", timestamp: at, updatedAt: at,
			source: typeof body.source === "string" ? body.source : "engram", createdBy: "obsidian", scope: "default",
			tags: strings(body.tags), entities: cites ? [`[[${cites.replace(/\.md$/, "")}]]`] : strings(body.entities),
			importanceScore: importance, confidence: typeof body.confidence === "number" ? body.confidence : 0.9,
			lifecycleState: "active", supersededBy: null, supersedes: null, contradictsWith: [], convexId: null,
			vaultSyncedAt: null, lastEditedBy: "obsidian", path, accessCount: 0, lastAccess: null, syncState: "local",
			warnings: [], importanceTier: tier(importance),
		};
		await this.notes.write(path, `---\nid: ${id}\nfactType: ${fact.factType}\n---\n# ${title}\n\n${text}\n`);
		this.facts.push(fact);
		return fact;
	}

	/** `PATCH /v1/facts/{id}`: the request's names are the facade's (`type`, `importance`). */
	private patchFact(fact: FactRecord, body: Record<string, unknown>): HostResponse {
		const changes = Object.entries(body).filter(([, v]) => v !== null && v !== undefined);
		if (changes.length === 0) return error(400, "bad_request", "nothing to change");
		for (const [k, v] of changes) {
			if (k === "type") fact.factType = String(v);
			else if (k === "importance") {
				fact.importanceScore = Number(v);
				fact.importanceTier = tier(fact.importanceScore);
			} else Object.assign(fact, { [k]: v });
		}
		fact.updatedAt = this.now().toISOString();
		return json(200, { fact });
	}

	private async fromNote(body: Record<string, unknown>): Promise<HostResponse> {
		const path = String(body.path ?? "");
		if (!(await this.notes.list()).includes(path)) return error(404, "not_found", `No note ${path}`);
		const selection = typeof body.selection === "string" && body.selection !== "" ? body.selection : null;
		const text = selection ?? (await this.notes.read(path));
		return json(201, { fact: await this.addFact({ text, source: "obsidian" }, path) });
	}

	private async metadata(path: string): Promise<HostResponse> {
		const all = await this.notes.list();
		if (!all.includes(path)) return error(404, "not_found", `${path} is not indexed`);
		const text = await this.notes.read(path);
		const base = (path.split("/").pop() ?? path).replace(/\.md$/, "");
		const backlinks: Array<{ path: string; title: string; line: number; context: string }> = [];
		for (const other of all) {
			if (other === path) continue;
			const lines = (await this.notes.read(other)).split("\n");
			const i = lines.findIndex((l) => l.includes(`[[${base}]]`) || l.includes(`[[${base}|`));
			if (i >= 0) backlinks.push({ path: other, title: titleOf(other, lines.join("\n")), line: i + 1, context: lines[i] ?? "" });
		}
		const fact = this.facts.find((f) => f.path === path) ?? null;
		const related = all
			.filter((o) => o !== path && !backlinks.some((b) => b.path === o))
			.slice(0, 3)
			.map((o, i) => ({ path: o, title: titleOf(o, ""), score: 0.5 - i * 0.1 }));
		return json(200, {
			path,
			collection: COLLECTION,
			docid: slug(path).slice(0, 6),
			title: titleOf(path, text),
			frontmatter: {},
			fact,
			backlinks,
			related,
			coverage: { indexed: true, indexedAt: this.now().toISOString(), chunks: 2, embedded: false },
		});
	}

	/** The discovery.json content for a server at `url`. */
	discovery(url: string, pid: number): Record<string, unknown> {
		const port = Number(new URL(url).port);
		return {
			name: "engram", version: "0.1.0-fake", protocol: 2, url, port, token: this.token, pid,
			startedAt: this.now().toISOString(), vault: this.vaultPath,
			capabilities: ["search", "query", "facts", "graph", "index", "sync"],
		};
	}
}
