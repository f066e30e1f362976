/** Connection state: what the status bar shows, derived from the last poll. */
import { EngramError, errorMessage } from "../api/errors";
import type { Status } from "../api/types";

export type ConnectionState =
	| { kind: "not-running"; reason: string }
	| { kind: "starting" }
	| { kind: "offline"; reason: string }
	| { kind: "connected"; status: Status }
	| { kind: "indexing"; status: Status; done: number; total: number }
	| { kind: "syncing"; status: Status; pending: number };

export type StateKind = ConnectionState["kind"];

/** The state for a successful status reply: indexing beats syncing beats connected. */
export function stateFromStatus(status: Status): ConnectionState {
	if (status.indexing.state === "indexing") {
		return { kind: "indexing", status, done: status.indexing.done, total: status.indexing.total };
	}
	if (status.sync.state === "syncing") return { kind: "syncing", status, pending: status.sync.pending };
	return { kind: "connected", status };
}

/** The state for a failed poll; `starting` while a backend we spawned has not answered yet. */
export function stateFromError(err: unknown, starting: boolean): ConnectionState {
	const kind = err instanceof EngramError ? err.kind : "unreachable";
	if (kind === "not-running" || kind === "vault-mismatch") {
		return starting ? { kind: "starting" } : { kind: "not-running", reason: errorMessage(err) };
	}
	if (starting && kind === "unreachable") return { kind: "starting" };
	return { kind: "offline", reason: errorMessage(err) };
}

export interface StateView {
	/** Status bar text. */
	text: string;
	/** Short label for headings ("Connected", "Offline", …). */
	label: string;
	tooltip: string;
	/** CSS modifier: engram-state-<kind>. */
	cls: string;
}

function percent(done: number, total: number): string {
	if (total <= 0) return "";
	return ` ${Math.floor((100 * Math.min(done, total)) / total)}%`;
}

/** Status bar text and tooltip for a state. */
export function describeState(state: ConnectionState): StateView {
	const cls = `engram-state-${state.kind}`;
	switch (state.kind) {
		case "connected": {
			const s = state.status;
			const warn = s.sync.state === "error" ? " · sync error" : s.lastError ? " · error" : "";
			return {
				text: `Engram${warn}`,
				label: `Connected${warn}`,
				tooltip: `Connected: ${s.documents} notes, ${s.chunks} chunks, ${s.embedded} embedded`,
				cls,
			};
		}
		case "indexing":
			return {
				text: `Engram: indexing ${state.done}/${state.total}${percent(state.done, state.total)}`,
				label: `Indexing ${state.done} of ${state.total}`,
				tooltip: "The backend is indexing the vault",
				cls,
			};
		case "syncing":
			return {
				text: `Engram: syncing${state.pending > 0 ? ` (${state.pending})` : ""}`,
				label: "Syncing facts",
				tooltip: "Facts are syncing with Convex",
				cls,
			};
		case "starting":
			return { text: "Engram: starting…", label: "Starting the backend…", tooltip: "Waiting for the backend to start", cls };
		case "offline":
			return { text: "Engram: offline", label: "Offline", tooltip: state.reason, cls };
		case "not-running":
			return { text: "Engram: not running", label: "Backend not running", tooltip: state.reason, cls };
	}
}

/** True when the backend answers (connected, indexing or syncing). */
export function isOnline(state: ConnectionState): state is Extract<ConnectionState, { status: Status }> {
	return state.kind === "connected" || state.kind === "indexing" || state.kind === "syncing";
}

export interface StatusSource {
	status(): Promise<Status>;
}

type Listener = (state: ConnectionState, previous: ConnectionState) => void;

/**
 * Polls the backend and keeps the current state. Overlapping polls are skipped, so a slow
 * backend never piles up requests; listeners hear every change of kind or of content.
 */
export class StatusMonitor {
	private current: ConnectionState = { kind: "not-running", reason: "Not checked yet" };
	private listeners = new Set<Listener>();
	private inFlight: Promise<ConnectionState> | null = null;
	private startingUntil = 0;

	constructor(
		private readonly source: StatusSource,
		private readonly now: () => number = () => Date.now(),
	) {}

	get state(): ConnectionState {
		return this.current;
	}

	/** The last successful status, while online. */
	get status(): Status | null {
		return isOnline(this.current) ? this.current.status : null;
	}

	/** Show "starting" instead of "not running" for up to `ms` (a backend we spawned). */
	markStarting(ms: number): void {
		this.startingUntil = this.now() + ms;
		this.set({ kind: "starting" });
	}

	clearStarting(): void {
		this.startingUntil = 0;
	}

	onChange(fn: Listener): () => void {
		this.listeners.add(fn);
		return () => this.listeners.delete(fn);
	}

	get listenerCount(): number {
		return this.listeners.size;
	}

	/** Poll once (or join the poll in flight) and return the new state. */
	poll(): Promise<ConnectionState> {
		if (this.inFlight) return this.inFlight;
		this.inFlight = this.source
			.status()
			.then(
				(status) => {
					this.startingUntil = 0;
					return stateFromStatus(status);
				},
				(err: unknown) => stateFromError(err, this.now() < this.startingUntil),
			)
			.then((next) => {
				this.set(next);
				return next;
			})
			.finally(() => {
				this.inFlight = null;
			});
		return this.inFlight;
	}

	/** Drop listeners (plugin unload). */
	dispose(): void {
		this.listeners.clear();
	}

	private set(next: ConnectionState): void {
		const prev = this.current;
		this.current = next;
		if (JSON.stringify(prev) === JSON.stringify(next)) return;
		for (const fn of [...this.listeners]) fn(next, prev);
	}
}
