// A loopback stand-in for a Convex deployment: our real convex/ functions run
// in convex-test's in-memory backend, behind Convex's public HTTP API, with a
// control API under /_double/ for faults, logs and a second writer.
import { readdirSync } from "node:fs";
import http from "node:http";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { convexTest } from "convex-test";
import { makeFunctionReference } from "convex/server";
import { handleControl } from "./control.mjs";
import { FaultQueue } from "./faults.mjs";
import { readJson, redact } from "./httpio.mjs";
import {
  FORMATS,
  ROUTES,
  PAUSED_MESSAGE,
  WireError,
  decodeArgs,
  exportValue,
  functionErrorBody,
  requestId,
  stringifyFloats,
} from "./wire.mjs";

const CONVEX_DIR = fileURLToPath(new URL("../../convex/", import.meta.url));
const MAX_LOG = 10_000;
const KIND_NAMES = { query: "Query", mutation: "Mutation", action: "Action" };

// convex-test finds function modules through a map whose keys share the
// prefix of the "_generated" entry ("./convex/").
function moduleMap() {
  const map = {};
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const abs = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(abs);
      else if (/\.(ts|js)$/.test(entry.name) && !/\.(d|test)\.ts$/.test(entry.name)) {
        const key = `./convex/${path.relative(CONVEX_DIR, abs).split(path.sep).join("/")}`;
        map[key] = () => import(pathToFileURL(abs).href);
      }
    }
  };
  walk(CONVEX_DIR);
  return map;
}

class FunctionError extends Error {}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Build a double; call listen() to serve it. */
export async function createDouble({ adminKey, userToken, syncToken, requireAuth = false, host = "127.0.0.1" }) {
  process.env.ENGRAM_SYNC_TOKEN = syncToken;
  const modules = moduleMap();
  const schema = (await import(pathToFileURL(path.join(CONVEX_DIR, "schema.ts")).href)).default;
  return new Double({ modules, schema, adminKey, userToken, syncToken, requireAuth, host });
}

class Double {
  constructor(options) {
    Object.assign(this, options);
    this.t = convexTest(this.schema, this.modules);
    this.faults = new FaultQueue();
    this.log = [];
    this.seq = 0;
    this.epoch = 0;
    this.sockets = new Set();
    this.port = 0;
    this.server = http.createServer((req, res) => {
      this.handle(req, res).catch((e) => {
        process.stderr.write(`convex double: ${e.stack ?? e}\n`);
        if (!res.headersSent && !res.destroyed) this.sendJson(res, 500, { code: "InternalServerError", message: "double failed" });
      });
    });
    this.server.on("connection", (socket) => {
      this.sockets.add(socket);
      socket.on("close", () => this.sockets.delete(socket));
    });
  }

  /** Listen on `port` (0 picks a free one); resolves to the port. */
  async listen(port) {
    await new Promise((resolve, reject) => {
      this.server.once("error", reject);
      this.server.listen(port, this.host, () => {
        this.server.off("error", reject);
        resolve();
      });
    });
    this.port = this.server.address().port;
    return this.port;
  }

  async close() {
    for (const socket of this.sockets) socket.destroy();
    await new Promise((resolve) => this.server.close(() => resolve()));
  }

  // Connection refused for `ms`: stop listening and drop every open socket.
  goDown(ms) {
    if (!this.server.listening) return;
    const closed = new Promise((resolve) => this.server.close(() => resolve()));
    for (const socket of this.sockets) socket.destroy();
    Promise.all([closed, sleep(ms)])
      .then(() => this.listen(this.port))
      .catch((e) => process.stderr.write(`convex double: could not listen again on ${this.port}: ${e}\n`));
  }

  sendJson(res, status, body, headers = {}) {
    this.send(res, status, JSON.stringify(body), { "content-type": "application/json", ...headers });
  }

