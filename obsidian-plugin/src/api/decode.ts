/**
 * Decoders from untrusted JSON to the wire types. They check what the UI relies on and fill
 * harmless defaults for optional parts, so a newer backend with extra fields still works and a
 * broken reply becomes one clear error instead of an exception deep inside a view.
 */
import { EngramError } from "./errors";
import type {
	Backlink,
	Discovery,
	Fact,
	Health,
	IndexJob,
	ModelInfo,
	NoteMetadata,
	RelatedNote,
	SearchResponse,
	SearchResult,
	Status,
	SyncState,
} from "./types";

type Json = Record<string, unknown>;

function fail(what: string): never {
	throw new EngramError("protocol", `Unexpected reply from the backend: ${what}`);
}

export function obj(v: unknown, what: string): Json {
	if (typeof v !== "object" || v === null || Array.isArray(v)) fail(`${what} is not an object`);
	return v as Json;
}

export function str(o: Json, key: string, what: string): string {
	const v = o[key];
	if (typeof v !== "string") fail(`${what}.${key} is not a string`);
	return v;
}

function optStr(o: Json, key: string, fallback: string | null = null): string | null {
	const v = o[key];
	return typeof v === "string" ? v : fallback;
}

export function num(o: Json, key: string, what: string): number {
	const v = o[key];
	if (typeof v !== "number" || !Number.isFinite(v)) fail(`${what}.${key} is not a number`);
	return v;
}

function optNum(o: Json, key: string, fallback = 0): number {
	const v = o[key];
	return typeof v === "number" && Number.isFinite(v) ? v : fallback;
}

function list(o: Json, key: string, what: string): unknown[] {
	const v = o[key];
	if (v === undefined || v === null) return [];
	if (!Array.isArray(v)) fail(`${what}.${key} is not a list`);
	return v;
}

function strings(o: Json, key: string, what: string): string[] {
	return list(o, key, what).filter((x): x is string => typeof x === "string");
}

export function decodeHealth(v: unknown): Health {
	const o = obj(v, "health");
	return {
		ok: o.ok === true,
		name: str(o, "name", "health"),
		version: optStr(o, "version", "") ?? "",
		protocol: num(o, "protocol", "health"),
	};
}

export function decodeDiscoveryShape(v: unknown): Discovery {
	const o = obj(v, "discovery");
	return {
		name: str(o, "name", "discovery"),
		version: optStr(o, "version", "") ?? "",
		protocol: num(o, "protocol", "discovery"),
		url: str(o, "url", "discovery"),
		port: optNum(o, "port"),
		token: str(o, "token", "discovery"),
		pid: optNum(o, "pid"),
		startedAt: optStr(o, "startedAt", "") ?? "",
		vault: str(o, "vault", "discovery"),
		capabilities: strings(o, "capabilities", "discovery"),
	};
}

function model(v: unknown): ModelInfo | undefined {
	if (typeof v !== "object" || v === null) return undefined;
	const o = v as Json;
	const state = o.state === "loaded" || o.state === "available" ? o.state : "missing";
	return { id: optStr(o, "id", "") ?? "", state };
}

export function decodeStatus(v: unknown): Status {
	const o = obj(v, "status");
	const vault = obj(o.vault, "status.vault");
	const ix = obj(o.indexing ?? {}, "status.indexing");
	const models = obj(o.models ?? {}, "status.models");
	const watcher = obj(o.watcher ?? {}, "status.watcher");
	const sync = obj(o.sync ?? {}, "status.sync");
	const err = o.lastError;
	const syncState = sync.state;
	const facts = typeof o.facts === "object" && o.facts !== null ? (o.facts as Json) : null;
	const factsRoot = facts ? optStr(facts, "root") : null;
	return {
		version: optStr(o, "version", "") ?? "",
		vault: { path: optStr(vault, "path", "") ?? "", collection: str(vault, "collection", "status.vault") },
		facts: factsRoot === null ? null : { root: factsRoot },
		documents: optNum(o, "documents"),
		chunks: optNum(o, "chunks"),
		embedded: optNum(o, "embedded"),
		indexing: {
			state: ix.state === "indexing" ? "indexing" : "idle",
			done: optNum(ix, "done"),
			total: optNum(ix, "total"),
			lastUpdate: optStr(ix, "lastUpdate"),
		},
		models: { embed: model(models.embed), rerank: model(models.rerank), generate: model(models.generate) },
		watcher: { enabled: watcher.enabled === true, queue: optNum(watcher, "queue") },
		sync: {
			configured: sync.configured === true,
			state:
				syncState === "idle" || syncState === "syncing" || syncState === "error" ? syncState : "off",
			pending: optNum(sync, "pending"),
			lastSync: optStr(sync, "lastSync"),
		},
		lastError:
			typeof err === "object" && err !== null
				? { message: optStr(err as Json, "message", "") ?? "", at: optStr(err as Json, "at", "") ?? "" }
				: null,
		languageAdvice: optStr(o, "languageAdvice"),
		queryStages: stringMap(o.queryStages),
	};
}

function stringMap(v: unknown): Record<string, string> {
	if (typeof v !== "object" || v === null || Array.isArray(v)) return {};
	const out: Record<string, string> = {};
	for (const [k, x] of Object.entries(v as Json)) if (typeof x === "string") out[k] = x;
	return out;
}

