/**
 * Wire types of the Engram HTTP API (protocol 2). Shapes mirror docs/http-api.md and the OpenAPI
 * document the backend generates (backend/engram/server/openapi.json); the tests check the
 * client's requests and the decoders against that document.
 */

export const PROTOCOL = 2;

/** Keyword (BM25), vector and hybrid search: one route each, `POST /v1/<mode>`. */
export type SearchMode = "search" | "vsearch" | "query";

export interface Discovery {
	name: string;
	version: string;
	protocol: number;
	url: string;
	port: number;
	token: string;
	pid: number;
	startedAt: string;
	vault: string;
	capabilities: string[];
}

export interface Health {
	ok: boolean;
	name: string;
	version: string;
	protocol: number;
}

export type ModelState = "loaded" | "available" | "missing";

export interface ModelInfo {
	id: string;
	state: ModelState;
}

export interface Status {
	version: string;
	vault: { path: string; collection: string };
	/** Where the backend stores facts in this vault; null when the vault holds no agent memory. */
	facts: { root: string } | null;
	documents: number;
	chunks: number;
	embedded: number;
	indexing: { state: "idle" | "indexing"; done: number; total: number; lastUpdate: string | null };
	models: Partial<Record<"embed" | "rerank" | "generate", ModelInfo>>;
	watcher: { enabled: boolean; queue: number };
	sync: {
		configured: boolean;
		state: "idle" | "syncing" | "error" | "off";
		pending: number;
		lastSync: string | null;
	};
	lastError: { message: string; at: string } | null;
	/** Set when many notes are in languages the embedding model does not serve: what to do. */
	languageAdvice: string | null;
	/** What a deep search runs now, per stage: "on …" or "off (why)"; absent from old backends. */
	queryStages?: Record<string, string>;
}

/** Restrictions on the documents a search may return; each one optional. */
export interface SearchFilters {
	/** Folder or path prefixes. */
	path?: string[];
	/** All of these tags (nested tags match their parents, case ignored). */
	tags?: string[];
	/** Frontmatter properties as [name, value] pairs. */
	fields?: Array<[string, string]>;
	/** ISO dates: modified on or after / before. */
	after?: string;
	before?: string;
}

/** The body of `POST /v1/search`, `/v1/vsearch` and `/v1/query`. */
export interface SearchRequest {
	q: string;
	/** 1..1000; null for every match. */
	n?: number | null;
	collections?: string[];
	filters?: SearchFilters;
	/** Hybrid queries only: each result says how its score was made. */
	explain?: boolean;
}

export interface SearchResult {
	docid: string;
	collection: string;
	path: string;
	title: string;
	score: number;
	snippet: string;
	highlights: Array<[number, number]>;
	line: number;
	/** The PDF page the passage is on; null for a note. */
	page: number | null;
	context: string | null;
	factType: string | null;
	/** Per-stage numbers of a hybrid result asked for with `explain`; null otherwise. */
	explain?: Record<string, unknown> | null;
}

export interface SearchResponse {
	results: SearchResult[];
	/** Why a hybrid query degraded (no models, no embeddings yet); always empty for search/vsearch. */
	notices: string[];
}

/** `local`: never synced; `off`: a value this plugin does not know (a newer backend). */
export type SyncState = "local" | "synced" | "pending" | "conflict" | "off";

export interface Fact {
	id: string;
	path: string;
	title: string;
	text: string;
	factType: string;
	importanceScore: number;
	/** structural / potential / contextual as the backend ranks it; "" when it did not say. */
	importanceTier: string;
	confidence: number;
	lifecycleState: string;
	tags: string[];
	entities: string[];
	supersededBy: string | null;
	contradictsWith: string[];
	timestamp: string;
	updatedAt: string;
	syncState: SyncState;
	/** What failed after a write stored the fact (ledger line, daily note); empty otherwise. */
	warnings: string[];
}

/** The body of `POST /v1/facts`; the client adds `source: "obsidian"`. */
export interface NewFact {
	text: string;
	title?: string;
	type?: string;
	importance?: number;
	confidence?: number;
	tags?: string[];
	entities?: string[];
	scope?: string;
}

/** The body of `PATCH /v1/facts/{id}`: the fields to change (at least one). */
export interface FactPatch {
	text?: string;
	title?: string;
	type?: string;
	importance?: number;
	confidence?: number;
	tags?: string[];
	entities?: string[];
	scope?: string;
	lifecycleState?: "active" | "dormant" | "merged" | "archived" | "pruned";
}

export interface Backlink {
	path: string;
	title: string;
	line: number;
	context: string;
}

export interface RelatedNote {
	path: string;
	title: string;
	score: number;
}

export interface Coverage {
	indexed: boolean;
	indexedAt: string | null;
	chunks: number;
	embedded: boolean;
}

export interface NoteMetadata {
	path: string;
	title: string;
	frontmatter: Record<string, unknown>;
	fact: Fact | null;
	backlinks: Backlink[];
	related: RelatedNote[];
	coverage: Coverage;
}

export interface Rename {
	from: string;
	to: string;
}

export interface IndexRequest {
	paths?: string[];
	deleted?: string[];
	renamed?: Rename[];
}

export interface IndexJob {
	id: string;
	state: string;
}

export interface ActiveNote {
	path: string;
	selection: string;
	cursorLine: number;
}
