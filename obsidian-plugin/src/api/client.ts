/**
 * The one typed client of the Engram HTTP API. It knows nothing about Obsidian: the transport
 * (requestUrl in the app, anything in tests) and the discovery reader are injected.
 */
import {
	decodeFactReply,
	decodeFacts,
	decodeHealth,
	decodeJob,
	decodeMetadata,
	decodeQueryRun,
	decodeSearch,
	decodeStatus,
} from "./decode";
import { parseDiscovery } from "./discovery";
import { EngramError } from "./errors";
import type {
	ActiveNote,
	Discovery,
	Fact,
	FactPatch,
	Health,
	IndexJob,
	IndexRequest,
	NewFact,
	NoteMetadata,
	SearchMode,
	SearchRequest,
	SearchResponse,
	Status,
} from "./types";

export interface HttpRequest {
	url: string;
	method: "GET" | "POST" | "PATCH" | "DELETE";
	headers: Record<string, string>;
	body?: string;
}

export interface HttpResponse {
	status: number;
	text: string;
}

/** Sends one request; resolves for every HTTP status, rejects only when nothing answered. */
export type Transport = (req: HttpRequest) => Promise<HttpResponse>;

export interface ClientOptions {
	transport: Transport;
	/** The text of discovery.json, or null when the file does not exist. */
	readDiscovery: () => Promise<string | null>;
	/**
	 * Absolute path of this vault (or each form of it: as Obsidian reports it, and resolved
	 * through symlinks as the backend writes it), to reject another machine's or vault's file.
	 */
	vaultPath: string | readonly string[];
}

type Decoder<T> = (v: unknown) => T;

export class EngramClient {
	private readonly opts: ClientOptions;
	private discovery: Discovery | null = null;

	constructor(opts: ClientOptions) {
		this.opts = opts;
	}

	/** The discovery in use, or null before the first successful read. */
	get current(): Discovery | null {
		return this.discovery;
	}

	/** Forget the cached discovery so the next call reads the file again. */
	invalidate(): void {
		this.discovery = null;
	}

	/** Read discovery.json now (throws `not-running`, `vault-mismatch` or `protocol`). */
	async reloadDiscovery(): Promise<Discovery> {
		this.discovery = null;
		let text: string | null;
		try {
			text = await this.opts.readDiscovery();
		} catch {
			text = null;
		}
		if (text === null) {
			throw new EngramError("not-running", "The Engram backend is not running (no discovery.json)");
		}
		this.discovery = parseDiscovery(text, this.opts.vaultPath);
		return this.discovery;
	}

	/** `GET /v1/health` on the discovered URL (no token needed). */
	async health(): Promise<Health> {
		return this.call("GET", "/v1/health", undefined, decodeHealth, false);
	}

	/**
	 * `GET /v1/status`. The status poll is the plugin's heartbeat, so it reads discovery.json
	 * afresh: a restarted backend (every start has a new token) or a rotated token is picked up
	 * within one poll, before another call is refused with the old one.
	 */
	status(): Promise<Status> {
		this.invalidate();
		return this.call("GET", "/v1/status", undefined, decodeStatus);
	}

	/** `POST /v1/search` (keyword), `/v1/vsearch` (vector) or `/v1/query` (hybrid). */
	search(mode: SearchMode, req: SearchRequest): Promise<SearchResponse> {
		if (mode !== "query" && req.explain !== undefined) {
			const { explain: _hybridOnly, ...rest } = req; // keyword and vector routes refuse it
			req = rest;
		}
		return this.call("POST", `/v1/${mode}`, req, mode === "query" ? decodeQueryRun : decodeSearch);
	}

	/** The newest live facts, newest first. */
	recentFacts(limit = 20, type?: string): Promise<Fact[]> {
		const params = new URLSearchParams({ limit: String(limit) });
		if (type) params.set("type", type);
		return this.call("GET", `/v1/facts?${params.toString()}`, undefined, decodeFacts);
	}

	getFact(id: string): Promise<Fact> {
		return this.call("GET", `/v1/facts/${encodeURIComponent(id)}`, undefined, decodeFactReply);
	}

	/** The backend records a fact's source as `engram` unless told: facts stored here say obsidian. */
	createFact(fact: NewFact): Promise<Fact> {
		return this.call("POST", "/v1/facts", { ...fact, source: "obsidian" }, decodeFactReply);
	}

