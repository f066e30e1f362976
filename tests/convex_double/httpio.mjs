// Small HTTP helpers shared by the API and control routes.
import { WireError } from "./wire.mjs";

const MAX_BODY = 8 * 1024 * 1024;

/** A copy of `value` with secret-looking fields (token, key, ...) blanked. */
export function redact(value) {
  if (Array.isArray(value)) return value.map(redact);
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k, /token|secret|password|key$/i.test(k) ? "[redacted]" : redact(v)]),
    );
  }
  return value;
}

async function readBody(req) {
  const chunks = [];
  let size = 0;
  for await (const chunk of req) {
    size += chunk.length;
    if (size > MAX_BODY) throw new WireError(413, "RequestTooLarge", `body is larger than ${MAX_BODY} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** The request body parsed as JSON (empty body: {}); a WireError if it is not JSON. */
export async function readJson(req) {
  const text = await readBody(req);
  try {
    return text === "" ? {} : JSON.parse(text);
  } catch (e) {
    throw new WireError(400, "BadJsonBody", `Failed to parse the request body as JSON: ${e.message}`);
  }
}

