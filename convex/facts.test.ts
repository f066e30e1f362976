/// <reference types="vite/client" />
import { convexTest } from "convex-test";
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { api, internal } from "./_generated/api";
import { APPLIED_OPS_RETENTION_MS } from "./facts";
import schema from "./schema";

const modules = import.meta.glob("./**/*.*s");
const token = "unit-test-token";

function fact(externalId: string, extra: Record<string, unknown> = {}) {
  return {
    externalId,
    title: `Fact ${externalId}`,
    text: `The body of fact ${externalId}.`,
    factType: "decision",
    timestamp: "2026-01-02T03:04:05Z",
    lifecycleState: "active" as const,
    ...extra,
  };
}

function setup() {
  return convexTest(schema, modules);
}

type T = ReturnType<typeof setup>;

async function upsert(t: T, opId: string, f: ReturnType<typeof fact>, baseVersion?: number) {
  return await t.mutation(api.facts.upsert, { token, opId, fact: f, baseVersion, device: "laptop" });
}

async function pullAll(t: T, cursor: string | null, limit: number) {
  const page = await t.query(api.facts.listChangedSince, { token, cursor, limit });
  return page;
}

beforeEach(() => {
  process.env.ENGRAM_SYNC_TOKEN = token;
});

afterEach(() => {
  vi.useRealTimers();
});

describe("upsert", () => {
  test("creates version 1 with provenance and a commit-ts change seq", async () => {
    const t = setup();
    const result = await upsert(t, "op-1", fact("a", { tags: ["x"] }));
    expect(result).toMatchObject({ status: "ok", externalId: "a", version: 1, changed: true });
    expect(typeof result.changeSeq).toBe("bigint");
    const stored = await t.query(api.facts.get, { token, externalId: "a" });
    expect(stored).toMatchObject({
      externalId: "a",
      version: 1,
      tags: ["x"],
      entities: [],
      contradictsWith: [],
      originDevice: "laptop",
      lastDevice: "laptop",
      lastOpId: "op-1",
      contentHash: result.contentHash,
      changeSeq: result.changeSeq,
    });
    expect(stored).not.toHaveProperty("_id");
    expect(stored).not.toHaveProperty("searchText");
  });

  test("replaying an opId returns the first result and writes nothing", async () => {
    const t = setup();
    const first = await upsert(t, "op-1", fact("a"));
    await upsert(t, "op-2", fact("a", { text: "changed by someone else" }));
    const again = await upsert(t, "op-1", fact("a", { text: "a retry with other content" }));
    expect(again).toEqual(first);
    const stored = await t.query(api.facts.get, { token, externalId: "a" });
    expect(stored?.version).toBe(2);
    expect(stored?.text).toBe("changed by someone else");
  });

  test("an opId reused for another fact is rejected", async () => {
    const t = setup();
    await upsert(t, "op-1", fact("a"));
    await expect(upsert(t, "op-1", fact("b"))).rejects.toThrow(/already used/);
  });

  test("a stale baseVersion is a conflict value carrying the current fact", async () => {
    const t = setup();
    await upsert(t, "op-1", fact("a"));
    await upsert(t, "op-2", fact("a", { text: "second" }), 1);
    const stale = await upsert(t, "op-3", fact("a", { text: "third, from an old base" }), 1);
    expect(stale).toMatchObject({ status: "conflict", externalId: "a", current: { version: 2, text: "second" } });
    expect((await t.query(api.facts.get, { token, externalId: "a" }))?.text).toBe("second");
    // The conflict is the recorded first result of op-3.
    expect(await upsert(t, "op-3", fact("a", { text: "third, from an old base" }), 1)).toEqual(stale);
  });

  test("baseVersion 0 means the fact must not exist yet", async () => {
    const t = setup();
    expect(await upsert(t, "op-1", fact("a"), 0)).toMatchObject({ status: "ok", version: 1 });
    expect(await upsert(t, "op-2", fact("a", { text: "other" }), 0)).toMatchObject({
      status: "conflict",
      current: { version: 1 },
    });
    expect(await upsert(t, "op-3", fact("b"), 4)).toEqual({ status: "conflict", externalId: "b", current: null });
  });

  test("the same content is a no-op that still records the opId", async () => {
    const t = setup();
    const first = await upsert(t, "op-1", fact("a"));
    const same = await upsert(t, "op-2", fact("a"), 0);
    expect(same).toEqual({ ...first, changed: false });
    const ops = await t.run(async (ctx) => await ctx.db.query("appliedOps").collect());
    expect(ops.map((op) => op.opId).sort()).toEqual(["op-1", "op-2"]);
    expect(await upsert(t, "op-2", fact("a", { text: "different" }))).toEqual(same);
  });

  test("a field the writer dropped is removed, not kept from before", async () => {
    const t = setup();
    await upsert(t, "op-1", fact("a", { source: "chat", supersededBy: "b", supersedes: "c" }));
    expect(await t.query(api.facts.get, { token, externalId: "a" })).toMatchObject({ supersedes: "c" });
    await upsert(t, "op-2", fact("a"));
    const stored = await t.query(api.facts.get, { token, externalId: "a" });
    expect(stored).not.toHaveProperty("source");
    expect(stored).not.toHaveProperty("supersededBy");
    expect(stored).not.toHaveProperty("supersedes");
  });

  test("bad values are rejected with invalid_argument", async () => {
    const t = setup();
    await expect(upsert(t, "op-1", fact("a", { importanceScore: 1.5 }))).rejects.toThrow(/importanceScore/);
    await expect(upsert(t, "op-2", fact("a", { timestamp: "yesterday" }))).rejects.toThrow(/ISO 8601/);
    await expect(upsert(t, "", fact("a"))).rejects.toThrow(/opId/);
    await expect(upsert(t, "op-3", fact("a", { colour: "blue" }))).rejects.toThrow(/colour/);
    expect(await t.run(async (ctx) => await ctx.db.query("appliedOps").collect())).toEqual([]);
  });

  test("the sync token is required", async () => {
    const t = setup();
    await expect(
      t.mutation(api.facts.upsert, { token: "guess", opId: "op-1", fact: fact("a") }),
    ).rejects.toThrow(/wrong sync token/);
    delete process.env.ENGRAM_SYNC_TOKEN;
    await expect(t.query(api.facts.get, { token, externalId: "a" })).rejects.toThrow(/ENGRAM_SYNC_TOKEN/);
  });
});