  send(res, status, text, headers) {
    if (res.destroyed || res.socket?.destroyed) return;
    res.writeHead(status, { "content-length": Buffer.byteLength(text), ...headers });
    res.end(text);
  }

  async handle(req, res) {
    const url = new URL(req.url, "http://double");
    if (url.pathname.startsWith("/_double/")) return await handleControl(this, req, res, url);
    if (req.method === "GET" && url.pathname === "/version") {
      return this.send(res, 200, "engram-convex-double", { "content-type": "text/plain" });
    }
    const route = /^\/api\/(\w+)$/.exec(url.pathname)?.[1];
    if (!ROUTES.has(route)) return this.sendJson(res, 404, { code: "NotFound", message: `No route for ${url.pathname}` });
    if (req.method !== "POST") return this.sendJson(res, 405, { code: "MethodNotAllowed", message: "use POST" });
    await this.api(req, res, route);
  }

  async api(req, res, route) {
    const started = Date.now();
    const entry = { seq: ++this.seq, at: new Date(started).toISOString(), source: "client", route };
    this.pushLog(entry);
    const finish = (outcome, httpStatus) => Object.assign(entry, { outcome, httpStatus, durationMs: Date.now() - started });
    try {
      const body = await readJson(req);
      entry.path = typeof body.path === "string" ? body.path : undefined;
      entry.args = redact(body.args);
      entry.auth = this.authKind(req.headers.authorization);
      const fault = this.faults.take(route, entry.path);
      if (fault !== null) {
        entry.fault = fault.kind;
        const handled = await this.applyFault(fault, req, res, finish);
        if (handled) return;
      }
      if (entry.auth === "bad") throw this.authError(req.headers.authorization);
      if (entry.auth === "none" && this.requireAuth) {
        throw new WireError(401, "Unauthenticated", "This deployment requires an Authorization header");
      }
      if (typeof body.path !== "string") throw new WireError(400, "BadJsonBody", "missing field `path`");
      const format = body.format ?? (req.headers["convex-client"] ? "convex_encoded_json" : "json");
      if (!FORMATS.includes(format)) throw new WireError(400, "BadFormat", `Unknown format ${JSON.stringify(format)}`);
      const reply = await this.runFunction(route, body.path, decodeArgs(body.args ?? {}), format);
      if (fault?.kind === "commit_then_drop") {
        req.socket.destroy();
        return finish("fault:commit_then_drop", null);
      }
      finish(reply.status, 200);
      this.send(res, 200, stringifyFloats(reply), { "content-type": "application/json" });
    } catch (e) {
      if (!(e instanceof WireError)) throw e;
      finish("http_error", e.status);
      this.sendJson(res, e.status, { code: e.code, message: e.message }, e.headers);
    }
  }

  // Returns true when the fault produced the whole response.
  async applyFault(fault, req, res, finish) {
    switch (fault.kind) {
      case "close":
        req.socket.destroy();
        finish("fault:close", null);
        return true;
      case "down":
        finish("fault:down", null);
        this.goDown(fault.ms);
        return true;
      case "delay": {
        const epoch = this.epoch;
        await sleep(fault.ms);
        if (this.epoch === epoch) return false;
        // A reset came while we slept: this request belongs to a finished test.
        req.socket.destroy();
        finish("dropped_by_reset", null);
        return true;
      }
      case "status": {
        const headers = fault.retryAfter === undefined ? {} : { "retry-after": String(fault.retryAfter) };
        finish("fault:status", fault.status);
        this.sendJson(res, fault.status, { code: fault.code, message: fault.message }, headers);
        return true;
      }
      case "html_500":
        finish("fault:html_500", 500);
        this.send(res, 500, "<html><head><title>500 Internal Server Error</title></head><body><h1>Internal Server Error</h1></body></html>", {
          "content-type": "text/html",
        });
        return true;
      case "paused": {
        finish("fault:paused", 200);
        const body = { status: "error", errorMessage: `[Request ID: ${requestId()}] Server Error\n${PAUSED_MESSAGE}` };
        this.send(res, 200, stringifyFloats(body), { "content-type": "application/json" });
        return true;
      }
      case "write_before":
        await this.runAsOtherWriter("mutation", fault.write.path, fault.write.args ?? {});
        return false;
      default:
        return false;
    }
  }

