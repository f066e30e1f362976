// Convex HTTP API wire format, as the double speaks it: value encodings,
// JSON text with floats written the way the Rust backend writes them, and the
// response envelopes.
import { randomBytes } from "node:crypto";
import { convexToJson, jsonToConvex } from "convex/values";

export const FORMATS = ["json", "convex_encoded_json"];
export const ROUTES = new Set(["query", "mutation", "action"]);

/** Arguments arrive as "convex encoded JSON" ({"$integer": ...} for Int64). */
export function decodeArgs(raw) {
  const args = Array.isArray(raw) ? (raw.length === 1 ? raw[0] : undefined) : raw;
  if (args === undefined || args === null || typeof args !== "object" || Array.isArray(args)) {
    throw new WireError(400, "InvalidArgs", "args must be an object");
  }
  try {
    return jsonToConvex(args);
  } catch (e) {
    throw new WireError(400, "InvalidArgs", `args are not valid convex-encoded JSON: ${e.message}`);
  }
}

function base64(buffer) {
  return Buffer.from(buffer).toString("base64");
}

// format "json": Int64 as a decimal string, bytes as base64, non-finite
// floats as their names; everything else as plain JSON.
function toCleanJson(value) {
  if (typeof value === "bigint") return value.toString();
  if (typeof value === "number") return Number.isFinite(value) ? value : String(value);
  if (value instanceof ArrayBuffer) return base64(value);
  if (Array.isArray(value)) return value.map(toCleanJson);
  if (value !== null && typeof value === "object") {
    const out = {};
    for (const [key, item] of Object.entries(value)) {
      if (item !== undefined) out[key] = toCleanJson(item);
    }
    return out;
  }
  return value;
}

/** A function's return value in the requested format. */
export function exportValue(value, format) {
  return format === "convex_encoded_json" ? convexToJson(value) : toCleanJson(value);
}

/**
 * JSON text where every number is a float written with a decimal point or
 * exponent ("3.0", not "3"), as the backend's serializer does; JSON.stringify
 * would write "3" and a Python client would read an int.
 */
export function stringifyFloats(value) {
  if (value === null || value === undefined) return "null";
  switch (typeof value) {
    case "number": {
      if (!Number.isFinite(value)) return "null";
      if (Object.is(value, -0)) return "-0.0";
      const text = JSON.stringify(value);
      return /[.eE]/.test(text) ? text : `${text}.0`;
    }
    case "string":
    case "boolean":
      return JSON.stringify(value);
    case "object": {
      if (Array.isArray(value)) return `[${value.map(stringifyFloats).join(",")}]`;
      const parts = [];
      for (const [key, item] of Object.entries(value)) {
        if (item !== undefined) parts.push(`${JSON.stringify(key)}:${stringifyFloats(item)}`);
      }
      return `{${parts.join(",")}}`;
    }
    default:
      throw new TypeError(`cannot write ${typeof value} as JSON`);
  }
}

/** A failure outside any function: HTTP status plus {code, message}. */
export class WireError extends Error {
  constructor(status, code, message, headers = {}) {
    super(message);
    this.status = status;
    this.code = code;
    this.headers = headers;
  }
}

export function requestId() {
  return randomBytes(8).toString("hex");
}

export const PAUSED_MESSAGE =
  "Cannot run functions while this deployment is paused. " +
  "Resume the deployment in the dashboard settings to allow functions to run.";

/** The HTTP 200 body of a failed function, shaped like the backend's. */
export function functionErrorBody(error, format, reqId) {
  const data = error?.data;
  const isConvexError = data !== undefined && (error.name === "ConvexError" || error.constructor?.name === "ConvexError");
  const raw = String(error?.message ?? error);
  let detail;
  if (isConvexError) {
    detail = `Uncaught ConvexError: ${typeof data === "string" ? data : JSON.stringify(toCleanJson(data))}`;
  } else if (/^(ArgumentValidationError|Could not find|Trying to execute|Cannot run functions)/.test(raw)) {
    detail = raw;
  } else {
    detail = `Uncaught Error: ${raw}`;
  }
  const body = { status: "error", errorMessage: `[Request ID: ${reqId}] Server Error\n${detail}` };
  if (isConvexError) body.errorData = exportValue(data, format);
  return body;
}