describe("softDelete", () => {
  test("leaves a tombstone that pulls list and search hides", async () => {
    const t = setup();
    await upsert(t, "op-1", fact("a", { text: "zebra crossing" }));
    const deleted = await t.mutation(api.facts.softDelete, { token, opId: "op-2", externalId: "a", baseVersion: 1 });
    expect(deleted).toMatchObject({ status: "ok", version: 2, changed: true });
    const { changes } = await pullAll(t, null, 10);
    expect(changes).toHaveLength(1);
    expect(changes[0]).toMatchObject({ externalId: "a", version: 2, lastOpId: "op-2" });
    expect(typeof changes[0].deletedAt).toBe("number");
    expect(await t.query(api.facts.search, { token, query: "zebra" })).toEqual([]);
    expect((await t.query(api.facts.get, { token, externalId: "a" }))?.deletedAt).toBeDefined();
  });

  test("is idempotent, reports not_found and conflicts on a stale base", async () => {
    const t = setup();
    await upsert(t, "op-1", fact("a"));
    await upsert(t, "op-2", fact("a", { text: "v2" }));
    expect(await t.mutation(api.facts.softDelete, { token, opId: "op-3", externalId: "a", baseVersion: 1 })).toMatchObject({
      status: "conflict",
      current: { version: 2 },
    });
    await t.mutation(api.facts.softDelete, { token, opId: "op-4", externalId: "a" });
    expect(await t.mutation(api.facts.softDelete, { token, opId: "op-5", externalId: "a" })).toMatchObject({
      status: "ok",
      version: 3,
      changed: false,
    });
    expect(await t.mutation(api.facts.softDelete, { token, opId: "op-6", externalId: "zz" })).toEqual({
      status: "not_found",
      externalId: "zz",
    });
  });

  test("an upsert on the tombstone's version brings the fact back", async () => {
    const t = setup();
    await upsert(t, "op-1", fact("a"));
    await t.mutation(api.facts.softDelete, { token, opId: "op-2", externalId: "a" });
    const back = await upsert(t, "op-3", fact("a"), 2);
    expect(back).toMatchObject({ status: "ok", version: 3, changed: true });
    const stored = await t.query(api.facts.get, { token, externalId: "a" });
    expect(stored).not.toHaveProperty("deletedAt");
  });
});