  authKind(header) {
    if (header === undefined) return "none";
    const [scheme, value] = [header.slice(0, header.indexOf(" ")), header.slice(header.indexOf(" ") + 1)];
    if (scheme === "Convex" && value === this.adminKey) return "admin";
    if (scheme === "Bearer" && this.userToken !== undefined && value === this.userToken) return "user";
    return "bad";
  }

  authError(header) {
    if (header.startsWith("Convex ")) {
      return new WireError(401, "BadAdminKey", "The provided admin key was invalid for this instance");
    }
    if (header.startsWith("Bearer ")) {
      return new WireError(401, "InvalidAuthHeader", "Could not verify the token in the Authorization header");
    }
    return new WireError(401, "InvalidAuthHeader", "Authorization header must be `Convex <key>` or `Bearer <token>`");
  }

  // Run one public function the way the backend's /api/<route> does and
  // return the response envelope.
  async runFunction(route, udfPath, args, format) {
    const reqId = requestId();
    try {
      const canonical = await this.checkFunction(route, udfPath);
      const value = await this.t[route](makeFunctionReference(canonical), args);
      return { status: "success", value: exportValue(value, format) };
    } catch (e) {
      if (e instanceof Error && e.message.startsWith("Validator error: ")) {
        e.message = e.message.replace("Validator error: ", "ArgumentValidationError: ");
      }
      return functionErrorBody(e, format, reqId);
    }
  }

  async checkFunction(route, udfPath) {
    const [rawModule, exportName = "default"] = udfPath.split(":");
    const modulePath = rawModule.replace(/\.js$/, "");
    const notFound = () =>
      new FunctionError(
        `Could not find public function for '${udfPath}'. Did you forget to run \`npx convex dev\` or \`npx convex deploy\`?`,
      );
    const load = this.modules[`./convex/${modulePath}.ts`] ?? this.modules[`./convex/${modulePath}.js`];
    if (load === undefined || modulePath.startsWith("_generated") || /(^|\/)\.\.?(\/|$)/.test(modulePath)) throw notFound();
    const fn = (await load())[exportName];
    if (fn === undefined || !fn.isPublic || !(fn.isQuery || fn.isMutation || fn.isAction)) throw notFound();
    const actual = fn.isQuery ? "query" : fn.isMutation ? "mutation" : "action";
    if (actual !== route) {
      throw new FunctionError(`Trying to execute ${udfPath} as ${KIND_NAMES[route]}, but it is defined as ${KIND_NAMES[actual]}.`);
    }
    return `${modulePath}:${exportName}`;
  }

  // A second client: no faults, no auth, the sync token filled in if absent.
  async runAsOtherWriter(route, udfPath, args) {
    const entry = { seq: ++this.seq, at: new Date().toISOString(), source: "control", route, path: udfPath, args: redact(args) };
    this.pushLog(entry);
    const reply = await this.runFunction(route, udfPath, decodeArgs({ token: this.syncToken, ...args }), "json");
    entry.outcome = reply.status;
    return reply;
  }

  pushLog(entry) {
    this.log.push(entry);
    if (this.log.length > MAX_LOG) this.log.splice(0, this.log.length - MAX_LOG);
  }

  reset() {
    this.epoch += 1;
    this.t = convexTest(this.schema, this.modules);
    this.faults.clear();
    this.log = [];
  }

  async dump() {
    const rows = await this.t.run(async (ctx) => ({
      facts: await ctx.db.query("facts").collect(),
      appliedOps: await ctx.db.query("appliedOps").collect(),
    }));
    return exportValue(rows, "json");
  }
}
