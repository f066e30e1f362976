/** Recall logic: query prefixes, result items, and search-as-you-type without stale replies. */
import { errorMessage } from "../api/errors";
import type { Fact, SearchMode, SearchRequest, SearchResponse, SearchResult } from "../api/types";
import type { Timers } from "./timers";

/** Quick (keyword) or deep (hybrid) search; each is its own route. */
export type RecallMode = Extract<SearchMode, "search" | "query">;

/** The prefix that switches a query to the mode that is not the default. */
export const SWITCH_PREFIX = "?";

export const QUICK_DEBOUNCE_MS = 150;
/** Deep queries run models (expansion, rerank), so wait for a longer typing pause. */
export const DEEP_DEBOUNCE_MS = 400;
export const RESULT_LIMIT = 20;

export interface ParsedQuery {
	text: string;
	mode: RecallMode;
}

/** `?foo` runs `foo` in the other mode than the default one; leading/trailing space is ignored. */
export function parseRecallQuery(raw: string, defaultMode: RecallMode): ParsedQuery {
	const trimmed = raw.trim();
	if (trimmed.startsWith(SWITCH_PREFIX)) {
		return { text: trimmed.slice(SWITCH_PREFIX.length).trim(), mode: defaultMode === "search" ? "query" : "search" };
	}
	return { text: trimmed, mode: defaultMode };
}

export interface RecallItem {
	title: string;
	path: string;
	snippet: string;
	highlights: Array<[number, number]>;
	/** 0..1, or null for recent facts (no relevance). */
	score: number | null;
	factType: string | null;
	/** 1-based line to open at. */
	line: number;
	/** Vault-relative path when the note is in this vault; null for other collections. */
	vaultPath: string | null;
	/** The collection, shown when the note is outside the vault. */
	collection: string;
}

export function itemFromResult(r: SearchResult, vaultCollection: string | null): RecallItem {
	const inVault = vaultCollection !== null && r.collection === vaultCollection;
	return {
		title: r.title,
		path: r.path,
		snippet: r.snippet,
		highlights: r.highlights,
		score: r.score,
		factType: r.factType,
		line: Math.max(1, Math.floor(r.line)),
		vaultPath: inVault ? r.path : null,
		collection: r.collection,
	};
}

export function itemFromFact(f: Fact, vaultCollection: string | null): RecallItem {
	return {
		title: f.title,
		path: f.path,
		snippet: f.text,
		highlights: [],
		score: null,
		factType: f.factType,
		line: 1,
		vaultPath: f.path,
		collection: vaultCollection ?? "",
	};
}

export interface RecallOutcome {
	query: ParsedQuery;
	items: RecallItem[];
	notices: string[];
	error: string | null;
}

export interface RecallBackend {
	search(mode: RecallMode, req: SearchRequest): Promise<SearchResponse>;
	recentFacts(limit: number): Promise<Fact[]>;
}

/**
 * Turns keystrokes into at most one request per typing pause and delivers only the reply to the
 * newest request: older replies that arrive late are dropped by sequence number (requestUrl
 * cannot abort). Every caller's promise settles with the newest outcome, so a suggest list
 * waiting on an older keystroke shows current results instead of hanging.
 */
export class RecallController {
	private seq = 0;
	private waiters: Array<(o: RecallOutcome) => void> = [];
	private pendingTimer: number | null = null;
	private disposed = false;
	/** Replies dropped because a newer request was already out (for tests and diagnostics). */
	dropped = 0;
	/** Requests actually sent to the backend. */
	sent = 0;

	constructor(
		private readonly backend: RecallBackend,
		private readonly timers: Timers,
		private readonly defaultMode: () => RecallMode,
		private readonly vaultCollection: () => string | null,
	) {}

	/** Ask for results for `raw`; resolves with the outcome of the newest request. */
	request(raw: string): Promise<RecallOutcome> {
		const parsed = parseRecallQuery(raw, this.defaultMode());
		const promise = new Promise<RecallOutcome>((resolve) => this.waiters.push(resolve));
		const mySeq = ++this.seq;
		this.cancelTimer();
		if (parsed.text === "") {
			// Recent facts need no typing pause: the modal opens on them.
			void this.run(mySeq, parsed);
		} else {
			const delay = parsed.mode === "query" ? DEEP_DEBOUNCE_MS : QUICK_DEBOUNCE_MS;
			this.pendingTimer = this.timers.setTimeout(() => void this.run(mySeq, parsed), delay);
		}
		return promise;
	}

	/** Resolve waiters with nothing and ignore later replies (modal closed). */
	dispose(): void {
		this.disposed = true;
		this.cancelTimer();
		this.settle({ query: { text: "", mode: this.defaultMode() }, items: [], notices: [], error: null });
	}

	private cancelTimer(): void {
		if (this.pendingTimer !== null) this.timers.clearTimeout(this.pendingTimer);
		this.pendingTimer = null;
	}

	private async run(mySeq: number, parsed: ParsedQuery): Promise<void> {
		if (mySeq !== this.seq || this.disposed) return;
		this.pendingTimer = null;
		this.sent++;
		let outcome: RecallOutcome;
		try {
			const collection = this.vaultCollection();
			if (parsed.text === "") {
				const facts = await this.backend.recentFacts(RESULT_LIMIT);
				outcome = { query: parsed, items: facts.map((f) => itemFromFact(f, collection)), notices: [], error: null };
			} else {
				const req: SearchRequest = { q: parsed.text, n: RESULT_LIMIT };
				// The backend searches every collection it indexes unless told otherwise: this vault only.
				if (collection !== null) req.collections = [collection];
				const reply = await this.backend.search(parsed.mode, req);
				outcome = {
					query: parsed,
					items: reply.results.map((r) => itemFromResult(r, collection)),
					notices: reply.notices,
					error: null,
				};
			}
		} catch (err) {
			outcome = { query: parsed, items: [], notices: [], error: errorMessage(err) };
		}
		if (mySeq !== this.seq || this.disposed) {
			this.dropped++;
			return;
		}
		this.settle(outcome);
	}

	private settle(outcome: RecallOutcome): void {
		const waiters = this.waiters;
		this.waiters = [];
		for (const w of waiters) w(outcome);
	}
}