function highlights(v: unknown): Array<[number, number]> {
	if (!Array.isArray(v)) return [];
	const out: Array<[number, number]> = [];
	for (const pair of v) {
		if (Array.isArray(pair) && typeof pair[0] === "number" && typeof pair[1] === "number") {
			out.push([pair[0], pair[1]]);
		}
	}
	return out;
}

function result(v: unknown): SearchResult {
	const o = obj(v, "result");
	const path = str(o, "path", "result");
	return {
		docid: optStr(o, "docid", "") ?? "",
		collection: optStr(o, "collection", "") ?? "",
		path,
		title: optStr(o, "title", path) ?? path,
		score: optNum(o, "score"),
		snippet: optStr(o, "snippet", "") ?? "",
		highlights: highlights(o.highlights),
		line: optNum(o, "line", 1),
		page: typeof o.page === "number" ? o.page : null,
		context: optStr(o, "context"),
		factType: optStr(o, "factType"),
		explain: typeof o.explain === "object" && o.explain !== null && !Array.isArray(o.explain) ? (o.explain as Json) : null,
	};
}

/** The reply of `POST /v1/search` and `/v1/vsearch`: `{"results"}`; a keyword search that
 * bounded a prefix or phrase most notes hold says so in each result's `notice`. */
export function decodeSearch(v: unknown): SearchResponse {
	const o = obj(v, "search reply");
	const raw = list(o, "results", "search reply");
	const first = raw.length ? obj(raw[0], "result") : {};
	const notice = optStr(first, "notice");
	return { results: raw.map(result), notices: notice ? [notice] : [] };
}

/** The reply of `POST /v1/query` (hybrid): results plus the notices saying how it degraded. */
export function decodeQueryRun(v: unknown): SearchResponse {
	const o = obj(v, "query reply");
	return {
		results: list(o, "results", "query reply").map(result),
		notices: strings(o, "notices", "query reply"),
	};
}

function syncState(v: unknown): SyncState {
	return v === "local" || v === "synced" || v === "pending" || v === "conflict" ? v : "off";
}

function decodeFact(v: unknown): Fact {
	const o = obj(v, "fact");
	const path = str(o, "path", "fact");
	return {
		id: str(o, "id", "fact"),
		path,
		title: optStr(o, "title", path) ?? path,
		text: optStr(o, "text", "") ?? "",
		factType: optStr(o, "factType", "fact") ?? "fact",
		importanceScore: optNum(o, "importanceScore"),
		importanceTier: optStr(o, "importanceTier", "") ?? "",
		confidence: optNum(o, "confidence"),
		lifecycleState: optStr(o, "lifecycleState", "active") ?? "active",
		tags: strings(o, "tags", "fact"),
		entities: strings(o, "entities", "fact"),
		supersededBy: optStr(o, "supersededBy"),
		contradictsWith: strings(o, "contradictsWith", "fact"),
		timestamp: optStr(o, "timestamp", "") ?? "",
		updatedAt: optStr(o, "updatedAt", "") ?? "",
		syncState: syncState(o.syncState),
		warnings: strings(o, "warnings", "fact"),
	};
}

export function decodeFactReply(v: unknown): Fact {
	return decodeFact(obj(v, "fact reply").fact);
}

export function decodeFacts(v: unknown): Fact[] {
	const o = obj(v, "facts reply");
	return list(o, "facts", "facts reply").map(decodeFact);
}

/** A backlink, or null for one without a path (the schema allows it; there is nothing to open). */
function backlink(v: unknown): Backlink | null {
	const o = obj(v, "backlink");
	const path = optStr(o, "path");
	if (path === null) return null;
	return {
		path,
		title: optStr(o, "title", path) ?? path,
		line: optNum(o, "line", 1),
		context: optStr(o, "context", "") ?? "",
	};
}

function related(v: unknown): RelatedNote {
	const o = obj(v, "related note");
	const path = str(o, "path", "related note");
	return { path, title: optStr(o, "title", path) ?? path, score: optNum(o, "score") };
}

export function decodeMetadata(v: unknown): NoteMetadata {
	const o = obj(v, "note metadata");
	const cov = obj(o.coverage ?? {}, "note metadata.coverage");
	const fm = o.frontmatter;
	const path = str(o, "path", "note metadata");
	return {
		path,
		title: optStr(o, "title", path) ?? path,
		frontmatter: typeof fm === "object" && fm !== null && !Array.isArray(fm) ? (fm as Json) : {},
		fact: o.fact === null || o.fact === undefined ? null : decodeFact(o.fact),
		backlinks: list(o, "backlinks", "note metadata")
			.map(backlink)
			.filter((b): b is Backlink => b !== null),
		related: list(o, "related", "note metadata").map(related),
		coverage: {
			indexed: cov.indexed === true,
			indexedAt: optStr(cov, "indexedAt"),
			chunks: optNum(cov, "chunks"),
			embedded: cov.embedded === true,
		},
	};
}

export function decodeJob(v: unknown): IndexJob {
	const job = obj(obj(v, "index reply").job, "index reply.job");
	return { id: optStr(job, "id", "") ?? "", state: optStr(job, "state", "") ?? "" };
}
