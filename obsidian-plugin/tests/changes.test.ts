// @vitest-environment node
import { describe, expect, it } from "vitest";
import type { IndexRequest } from "../src/api/types";
import { ChangeSet, FULL_REINDEX_THRESHOLD, SYNC_DEBOUNCE_MS, SYNC_MAX_WAIT_MS, SyncQueue } from "../src/core/changes";
import { FakeTimers } from "./fakeTimers";

type Op = ["c", string] | ["d", string] | ["r", string, string];

function apply(ops: Op[]): IndexRequest | null {
	const s = new ChangeSet();
	for (const op of ops) {
		if (op[0] === "c") s.changed(op[1]);
		else if (op[0] === "d") s.removed(op[1]);
		else s.renamed(op[1], op[2]);
	}
	return s.toRequest();
}

describe("ChangeSet", () => {
	it.each<[string, Op[], IndexRequest | null]>([
		["nothing", [], null],
		["edits coalesce", [["c", "a.md"], ["c", "a.md"], ["c", "b.md"]], { paths: ["a.md", "b.md"] }],
		["edit then delete", [["c", "a.md"], ["d", "a.md"]], { deleted: ["a.md"] }],
		["delete then recreate", [["d", "a.md"], ["c", "a.md"]], { paths: ["a.md"] }],
		["rename", [["r", "a.md", "b.md"]], { renamed: [{ from: "a.md", to: "b.md" }] }],
		["rename chain", [["r", "a.md", "b.md"], ["r", "b.md", "c.md"]], { renamed: [{ from: "a.md", to: "c.md" }] }],
		["rename and back", [["r", "a.md", "b.md"], ["r", "b.md", "a.md"]], null],
		["edit then rename", [["c", "a.md"], ["r", "a.md", "b.md"]], { paths: ["b.md"], renamed: [{ from: "a.md", to: "b.md" }] }],
		["rename then delete", [["r", "a.md", "b.md"], ["d", "b.md"]], { deleted: ["a.md", "b.md"] }],
		["rename onto a deleted name", [["d", "b.md"], ["r", "a.md", "b.md"]], { renamed: [{ from: "a.md", to: "b.md" }] }],
	])("%s", (_name, ops, want) => {
		expect(apply(ops)).toEqual(want);
	});

	it("merge replays a failed request under newer changes", () => {
		const newer = new ChangeSet();
		newer.removed("a.md");
		newer.changed("c.md");
		const merged = ChangeSet.merge({ paths: ["a.md", "b.md"], renamed: [{ from: "x.md", to: "y.md" }] }, newer);
		expect(merged.toRequest()).toEqual({ paths: ["b.md", "c.md"], deleted: ["a.md"], renamed: [{ from: "x.md", to: "y.md" }] });
	});
});

describe("SyncQueue", () => {
	function setup(fail = false) {
		const timers = new FakeTimers();
		const sent: Array<IndexRequest | undefined> = [];
		const state = { fail };
		const q = new SyncQueue(
			async (req) => {
				sent.push(req);
				if (state.fail) throw new Error("offline");
			},
			timers,
			() => timers.now,
		);
		return { timers, sent, q, state };
	}

	it("sends one batch after a pause", async () => {
		const { timers, sent, q } = setup();
		q.changed("a.md");
		timers.advance(500);
		q.renamed("b.md", "c.md");
		timers.advance(SYNC_DEBOUNCE_MS);
		await Promise.resolve();
		expect(sent).toEqual([{ paths: ["a.md"], renamed: [{ from: "b.md", to: "c.md" }] }]);
		expect(q.pending).toBe(0);
	});

	it("does not wait forever while edits keep coming", () => {
		const { timers, sent, q } = setup();
		for (let t = 0; t < SYNC_MAX_WAIT_MS + 1000; t += 200) {
			q.changed("typing.md");
			timers.advance(200);
		}
		expect(sent.length).toBeGreaterThanOrEqual(1);
	});

	it("keeps changes when the backend is offline and sends them on retry", async () => {
		const { timers, sent, q, state } = setup(true);
		q.changed("a.md");
		timers.advance(SYNC_DEBOUNCE_MS);
		await new Promise((r) => setTimeout(r, 0));
		expect(q.pending).toBe(1);
		q.removed("b.md");
		state.fail = false;
		q.retry();
		await new Promise((r) => setTimeout(r, 0));
		expect(sent[sent.length - 1]).toEqual({ paths: ["a.md"], deleted: ["b.md"] });
		expect(q.pending).toBe(0);
	});

	it("switches to one full reindex past the threshold", async () => {
		const { sent, q } = setup();
		for (let i = 0; i <= FULL_REINDEX_THRESHOLD; i++) q.changed(`n${i}.md`);
		expect(q.pending).toBe(Infinity);
		await q.flush();
		expect(sent).toEqual([undefined]);
		expect(q.pending).toBe(0);
	});

	it("dispose cancels the timer", () => {
		const { timers, sent, q } = setup();
		q.changed("a.md");
		q.dispose();
		timers.advance(SYNC_MAX_WAIT_MS * 2);
		expect(sent).toEqual([]);
		expect(timers.pending).toBe(0);
	});
});
