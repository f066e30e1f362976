/** Wire types of the Engram HTTP API (protocol 1). Shapes mirror docs/http-api.md. */

export const PROTOCOL = 1;

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
}

export interface QueryRequest {
	q: string;
	mode: SearchMode;
	n?: number;
	collections?: string[];
	filters?: Record<string, unknown>;
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
	context: string | null;
	factType: string | null;
}

export interface QueryResponse {
	results: SearchResult[];
	notices: string[];
}

/** `local`: never synced; `off`: the backend did not say (an older build). */
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
	sync: { state: SyncState };
}

export interface NewFact {
	text: string;
	type?: string;
	importance?: number;
	tags?: string[];
	entities?: string[];
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
