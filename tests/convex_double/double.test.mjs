// Drives the double as a client would: a spawned process, real HTTP on
// loopback, one test per fault kind.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "vitest";

const SERVER = fileURLToPath(new URL("./server.mjs", import.meta.url));
const SYNC = "sync-secret";
const ADMIN = "admin-secret";
const USER = "user-jwt.part.two";
let child;
let base;

beforeAll(async () => {
  child = spawn(process.execPath, [SERVER, "--port", "0", "--sync-token", SYNC, "--admin-key", ADMIN, "--user-token", USER], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const lines = createInterface({ input: child.stdout });
  const [first] = await once(lines, "line");
  const match = /^LISTENING (\d+)$/.exec(first);
  expect(match).not.toBeNull();
  base = `http://127.0.0.1:${match[1]}`;
});

afterAll(async () => {
  child.kill("SIGTERM");
  await once(child, "exit");
});

beforeEach(async () => {
  await control("POST", "/reset");
});

async function control(method, path, body) {
  const res = await fetch(`${base}/_double${path}`, {
    method,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

async function call(route, path, args, { auth, format = "json", timeoutMs } = {}) {
  const headers = { "content-type": "application/json" };
  if (auth !== undefined) headers.authorization = auth;
  const res = await fetch(`${base}/api/${route}`, {
    method: "POST",
    headers,
    body: JSON.stringify({ path, args, format }),
    signal: timeoutMs === undefined ? undefined : AbortSignal.timeout(timeoutMs),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, body: res.headers.get("content-type")?.includes("json") ? JSON.parse(text) : undefined };
}

function fact(externalId, extra = {}) {
  return { externalId, title: `T ${externalId}`, text: `about ${externalId}`, factType: "fact", timestamp: "2026-03-01T10:00:00Z", lifecycleState: "active", ...extra };
}

const upsert = (opId, f, extra = {}, options) => call("mutation", "facts:upsert", { token: SYNC, opId, fact: f, ...extra }, options);
const get = (externalId) => call("query", "facts:get", { token: SYNC, externalId });
const dump = async () => (await control("GET", "/dump")).body;
const fault = (spec) => control("POST", "/fault", spec);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

describe("wire format", () => {
  test("success envelope: Int64 as a decimal string, floats written with .0", async () => {
    const res = await upsert("op-1", fact("a", { importanceScore: 1 }));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: "success", value: { status: "ok", version: 1, changed: true } });
    expect(res.body.value.changeSeq).toMatch(/^[0-9]+$/);
    expect(res.text).toContain('"version":1.0');
    const got = await get("a");
    expect(got.text).toContain('"importanceScore":1.0');
    expect(got.body).not.toHaveProperty("logLines");
  });

  test("convex_encoded_json gives {$integer} back; args are decoded from it", async () => {
    await upsert("op-1", fact("a"));
    const encoded = await call("query", "facts:get", { token: SYNC, externalId: "a" }, { format: "convex_encoded_json" });
    expect(Object.keys(encoded.body.value.changeSeq)).toEqual(["$integer"]);
    // An Int64 where a float64 is expected reaches the validator as a bigint.
    const int64 = await call("query", "facts:listChangedSince", { token: SYNC, limit: { $integer: "BQAAAAAAAAA=" } });
    expect(int64.body.errorMessage).toMatch(/ArgumentValidationError/);
    const malformed = await call("query", "facts:listChangedSince", { token: SYNC, limit: { $float: "AAAAAAAAFEA=" } });
    expect(malformed.status).toBe(400);
    expect(malformed.body.code).toBe("InvalidArgs");
  });

  test("function failures are HTTP 200 with status error", async () => {
    const missing = await call("query", "facts:nope", { token: SYNC });
    expect(missing.status).toBe(200);
    expect(missing.body.errorMessage).toMatch(/Could not find public function for 'facts:nope'/);
    const internalOnly = await call("mutation", "facts:trimAppliedOps", {});
    expect(internalOnly.body.errorMessage).toMatch(/Could not find public function/);
    const wrongKind = await call("query", "facts:upsert", {});
    expect(wrongKind.body.errorMessage).toMatch(/as Query, but it is defined as Mutation/);
    const badArgs = await upsert("op-1", fact("a", { colour: "red" }));
    expect(badArgs.body.errorMessage).toMatch(/ArgumentValidationError/);
    const badToken = await call("query", "facts:get", { token: "guess", externalId: "a" });
    expect(badToken.body).toMatchObject({ status: "error", errorData: { code: "unauthorized" } });
    expect(badToken.text).not.toContain(SYNC);
  });

  test("non-function failures are {code, message} with an HTTP status", async () => {
    const res = await fetch(`${base}/api/mutation`, { method: "POST", body: "{not json" });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: "BadJsonBody" });
    const nowhere = await fetch(`${base}/api/query_batch`, { method: "POST", body: "{}" });
    expect(nowhere.status).toBe(404);
  });

  test("Authorization: right keys pass, a wrong one is a 401", async () => {
    expect((await upsert("op-1", fact("a"), {}, { auth: `Convex ${ADMIN}` })).body.status).toBe("success");
    expect((await upsert("op-2", fact("b"), {}, { auth: `Bearer ${USER}` })).body.status).toBe("success");
    const wrongKey = await upsert("op-3", fact("c"), {}, { auth: "Convex not-the-key" });
    expect(wrongKey.status).toBe(401);
    expect(wrongKey.body).toEqual({ code: "BadAdminKey", message: expect.any(String) });
    expect((await upsert("op-4", fact("d"), {}, { auth: "Bearer forged" })).status).toBe(401);
    expect((await dump()).facts.map((f) => f.externalId).sort()).toEqual(["a", "b"]);
    const { body } = await control("GET", "/log");
    expect(body.requests.map((r) => r.auth)).toEqual(["admin", "user", "bad", "bad"]);
    expect(JSON.stringify(body)).not.toContain(SYNC);
    expect(JSON.stringify(body)).not.toContain(ADMIN);
  });
});

describe("faults", () => {
  test("close: the socket is dropped and nothing runs", async () => {
    await fault({ kind: "close" });
    await expect(upsert("op-1", fact("a"))).rejects.toThrow();
    expect((await dump()).facts).toEqual([]);
    expect((await upsert("op-1", fact("a"))).body.value.version).toBe(1);
  });

  test("down: connections are refused for a while, then served again", async () => {
    await fault({ kind: "down", ms: 400 });
    await expect(get("a")).rejects.toThrow();
    const refused = await get("a").catch((e) => e);
    expect(refused.cause?.code).toBe("ECONNREFUSED");
    await sleep(600);
    expect((await get("a")).body).toEqual({ status: "success", value: null });
  });

  test("delay: the client times out but the mutation still commits; the retry replays", async () => {
    await fault({ kind: "delay", ms: 500 });
    await expect(upsert("op-1", fact("a"), {}, { timeoutMs: 100 })).rejects.toThrow();
    await sleep(700);
    const stored = await get("a");
    expect(stored.body.value.version).toBe(1);
    const retry = await upsert("op-1", fact("a"));
    expect(retry.body.value).toMatchObject({ status: "ok", version: 1, changed: true, changeSeq: stored.body.value.changeSeq });
  });

  test("delay: a request still sleeping when the test resets never runs", async () => {
    await fault({ kind: "delay", ms: 400 });
    const pending = upsert("op-1", fact("a")).catch((e) => e);
    await sleep(100);
    await control("POST", "/reset");
    expect(await pending).toBeInstanceOf(Error);
    expect((await dump()).facts).toEqual([]);
  });

  test("commit_then_drop: the write lands, the response is lost, the retry gets the first result", async () => {
    await fault({ kind: "commit_then_drop", path: "facts:upsert" });
    await expect(upsert("op-1", fact("a"))).rejects.toThrow();
    expect((await dump()).facts).toHaveLength(1);
    const retry = await upsert("op-1", fact("a"));
    expect(retry.body.value).toMatchObject({ status: "ok", version: 1, changed: true });
    const log = (await control("GET", "/log")).body.requests;
    expect(log.map((r) => r.outcome)).toEqual(["fault:commit_then_drop", "success"]);
  });

  test("status: 503 and 429 with Retry-After, count consumed in order", async () => {
    await fault([
      { kind: "status", status: 503, retryAfter: 2 },
      { kind: "status", status: 429, retryAfter: 7, count: 2 },
    ]);
    const first = await get("a");
    expect(first.status).toBe(503);
    expect(first.headers.get("retry-after")).toBe("2");
    expect(first.body).toMatchObject({ code: "ServiceUnavailable" });
    for (let i = 0; i < 2; i++) {
      const limited = await get("a");
      expect(limited.status).toBe(429);
      expect(limited.headers.get("retry-after")).toBe("7");
    }
    expect((await get("a")).status).toBe(200);
  });

  test("html_500: an HTML error page, not JSON", async () => {
    await fault({ kind: "html_500" });
    const res = await upsert("op-1", fact("a"));
    expect(res.status).toBe(500);
    expect(res.headers.get("content-type")).toBe("text/html");
    expect(res.text).toMatch(/^<html>/);
    expect((await dump()).facts).toEqual([]);
  });

  test("paused: the deployment's function error, nothing written", async () => {
    await fault({ kind: "paused", count: 1 });
    const res = await upsert("op-1", fact("a"));
    expect(res.status).toBe(200);
    expect(res.body.status).toBe("error");
    expect(res.body.errorMessage).toMatch(/deployment is paused/);
    expect((await dump()).facts).toEqual([]);
    expect((await upsert("op-1", fact("a"))).body.value.status).toBe("ok");
  });

  test("write_before: another writer lands between our pull and our push", async () => {
    await upsert("op-1", fact("a"));
    const pulled = await get("a");
    await fault({
      kind: "write_before",
      path: "facts:upsert",
      write: { path: "facts:upsert", args: { opId: "other-1", fact: fact("a", { text: "from the other machine" }), device: "desktop" } },
    });
    const push = await upsert("op-2", fact("a", { text: "mine" }), { baseVersion: pulled.body.value.version });
    expect(push.body.value).toMatchObject({ status: "conflict", current: { version: 2, text: "from the other machine", lastDevice: "desktop" } });
    const log = (await control("GET", "/log")).body.requests;
    // The push is logged when it arrives, the other writer's run right after.
    expect(log.map((r) => [r.source, r.fault])).toEqual([
      ["client", undefined],
      ["client", undefined],
      ["client", "write_before"],
      ["control", undefined],
    ]);
  });

  test("a fault narrowed to one function leaves others alone; bad specs are refused", async () => {
    await fault({ kind: "status", status: 503, path: "facts:upsert" });
    expect((await get("a")).status).toBe(200);
    expect((await upsert("op-1", fact("a"))).status).toBe(503);
    const bad = await fault({ kind: "teleport" });
    expect(bad.status).toBe(400);
    expect((await fault({ kind: "status", status: 200 })).status).toBe(400);
  });
});

describe("control API", () => {
  test("run acts as a concurrent writer; reset wipes state, faults and log", async () => {
    const ran = await control("POST", "/run", { path: "facts:upsert", args: { opId: "c-1", fact: fact("a") } });
    expect(ran.body).toMatchObject({ status: "success", value: { status: "ok", version: 1 } });
    const ranQuery = await control("POST", "/run", { route: "query", path: "facts:get", args: { externalId: "a" } });
    expect(ranQuery.body.value.lastOpId).toBe("c-1");
    await fault({ kind: "paused", count: 5 });
    await control("POST", "/reset");
    expect((await control("GET", "/faults")).body.pending).toEqual([]);
    expect((await control("GET", "/log")).body.requests).toEqual([]);
    expect((await get("a")).body.value).toBeNull();
  });
});

describe("process", () => {
  test("--exit-with-parent: the double exits when its stdin closes", async () => {
    const other = spawn(process.execPath, [SERVER, "--exit-with-parent"], { stdio: ["pipe", "pipe", "inherit"] });
    const [first] = await once(createInterface({ input: other.stdout }), "line");
    expect(first).toMatch(/^LISTENING \d+$/);
    other.stdin.end();
    const [code] = await once(other, "exit");
    expect(code).toBe(0);
  });
});