	updateFact(id: string, patch: FactPatch): Promise<Fact> {
		return this.call("PATCH", `/v1/facts/${encodeURIComponent(id)}`, patch, decodeFactReply);
	}

	/** DELETE archives the fact (its note stays, lifecycleState becomes archived). */
	async archiveFact(id: string): Promise<void> {
		await this.call("DELETE", `/v1/facts/${encodeURIComponent(id)}`, undefined, () => undefined);
	}

	factFromNote(path: string, selection?: string): Promise<Fact> {
		const body = selection ? { path, selection } : { path };
		return this.call("POST", "/v1/facts/from-note", body, decodeFactReply);
	}

	noteMetadata(path: string): Promise<NoteMetadata> {
		const q = new URLSearchParams({ path }).toString();
		return this.call("GET", `/v1/notes/metadata?${q}`, undefined, decodeMetadata);
	}

	/** Reindex the given changes, or everything when `req` is undefined. */
	index(req?: IndexRequest): Promise<IndexJob> {
		return this.call("POST", "/v1/index", req, decodeJob);
	}

	/** Report the note open in Obsidian; null withdraws the report (no note open). */
	async activeNote(note: ActiveNote | null): Promise<void> {
		await this.call("POST", "/v1/active-note", note ?? { path: null }, () => undefined);
	}

	private async call<T>(
		method: HttpRequest["method"],
		path: string,
		body: unknown,
		decode: Decoder<T>,
		auth = true,
	): Promise<T> {
		const first = this.discovery ?? (await this.reloadDiscovery());
		let res: HttpResponse;
		try {
			res = await this.send(first, method, path, body, auth);
		} catch {
			// Nobody answered: the backend may have restarted on a new port. Re-read and retry once.
			const fresh = await this.reloadDiscovery();
			if (fresh.url === first.url && fresh.token === first.token) {
				throw new EngramError("unreachable", `The Engram backend does not answer at ${first.url}`);
			}
			res = await this.sendOrUnreachable(fresh, method, path, body, auth);
		}
		if (res.status === 401 && auth) {
			// A new token after a restart or `engram token rotate`: re-read and retry once.
			const fresh = await this.reloadDiscovery();
			if (fresh.token !== first.token || fresh.url !== first.url) {
				res = await this.sendOrUnreachable(fresh, method, path, body, auth);
			}
			if (res.status === 401) {
				throw new EngramError("unauthorized", "The backend refused the token in discovery.json", 401, "unauthorized");
			}
		}
		if (res.status >= 400) throw httpError(res);
		if (res.status === 204 || res.text.trim() === "") return decode(undefined);
		let parsed: unknown;
		try {
			parsed = JSON.parse(res.text);
		} catch {
			throw new EngramError("protocol", `The backend sent a reply that is not JSON (HTTP ${res.status})`);
		}
		return decode(parsed);
	}

	private async sendOrUnreachable(
		d: Discovery,
		method: HttpRequest["method"],
		path: string,
		body: unknown,
		auth: boolean,
	): Promise<HttpResponse> {
		try {
			return await this.send(d, method, path, body, auth);
		} catch {
			throw new EngramError("unreachable", `The Engram backend does not answer at ${d.url}`);
		}
	}

	private send(
		d: Discovery,
		method: HttpRequest["method"],
		path: string,
		body: unknown,
		auth: boolean,
	): Promise<HttpResponse> {
		const headers: Record<string, string> = { Accept: "application/json" };
		if (auth) headers.Authorization = `Bearer ${d.token}`;
		const req: HttpRequest = { url: d.url + path, method, headers };
		if (body !== undefined) {
			headers["Content-Type"] = "application/json";
			req.body = JSON.stringify(body);
		}
		return this.opts.transport(req);
	}
}

function httpError(res: HttpResponse): EngramError {
	let code: string | null = null;
	let message = `HTTP ${res.status}`;
	let hint: string | null = null;
	try {
		const parsed = JSON.parse(res.text) as { error?: { code?: unknown; message?: unknown; hint?: unknown } };
		if (typeof parsed.error?.code === "string") code = parsed.error.code;
		if (typeof parsed.error?.message === "string") message = parsed.error.message;
		if (typeof parsed.error?.hint === "string" && parsed.error.hint.trim() !== "") hint = parsed.error.hint.trim();
	} catch {
		// Not JSON (a proxy or a crash page): keep the status line only, never echo the body.
	}
	return new EngramError("http", message, res.status, code, hint);
}
