// The same client-visible contract, checked against the double always and
// against a real deployment when CONVEX_URL and ENGRAM_SYNC_TOKEN are set
// (the facts it writes carry a random prefix and are soft-deleted after).
import { spawn } from "node:child_process";
import { once } from "node:events";
import { randomUUID } from "node:crypto";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, test } from "vitest";

const SERVER = fileURLToPath(new URL("./server.mjs", import.meta.url));

const targets = [{ name: "double" }];
if (process.env.CONVEX_URL && process.env.ENGRAM_SYNC_TOKEN) {
  targets.push({ name: "real deployment", url: process.env.CONVEX_URL.replace(/\/$/, ""), token: process.env.ENGRAM_SYNC_TOKEN });
}

describe.each(targets)("contract against the $name", (target) => {
  let child;
  let base = target.url;
  const token = target.token ?? "contract-token";
  const prefix = `contract-${randomUUID()}`;
  const written = new Set();

  beforeAll(async () => {
    if (base !== undefined) return;
    child = spawn(process.execPath, [SERVER, "--sync-token", token], { stdio: ["ignore", "pipe", "inherit"] });
    const [line] = await once(createInterface({ input: child.stdout }), "line");
    base = `http://127.0.0.1:${line.split(" ")[1]}`;
  });

  afterAll(async () => {
    for (const externalId of written) {
      await call("mutation", "facts:softDelete", { opId: randomUUID(), externalId });
    }
    if (child !== undefined) {
      child.kill("SIGTERM");
      await once(child, "exit");
    }
  });

  async function call(route, path, args) {
    const res = await fetch(`${base}/api/${route}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ path, args: { token, ...args }, format: "json" }),
    });
    expect(res.status).toBe(200);
    return await res.json();
  }

  function fact(name, extra = {}) {
    const externalId = `${prefix}-${name}`;
    written.add(externalId);
    return { externalId, title: `Contract ${name}`, text: `contract ${prefix} ${name}`, factType: "fact", timestamp: "2026-05-01T00:00:00Z", lifecycleState: "active", ...extra };
  }

  const upsert = async (opId, f, extra = {}) => (await call("mutation", "facts:upsert", { opId, fact: f, ...extra })).value;

  test("upsert, replay, no-op and conflict", async () => {
    const f = fact("a");
    const opId = randomUUID();
    const first = await upsert(opId, f, { baseVersion: 0 });
    expect(first).toMatchObject({ status: "ok", version: 1, changed: true });
    expect(first.changeSeq).toMatch(/^[0-9]+$/);
    expect(await upsert(opId, f)).toEqual(first);
    expect(await upsert(randomUUID(), f)).toEqual({ ...first, changed: false });
    const second = await upsert(randomUUID(), { ...f, text: `${f.text} edited` }, { baseVersion: 1 });
    expect(second).toMatchObject({ status: "ok", version: 2 });
    expect(BigInt(second.changeSeq) > BigInt(first.changeSeq)).toBe(true);
    const stale = await upsert(randomUUID(), { ...f, text: "stale" }, { baseVersion: 1 });
    expect(stale).toMatchObject({ status: "conflict", current: { version: 2 } });
  });

  test("a pull from the pre-write position sees the write, tombstones included", async () => {
    const f = fact("b");
    const created = await upsert(randomUUID(), f);
    const deleted = (await call("mutation", "facts:softDelete", { opId: randomUUID(), externalId: f.externalId })).value;
    expect(deleted).toMatchObject({ status: "ok", version: 2, changed: true });
    // Start just before the create: its seq minus one, so only later commits follow.
    let cursor = `${BigInt(created.changeSeq) - 1n}:`;
    const seen = [];
    for (let i = 0; i < 50; i++) {
      const page = (await call("query", "facts:listChangedSince", { cursor, limit: 50 })).value;
      seen.push(...page.changes.filter((c) => c.externalId === f.externalId));
      cursor = page.nextCursor;
      if (page.isDone) break;
    }
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ version: 2, deletedAt: expect.any(Number) });
  });

  test("errors: a wrong token and a bad fact are function errors", async () => {
    const res = await fetch(`${base}/api/query`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ path: "facts:get", args: { token: "wrong", externalId: "x" }, format: "json" }),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ status: "error", errorData: { code: "unauthorized" } });
    const bad = await call("mutation", "facts:upsert", { opId: randomUUID(), fact: fact("c", { confidence: 7 }) });
    expect(bad).toMatchObject({ status: "error", errorData: { code: "invalid_argument", field: "confidence" } });
  });
});