describe("listChangedSince", () => {
  test("pages never skip or repeat a version under interleaved writes", async () => {
    const t = setup();
    for (let i = 0; i < 20; i++) await upsert(t, `seed-${i}`, fact(`f${String(i).padStart(2, "0")}`));
    const seen: string[] = [];
    let cursor: string | null = null;
    let lastSeq = -1n;
    for (let round = 0; round < 50; round++) {
      const page = await pullAll(t, cursor, 6);
      for (const change of page.changes) {
        seen.push(`${change.externalId}@${change.version}`);
        expect(change.changeSeq as bigint).toBeGreaterThanOrEqual(lastSeq);
        lastSeq = change.changeSeq as bigint;
      }
      cursor = page.nextCursor;
      // Between pages: update a fact already pulled, one not yet pulled, add
      // a new one and delete one.
      if (round < 4) {
        await upsert(t, `r${round}-old`, fact("f00", { text: `round ${round}` }));
        await upsert(t, `r${round}-ahead`, fact("f19", { text: `round ${round}` }));
        await upsert(t, `r${round}-new`, fact(`new-${round}`));
        await t.mutation(api.facts.softDelete, { token, opId: `r${round}-del`, externalId: `f0${round + 1}` });
      } else if (page.isDone) {
        break;
      }
    }
    expect(new Set(seen).size).toBe(seen.length);
    const server = await t.run(async (ctx) => await ctx.db.query("facts").collect());
    for (const doc of server) {
      expect(seen).toContain(`${doc.externalId}@${doc.version}`);
    }
    const finalPage = await pullAll(t, cursor, 6);
    expect(finalPage).toEqual({ changes: [], nextCursor: cursor, isDone: true });
  });

  test("facts written in one commit are split across pages without loss", async () => {
    const t = setup();
    await t.run(async (ctx) => {
      for (const id of ["m1", "m2", "m3", "m4", "m5"]) {
        await ctx.db.insert("facts", {
          ...fact(id),
          tags: [],
          entities: [],
          contradictsWith: [],
          version: 1,
          changeSeq: ctx.db.vars.commitTs,
          lastOpId: `bulk-${id}`,
          contentHash: id,
          searchText: id,
        });
      }
    });
    const ids: string[] = [];
    let cursor: string | null = null;
    for (let round = 0; round < 10; round++) {
      const page = await pullAll(t, cursor, 2);
      ids.push(...page.changes.map((c) => c.externalId));
      cursor = page.nextCursor;
      if (page.isDone) break;
    }
    expect(ids).toEqual(["m1", "m2", "m3", "m4", "m5"]);
    const seqs = await t.run(async (ctx) => (await ctx.db.query("facts").collect()).map((d) => d.changeSeq));
    expect(new Set(seqs).size).toBe(1);
  });

  test("an empty table is done at once and a foreign cursor is refused", async () => {
    const t = setup();
    expect(await pullAll(t, null, 10)).toEqual({ changes: [], nextCursor: "", isDone: true });
    await expect(pullAll(t, "not-a-cursor", 10)).rejects.toThrow(/cursor/);
  });
});

describe("search", () => {
  test("finds live facts by words in title, text and tags, within a scope", async () => {
    const t = setup();
    await upsert(t, "op-1", fact("a", { text: "We chose SQLite for the index.", scope: "engram" }));
    await upsert(t, "op-2", fact("b", { title: "Lunch", text: "Pasta on Fridays", tags: ["food"], scope: "home" }));
    await upsert(t, "op-3", fact("c", { text: "SQLite WAL mode lets readers run", scope: "home" }));
    const hits = await t.query(api.facts.search, { token, query: "sqlite" });
    expect(hits.map((h) => h.externalId).sort()).toEqual(["a", "c"]);
    const scoped = await t.query(api.facts.search, { token, query: "sqlite", scope: "home" });
    expect(scoped.map((h) => h.externalId)).toEqual(["c"]);
    expect((await t.query(api.facts.search, { token, query: "food" })).map((h) => h.externalId)).toEqual(["b"]);
    expect(await t.query(api.facts.search, { token, query: "   " })).toEqual([]);
  });
});

describe("trimAppliedOps", () => {
  test("forgets opIds past retention, in batches, and keeps recent ones", async () => {
    vi.useFakeTimers();
    const t = setup();
    const now = Date.now();
    await t.run(async (ctx) => {
      for (let i = 0; i < 520; i++) {
        await ctx.db.insert("appliedOps", {
          opId: `old-${i}`,
          kind: "upsert",
          externalId: "a",
          result: { status: "ok" },
          createdAt: now - APPLIED_OPS_RETENTION_MS - 1000,
        });
      }
    });
    await upsert(t, "fresh", fact("a"));
    expect(await t.mutation(internal.facts.trimAppliedOps, {})).toBe(500);
    await t.finishAllScheduledFunctions(vi.runAllTimers);
    const left = await t.run(async (ctx) => await ctx.db.query("appliedOps").collect());
    expect(left.map((op) => op.opId)).toEqual(["fresh"]);
  });
});
