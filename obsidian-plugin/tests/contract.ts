/**
 * The Engram HTTP contract as the backend declares it: the OpenAPI 3.1 document it generates
 * (backend/engram/server/openapi.json, `python -m engram.server.openapi`). The fake backend and
 * the client tests check every request and reply against it, and the decoder tests feed the
 * decoders replies made from its schemas, so a field the backend renames or retypes fails a
 * test here as well as there.
 */
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import Ajv2020, { type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

export type Json = Record<string, unknown>;

/** The document; ENGRAM_OPENAPI names another copy (an older build's, a hand-edited one). */
export const OPENAPI_FILE =
	process.env.ENGRAM_OPENAPI ?? resolve(dirname(fileURLToPath(import.meta.url)), "../../backend/engram/server/openapi.json");

const SCHEMAS_ID = "engram-openapi-schemas";
const COMPONENT = "#/components/schemas/";

let cached: { doc: Json; ajv: Ajv2020; params: Ajv2020 } | null = null;

function isObj(v: unknown): v is Json {
	return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** `#/components/schemas/X` points into the one schema that holds every component as `$defs`. */
function rewriteRefs(v: unknown): unknown {
	if (Array.isArray(v)) return v.map(rewriteRefs);
	if (!isObj(v)) return v;
	const out: Json = {};
	for (const [k, x] of Object.entries(v)) {
		out[k] = k === "$ref" && typeof x === "string" && x.startsWith(COMPONENT) ? `${SCHEMAS_ID}#/$defs/${x.slice(COMPONENT.length)}` : rewriteRefs(x);
	}
	return out;
}

function newAjv(coerceTypes: boolean): Ajv2020 {
	// Strict throughout: an unknown keyword or format, or a keyword its type does not have (a
	// bound on a `{"type": "null"}` branch), fails (documentProblems checks the whole document).
	const ajv = new Ajv2020({ strict: true, allErrors: true, coerceTypes });
	addFormats(ajv);
	return ajv;
}

function load(): { doc: Json; ajv: Ajv2020; params: Ajv2020 } {
	if (cached) return cached;
	let doc: Json;
	try {
		doc = JSON.parse(readFileSync(OPENAPI_FILE, "utf8")) as Json;
	} catch (err) {
		throw new Error(`cannot read the OpenAPI document ${OPENAPI_FILE}: ${(err as Error).message}`);
	}
	const schemas = (doc.components as Json | undefined)?.schemas;
	if (!isObj(schemas) || !isObj(doc.paths)) throw new Error(`${OPENAPI_FILE} has no paths or components.schemas`);
	const ajv = newAjv(false);
	const params = newAjv(true);
	for (const a of [ajv, params]) a.addSchema({ $id: SCHEMAS_ID, $defs: rewriteRefs(schemas) });
	cached = { doc, ajv, params };
	return cached;
}

export function openapi(): Json {
	return load().doc;
}

/** Follow `$ref`s (`#/a/b/c`) inside the document until a node that is not one. */
export function deref(node: unknown): Json {
	let n = node;
	for (let hops = 0; isObj(n) && typeof n.$ref === "string"; hops++) {
		if (hops > 20 || !n.$ref.startsWith("#/")) throw new Error(`cannot follow $ref ${String(n.$ref)}`);
		let at: unknown = openapi();
		for (const part of n.$ref.slice(2).split("/")) {
			at = isObj(at) ? at[part.replace(/~1/g, "/").replace(/~0/g, "~")] : undefined;
		}
		if (at === undefined) throw new Error(`$ref ${n.$ref} points nowhere`);
		n = at;
	}
	if (!isObj(n)) throw new Error(`not a schema or object: ${JSON.stringify(n)}`);
	return n;
}

/** A component schema by name (`Fact`, `Status`…). */
export function component(name: string): Json {
	return deref({ $ref: `${COMPONENT}${name}` });
}

const validators = new WeakMap<object, ValidateFunction>();
const coercing = new WeakMap<object, ValidateFunction>();

/** A compiled validator per schema object; `coerce` reads strings as the types they spell
 * (query and path parameters arrive as text). */
function validator(schema: Json, coerce = false): ValidateFunction {
	const cache = coerce ? coercing : validators;
	let v = cache.get(schema);
	if (!v) {
		const { ajv, params } = load();
		v = (coerce ? params : ajv).compile(rewriteRefs(schema) as Json);
		cache.set(schema, v);
	}
	return v;
}

function describeErrors(errors: ErrorObject[] | null | undefined): string {
	return (errors ?? [])
		.slice(0, 6)
		.map((e) => `${e.instancePath || "(root)"} ${e.message ?? "is invalid"}${e.keyword === "additionalProperties" ? ` (${String((e.params as Json).additionalProperty)})` : ""}`)
		.join("; ");
}

/** Problems of `data` against `schema`, as readable lines (none when it is valid). */
export function schemaProblems(schema: Json, data: unknown): string[] {
	const v = validator(schema);
	return v(data) ? [] : [describeErrors(v.errors)];
}

export interface Route {
	method: string;
	/** The path as the document writes it, e.g. `/v1/facts/{id}`. */
	template: string;
	op: Json;
	pathParams: Record<string, string>;
}

/** The documented operation that serves `method pathname`, or null. */
export function findRoute(method: string, pathname: string): Route | null {
	const m = method.toLowerCase();
	for (const [template, item] of Object.entries(openapi().paths as Json)) {
		const names: string[] = [];
		const pattern = template.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\{(\w+)\}/g, (_s, name: string) => {
			names.push(name);
			return "([^/]+)";
		});
		const match = new RegExp(`^${pattern}$`).exec(pathname);
		const op = isObj(item) ? item[m] : undefined;
		if (!match || !isObj(op)) continue;
		const pathParams: Record<string, string> = {};
		names.forEach((n, i) => (pathParams[n] = decodeURIComponent(match[i + 1] ?? "")));
		return { method: method.toUpperCase(), template, op, pathParams };
	}
	return null;
}

/** The operation at `"METHOD /template"`, e.g. `"GET /v1/facts/{id}"`. */
export function operation(route: string): Json {
	const [method = "", template = ""] = route.split(" ");
	const item = (openapi().paths as Json)[template];
	const op = isObj(item) ? item[method.toLowerCase()] : undefined;
	if (!isObj(op)) throw new Error(`the OpenAPI document has no ${route}`);
	return op;
}

/** The documented reply of an operation for a status: `undefined` when the status is not
 * documented, null when the reply has no body (204), else its JSON schema. */
export function replySchema(op: Json, status: number): Json | null | undefined {
	const responses = op.responses as Json;
	const entry = responses[String(status)] ?? responses.default;
	return entry === undefined ? undefined : bodySchema(entry);
}

/** The JSON schema of a response entry (`$ref`s followed), null when it has no body. */
function bodySchema(entry: unknown): Json | null {
	const schema = (deref(entry).content as Json | undefined)?.["application/json"];
	return isObj(schema) && isObj(schema.schema) ? schema.schema : null;
}

/** The one success status an operation documents (200, 201, 202 or 204). */
export function successStatus(op: Json): number {
	const codes = Object.keys(op.responses as Json).filter((c) => /^2\d\d$/.test(c));
	if (codes.length !== 1) throw new Error(`expected one success status, found ${codes.join(", ")}`);
	return Number(codes[0]);
}

/** The request body schema of an operation, or null when it takes none. */
export function requestSchema(op: Json): { schema: Json; required: boolean } | null {
	const body = op.requestBody === undefined ? null : deref(op.requestBody);
	const schema = (body?.content as Json | undefined)?.["application/json"];
	if (!body || !isObj(schema) || !isObj(schema.schema)) return null;
	return { schema: schema.schema, required: body.required === true };
}

/** Does a parameter's schema take a list (possibly a nullable one)? */
function isList(schema: unknown): boolean {
	if (!isObj(schema)) return false;
	const s = deref(schema);
	const types = Array.isArray(s.type) ? s.type : [s.type];
	const branches = (s.anyOf ?? s.oneOf) as unknown[] | undefined;
	return types.includes("array") || (branches ?? []).some(isList);
}

function parameters(op: Json): Json[] {
	return ((op.parameters as unknown[] | undefined) ?? []).map(deref);
}

/** Why a request does not match the document (empty when it does). */
export function checkRequest(method: string, url: string, body: string | undefined): string[] {
	const u = new URL(url);
	const route = findRoute(method, u.pathname);
	if (!route) return [`${method} ${u.pathname} is not in the OpenAPI document`];
	const where = `${route.method} ${route.template}`;
	const problems: string[] = [];
	const params = parameters(route.op);
	const check = (p: Json, raw: string | string[]): void => {
		// parameters arrive as text: the coercing validator reads "20" as 20, "true" as true
		const v = validator(p.schema as Json, true);
		const shown = typeof raw === "string" ? raw : JSON.stringify(raw);
		if (!v(raw)) problems.push(`${where}: ${String(p.in)} parameter ${String(p.name)}=${shown}: ${describeErrors(v.errors)}`);
	};
	for (const p of params.filter((x) => x.in === "path")) check(p, route.pathParams[String(p.name)] ?? "");
	const query = params.filter((x) => x.in === "query");
	for (const name of new Set(u.searchParams.keys())) {
		const p = query.find((x) => x.name === name);
		const values = u.searchParams.getAll(name);
		if (!p) problems.push(`${where}: unknown query parameter ${name}`);
		// a list is its parameter repeated (OpenAPI's form style, exploded); anything else is given once
		else if (isList(p.schema)) check(p, values);
		else if (values.length > 1) problems.push(`${where}: query parameter ${name} given ${values.length} times`);
		else check(p, values[0] ?? "");
	}
	for (const p of query) if (p.required === true && !u.searchParams.has(String(p.name))) problems.push(`${where}: missing query parameter ${String(p.name)}`);
	const expected = requestSchema(route.op);
	if (body === undefined || body === "") {
		if (expected?.required) problems.push(`${where}: the body is required`);
	} else if (!expected) {
		problems.push(`${where}: takes no body`);
	} else {
		let parsed: unknown;
		try {
			parsed = JSON.parse(body);
		} catch {
			return [...problems, `${where}: the body is not JSON`];
		}
		for (const p of schemaProblems(expected.schema, parsed)) problems.push(`${where} body: ${p}`);
	}
	return problems;
}

/** Why a reply does not match the document for its route and status (empty when it does). */
export function checkReply(method: string, url: string, status: number, text: string): string[] {
	const u = new URL(url);
	const route = findRoute(method, u.pathname);
	if (!route) return []; // checkRequest said it
	const where = `${route.method} ${route.template} → ${status}`;
	const schema = replySchema(route.op, status);
	if (schema === undefined) return [`${where}: status not documented`];
	if (schema === null) return text === "" ? [] : [`${where}: documented without a body, sent ${text.slice(0, 80)}`];
	let parsed: unknown;
	try {
		parsed = JSON.parse(text);
	} catch {
		return [`${where}: the reply is not JSON`];
	}
	return schemaProblems(schema, parsed).map((p) => `${where}: ${p}`);
}

const violations: string[] = [];

/** Remember contract problems seen during a test; tests/contractSetup.ts fails the test on them. */
export function recordViolations(problems: readonly string[]): void {
	violations.push(...problems);
}

/** The problems recorded since the last call, cleared. */
export function takeViolations(): string[] {
	return violations.splice(0);
}

/** Every schema in the document (each component, parameter, request body and reply), compiled
 * with the same strict validators the checks use: why any of them does not compile. Strictness
 * is otherwise only met by the schemas a test happens to touch. */
export function documentProblems(): string[] {
	const problems: string[] = [];
	const compile = (where: string, schema: unknown, coerce = false): void => {
		try {
			if (!isObj(schema)) throw new Error("not a schema");
			validator(schema, coerce);
		} catch (err) {
			problems.push(`${where}: ${(err as Error).message}`);
		}
	};
	const doc = openapi();
	for (const name of Object.keys((doc.components as Json).schemas as Json)) compile(`component ${name}`, { $ref: `${COMPONENT}${name}` });
	for (const [template, item] of Object.entries(doc.paths as Json)) {
		if (!isObj(item)) continue;
		for (const [method, op] of Object.entries(item)) {
			if (!isObj(op) || !isObj(op.responses)) continue;
			const where = `${method.toUpperCase()} ${template}`;
			for (const p of parameters(op)) compile(`${where} ${String(p.in)} parameter ${String(p.name)}`, p.schema, true);
			const body = requestSchema(op);
			if (body) compile(`${where} body`, body.schema);
			for (const [status, entry] of Object.entries(op.responses)) {
				const reply = bodySchema(entry);
				if (reply) compile(`${where} → ${status}`, reply);
			}
		}
	}
	return problems;
}
