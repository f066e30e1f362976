/** Recall logic: query prefixes, result items, and search-as-you-type without stale replies. */
import { EngramError, errorMessage, type ErrorKind } from "../api/errors";
import type { Fact, SearchMode, SearchRequest, SearchResponse, SearchResult } from "../api/types";
import { queryTerms } from "./highlight";
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
	/** Raw markdown as the backend sent it; the row shows it as text. */
	snippet: string;
	highlights: Array<[number, number]>;
	/** The query's words, to highlight whole words the backend's offsets missed. */
	terms: string[];
	/** 0..1, or null for recent facts (no relevance). Shown only in the details. */
	score: number | null;
	/** 1-based position in the list. */
	rank: number;
	/** How a deep search scored it (`explain`), or null. */
	explain: Record<string, unknown> | null;
	factType: string | null;
	/** 1-based line to open at. */
	line: number;
	/** The PDF page to open at; null for a note. */
	page: number | null;
	/** Vault-relative path when the note is in this vault; null for other collections. */
	vaultPath: string | null;
	/** The collection, shown when the note is outside the vault. */
	collection: string;
}

export function itemFromResult(r: SearchResult, vaultCollection: string | null, terms: string[] = [], rank = 1): RecallItem {
	const inVault = vaultCollection !== null && r.collection === vaultCollection;
	return {
		title: r.title,
		path: r.path,
		snippet: r.snippet,
		highlights: r.highlights,
		terms,
		score: r.score,
		rank,
		explain: r.explain ?? null,
		factType: r.factType,
		line: Math.max(1, Math.floor(r.line)),
		page: r.page,
		vaultPath: inVault ? r.path : null,
		collection: r.collection,
	};
}

export function itemFromFact(f: Fact, vaultCollection: string | null, rank = 1): RecallItem {
	return {
		title: f.title,
		path: f.path,
		snippet: f.text,
		highlights: [],
		terms: [],
		score: null,
		rank,
		explain: null,
		factType: f.factType,
		line: 1,
		page: null,
		vaultPath: f.path,
		collection: vaultCollection ?? "",
	};
}

export interface RecallFailure {
	message: string;
	kind: ErrorKind | "unknown";
}

export interface RecallOutcome {
	query: ParsedQuery;
	items: RecallItem[];
	notices: string[];
	error: RecallFailure | null;
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
				outcome = { query: parsed, items: facts.map((f, i) => itemFromFact(f, collection, i + 1)), notices: [], error: null };
			} else {
				const req: SearchRequest = { q: parsed.text, n: RESULT_LIMIT };
				// The backend searches every collection it indexes unless told otherwise: this vault only.
				if (collection !== null) req.collections = [collection];
				// The numbers behind a deep result's place, for the details a person can ask for.
				if (parsed.mode === "query") req.explain = true;
				const reply = await this.backend.search(parsed.mode, req);
				const terms = queryTerms(parsed.text);
				outcome = {
					query: parsed,
					items: reply.results.map((r, i) => itemFromResult(r, collection, terms, i + 1)),
					notices: reply.notices,
					error: null,
				};
			}
		} catch (err) {
			const kind = err instanceof EngramError ? err.kind : "unknown";
			outcome = { query: parsed, items: [], notices: [], error: { message: errorMessage(err), kind } };
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

/** What a hint offers to do when clicked. */
export type HintAction = "deep" | "start" | "status";

export interface Hint {
	text: string;
	action?: HintAction;
}

export interface EmptyState {
	message: string;
	hints: Hint[];
}

/** What the index holds, as far as hints need it (from the last status poll). */
export interface IndexFacts {
	documents: number;
	embedded: number;
}

/**
 * What an empty list says, and what to try next: a deep search, fewer words, `engram embed`,
 * starting the backend. `index` is null when the status is unknown (offline).
 */
export function emptyState(o: RecallOutcome, index: IndexFacts | null): EmptyState {
	if (o.error) return failureState(o.error);
	const q = o.query;
	if (q.text === "") {
		return {
			message: "No facts yet.",
			hints: [
				{ text: "Type to search your notes." },
				{ text: "Store a note or a selection with the command “Store as fact”; agents add facts as they work." },
			],
		};
	}
	const hints: Hint[] = [];
	const words = queryTerms(q.text).length;
	if (index !== null && index.documents === 0) {
		return { message: "The index is empty.", hints: [{ text: "Wait for indexing to finish, or reindex the vault from the status window.", action: "status" }] };
	}
	if (q.mode === "search") hints.push({ text: `Deep search for “${q.text}” (finds notes by meaning)`, action: "deep" });
	if (words > 1) hints.push({ text: "Try fewer words, or more general ones." });
	else hints.push({ text: "Check the spelling, or try another word for the same thing." });
	// The backend's notice may say it already (it stands above the list).
	const said = o.notices.some((n) => /engram embed/i.test(n));
	const unembedded = index !== null ? index.embedded === 0 : said;
	if (unembedded && !said) hints.push({ text: "Nothing is embedded yet: run engram embed in a terminal so deep search can match meaning, not only words." });
	return { message: `No notes match “${q.text}”.`, hints };
}

function failureState(e: RecallFailure): EmptyState {
	switch (e.kind) {
		case "not-running":
		case "vault-mismatch":
			return {
				message: "Engram is not running for this vault.",
				hints: [{ text: "Start the backend", action: "start" }, { text: "or run engram serve in a terminal." }],
			};
		case "unreachable":
			return {
				message: "The Engram backend does not answer.",
				hints: [{ text: "Start the backend again", action: "start" }, { text: "Open the status window", action: "status" }],
			};
		case "unauthorized":
			return {
				message: "The backend refused the plugin's token.",
				hints: [{ text: "Restart the backend, then open the status window to reconnect.", action: "status" }],
			};
		default:
			return { message: `Search failed: ${e.message}`, hints: [{ text: "Open the status window for details", action: "status" }] };
	}
}
