/** Vault changes collected into one `POST /v1/index` body, then sent after a pause. */
import type { IndexRequest, Rename } from "../api/types";
import { Debouncer, type Timers } from "./timers";

/**
 * A coalesced set of changes. Invariants: a path is in at most one of `paths` / `deleted`;
 * renames are chained (a→b then b→c is a→c) and a rename's target is never in `deleted`.
 */
export class ChangeSet {
	private paths = new Set<string>();
	private deleted = new Set<string>();
	/** to → from, so a chain can be followed back to the path the backend knows. */
	private renames = new Map<string, string>();

	get size(): number {
		return this.paths.size + this.deleted.size + this.renames.size;
	}

	changed(path: string): void {
		this.deleted.delete(path);
		this.paths.add(path);
	}

	removed(path: string): void {
		this.paths.delete(path);
		const origin = this.renames.get(path);
		if (origin !== undefined) {
			// The backend only knows the original name: delete that one.
			this.renames.delete(path);
			this.deleted.add(origin);
		}
		this.deleted.add(path);
	}

	renamed(from: string, to: string): void {
		if (from === to) return;
		const origin = this.renames.get(from) ?? from;
		this.renames.delete(from);
		this.deleted.delete(to);
		if (this.paths.delete(from)) this.paths.add(to);
		if (origin === to) return; // renamed back: nothing moved
		this.renames.set(to, origin);
	}

	/** The request body, or null when there is nothing to send. */
	toRequest(): IndexRequest | null {
		if (this.size === 0) return null;
		const req: IndexRequest = {};
		if (this.paths.size) req.paths = [...this.paths].sort();
		if (this.deleted.size) req.deleted = [...this.deleted].sort();
		if (this.renames.size) {
			req.renamed = [...this.renames].map(([to, from]): Rename => ({ from, to }));
		}
		return req;
	}

	/** Replay a request that failed to send, under changes that happened since. */
	static merge(older: IndexRequest, newer: ChangeSet): ChangeSet {
		const set = new ChangeSet();
		for (const r of older.renamed ?? []) set.renamed(r.from, r.to);
		for (const p of older.deleted ?? []) set.removed(p);
		for (const p of older.paths ?? []) set.changed(p);
		for (const [to, from] of newer.renames) set.renamed(from, to);
		for (const p of newer.deleted) set.removed(p);
		for (const p of newer.paths) set.changed(p);
		return set;
	}
}

export const SYNC_DEBOUNCE_MS = 1000;
export const SYNC_MAX_WAIT_MS = 5000;
/** Past this many pending entries, one full reindex is cheaper than a long list. */
export const FULL_REINDEX_THRESHOLD = 2000;

export type IndexSender = (req: IndexRequest | undefined) => Promise<unknown>;

/**
 * Debounces changes and sends them. A failed send (backend offline) keeps the changes for
 * `retry()`, which the plugin calls when the backend is back.
 */
export class SyncQueue {
	private set = new ChangeSet();
	private full = false;
	private sending = false;
	private readonly debouncer: Debouncer;
	/** Requests sent successfully (for tests and the status modal). */
	sentCount = 0;

	constructor(
		private readonly send: IndexSender,
		timers: Timers,
		now: () => number = () => Date.now(),
	) {
		this.debouncer = new Debouncer(timers, SYNC_DEBOUNCE_MS, SYNC_MAX_WAIT_MS, now);
	}

	get pending(): number {
		return this.full ? Infinity : this.set.size;
	}

	changed(path: string): void {
		this.set.changed(path);
		this.kick();
	}

	removed(path: string): void {
		this.set.removed(path);
		this.kick();
	}

	renamed(from: string, to: string): void {
		this.set.renamed(from, to);
		this.kick();
	}

	/** Send what is pending now (backend came back, or unload). */
	async flush(): Promise<void> {
		this.debouncer.cancel();
		if (this.sending) return;
		const full = this.full;
		const req = this.set.toRequest();
		if (!full && req === null) return;
		this.set = new ChangeSet();
		this.full = false;
		this.sending = true;
		let ok = false;
		try {
			await this.send(full ? undefined : (req ?? undefined));
			this.sentCount++;
			ok = true;
		} catch {
			// Keep everything for the next attempt; the backend's own watcher also catches up.
			if (full) this.full = true;
			else if (req) this.set = ChangeSet.merge(req, this.set);
			this.capSize();
		} finally {
			this.sending = false;
		}
		// Changes that arrived while the request was out get their own pause.
		if (ok && this.pending > 0) this.debouncer.schedule(() => void this.flush());
	}

	retry(): void {
		if (this.pending > 0) void this.flush();
	}

	dispose(): void {
		this.debouncer.cancel();
	}

	private kick(): void {
		this.capSize();
		this.debouncer.schedule(() => void this.flush());
	}

	private capSize(): void {
		if (this.set.size > FULL_REINDEX_THRESHOLD) {
			this.set = new ChangeSet();
			this.full = true;
		}
	}
}
