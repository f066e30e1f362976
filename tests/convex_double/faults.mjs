// Faults the double injects into the next N matching API requests.

export const FAULT_KINDS = {
  // Destroy the socket as soon as the request arrives: nothing runs.
  close: {},
  // Stop listening (connection refused) for `ms`, dropping open sockets.
  down: { ms: 2_000 },
  // Wait `ms` before handling; the function still runs afterwards, so a
  // client that timed out may find its write committed.
  delay: { ms: 30_000 },
  // Run the function (a mutation commits), then destroy the socket.
  commit_then_drop: {},
  // Answer with an HTTP status and {code, message}; Retry-After if given.
  status: { status: 503 },
  // HTTP 500 with an HTML page, as a proxy in front of the backend may send.
  html_500: {},
  // The function error a paused deployment gives (HTTP 200).
  paused: {},
  // Run `write` ({path, args}) as another client, then handle the request.
  write_before: {},
};

const STATUS_CODES = {
  400: "BadRequest",
  401: "Unauthenticated",
  403: "Forbidden",
  404: "NotFound",
  408: "RequestTimeout",
  409: "OptimisticConcurrencyControlFailure",
  429: "RateLimited",
  500: "InternalServerError",
  502: "BadGateway",
  503: "ServiceUnavailable",
  504: "GatewayTimeout",
};

/** Fill in a fault's defaults; throws on a kind or field that makes no sense. */
export function normalizeFault(spec) {
  if (spec === null || typeof spec !== "object") throw new Error("fault must be an object");
  const defaults = FAULT_KINDS[spec.kind];
  if (defaults === undefined) {
    throw new Error(`unknown fault kind ${JSON.stringify(spec.kind)}; known: ${Object.keys(FAULT_KINDS).join(", ")}`);
  }
  const fault = { count: 1, ...defaults, ...spec };
  if (!Number.isInteger(fault.count) || fault.count < 1) throw new Error("count must be a positive integer");
  if (fault.ms !== undefined && !(Number.isFinite(fault.ms) && fault.ms >= 0)) throw new Error("ms must be >= 0");
  if (fault.kind === "status") {
    if (!Number.isInteger(fault.status) || fault.status < 400 || fault.status > 599) {
      throw new Error("status must be an HTTP error status (400-599)");
    }
    fault.code ??= STATUS_CODES[fault.status] ?? "Error";
    fault.message ??= `Injected HTTP ${fault.status}`;
  }
  if (fault.kind === "write_before" && (typeof fault.write?.path !== "string" || typeof fault.write?.args !== "object")) {
    throw new Error("write_before needs write: {path, args}");
  }
  return fault;
}

/** Queue of pending faults; each matching request takes one use of the first match. */
export class FaultQueue {
  constructor() {
    this.pending = [];
    this.nextId = 1;
  }

  add(spec) {
    const fault = { id: this.nextId++, ...normalizeFault(spec) };
    this.pending.push(fault);
    return fault;
  }

  // `path` narrows a fault to one function ("facts:upsert"), `route` to one
  // endpoint ("mutation").
  take(route, path) {
    const index = this.pending.findIndex(
      (f) => (f.path === undefined || f.path === path) && (f.route === undefined || f.route === route),
    );
    if (index < 0) return null;
    const fault = this.pending[index];
    fault.count -= 1;
    if (fault.count === 0) this.pending.splice(index, 1);
    return fault;
  }

  clear() {
    this.pending = [];
  }
}
