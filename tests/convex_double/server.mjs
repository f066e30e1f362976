#!/usr/bin/env node
// Entry point: `node tests/convex_double/server.mjs [--port N] ...`.
// Prints "LISTENING <port>" as its first stdout line once it accepts requests.
import { parseArgs } from "node:util";
import { register } from "tsx/esm/api";

// One loader for the whole process, so convex/*.ts and convex-test share a
// single copy of the "convex" package (its classes are checked by instanceof).
register();

const { values } = parseArgs({
  options: {
    port: { type: "string" },
    host: { type: "string" },
    "admin-key": { type: "string" },
    "user-token": { type: "string" },
    "sync-token": { type: "string" },
    "require-auth": { type: "boolean" },
    "exit-with-parent": { type: "boolean" },
  },
});

const env = process.env;
const port = Number(values.port ?? env.CONVEX_DOUBLE_PORT ?? 0);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  process.stderr.write(`convex double: bad port ${values.port ?? env.CONVEX_DOUBLE_PORT}\n`);
  process.exit(2);
}
const host = values.host ?? env.CONVEX_DOUBLE_HOST ?? "127.0.0.1";
if (!["127.0.0.1", "::1", "localhost"].includes(host)) {
  process.stderr.write("convex double: listens on loopback only\n");
  process.exit(2);
}

const { createDouble } = await import("./double.mjs");
const double = await createDouble({
  host,
  adminKey: values["admin-key"] ?? env.CONVEX_DOUBLE_ADMIN_KEY ?? "double-admin-key",
  userToken: values["user-token"] ?? env.CONVEX_DOUBLE_USER_TOKEN,
  syncToken: values["sync-token"] ?? env.CONVEX_DOUBLE_SYNC_TOKEN ?? "double-sync-token",
  requireAuth: values["require-auth"] ?? env.CONVEX_DOUBLE_REQUIRE_AUTH === "1",
});
const actual = await double.listen(port);
process.stdout.write(`LISTENING ${actual}\n`);

let stopping = false;
async function stop() {
  if (stopping) return;
  stopping = true;
  await double.close();
  process.exit(0);
}
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
// With a pipe on stdin, the double dies with the test process that spawned it.
if (values["exit-with-parent"]) {
  process.stdin.on("end", stop);
  process.stdin.on("close", stop);
  process.stdin.resume();
}
