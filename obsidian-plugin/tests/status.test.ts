// @vitest-environment node
import { describe, expect, it } from "vitest";
import { EngramError } from "../src/api/errors";
import type { Status } from "../src/api/types";
import { describeState, isOnline, stateFromError, stateFromStatus, StatusMonitor, type ConnectionState } from "../src/core/status";

function status(over: Partial<Status> = {}): Status {
	return {
		version: "1", vault: { path: "/v", collection: "notes" }, facts: { root: "Engram" }, documents: 10, chunks: 20, embedded: 5,
		indexing: { state: "idle", done: 0, total: 0, lastUpdate: null }, models: {},
		watcher: { enabled: true, queue: 0 }, sync: { configured: true, state: "idle", pending: 0, lastSync: null },
		lastError: null, languageAdvice: null, ...over,
	};
}

describe("state machine", () => {
	it.each([
		["idle", status(), "connected", "Engram"],
		["indexing", status({ indexing: { state: "indexing", done: 40, total: 120, lastUpdate: null } }), "indexing", "Engram: indexing 40/120 33%"],
		["syncing", status({ sync: { configured: true, state: "syncing", pending: 3, lastSync: null } }), "syncing", "Engram: syncing (3)"],
		[
			"indexing beats syncing",
			status({ indexing: { state: "indexing", done: 0, total: 0, lastUpdate: null }, sync: { configured: true, state: "syncing", pending: 1, lastSync: null } }),
			"indexing",
			"Engram: indexing 0/0",
		],
		["sync error", status({ sync: { configured: true, state: "error", pending: 2, lastSync: null } }), "connected", "Engram · sync error"],
	])("%s", (_name, s, kind, text) => {
		const state = stateFromStatus(s);
		expect(state.kind).toBe(kind);
		expect(describeState(state).text).toBe(text);
		expect(isOnline(state)).toBe(true);
	});

	it.each([
		["no discovery", new EngramError("not-running", "no file"), false, "not-running", "Engram: not running"],
		["no discovery while starting", new EngramError("not-running", "no file"), true, "starting", "Engram: starting…"],
		["other vault", new EngramError("vault-mismatch", "other"), false, "not-running", "Engram: not running"],
		["dead port", new EngramError("unreachable", "nobody"), false, "offline", "Engram: offline"],
		["dead port while starting", new EngramError("unreachable", "nobody"), true, "starting", "Engram: starting…"],
		["bad token", new EngramError("unauthorized", "no"), false, "offline", "Engram: offline"],
		["server error while starting", new EngramError("http", "boom", 500), true, "offline", "Engram: offline"],
		["unknown throw", new Error("x"), false, "offline", "Engram: offline"],
	])("%s", (_name, err, starting, kind, text) => {
		const state = stateFromError(err, starting);
		expect(state.kind).toBe(kind);
		expect(describeState(state).text).toBe(text);
		expect(describeState(state).cls).toBe(`engram-state-${kind}`);
	});

	it("puts the reason in the tooltip", () => {
		expect(describeState(stateFromError(new EngramError("unreachable", "does not answer at http://127.0.0.1:1"), false)).tooltip).toContain("127.0.0.1:1");
	});
});

describe("StatusMonitor", () => {
	it("joins a poll in flight instead of sending another", async () => {
		let calls = 0;
		let release: (s: Status) => void = () => undefined;
		const m = new StatusMonitor({
			status: () => {
				calls++;
				return new Promise<Status>((r) => (release = r));
			},
		});
		const a = m.poll();
		const b = m.poll();
		expect(a).toBe(b);
		release(status());
		await a;
		expect(calls).toBe(1);
		expect(m.state.kind).toBe("connected");
		expect(m.status?.vault.collection).toBe("notes");
	});

	it("notifies listeners on change only, and stops after unsubscribe", async () => {
		let next: () => Promise<Status> = () => Promise.resolve(status());
		const m = new StatusMonitor({ status: () => next() });
		const seen: string[] = [];
		const off = m.onChange((s: ConnectionState) => seen.push(s.kind));
		await m.poll();
		await m.poll();
		next = () => Promise.reject(new EngramError("unreachable", "x"));
		await m.poll();
		off();
		next = () => Promise.resolve(status());
		await m.poll();
		expect(seen).toEqual(["connected", "offline"]);
		expect(m.listenerCount).toBe(0);
	});

	it("shows starting until the deadline, then not running", async () => {
		let t = 0;
		const m = new StatusMonitor({ status: () => Promise.reject(new EngramError("not-running", "none")) }, () => t);
		m.markStarting(1000);
		expect(m.state.kind).toBe("starting");
		t = 500;
		expect((await m.poll()).kind).toBe("starting");
		t = 1500;
		expect((await m.poll()).kind).toBe("not-running");
	});
});
