// @vitest-environment node
/**
 * The plugin against the backend's OpenAPI document (backend/engram/server/openapi.json): every
 * decoder reads only properties the document declares and turns replies made from its schemas
 * into the values they carry, and the client sends each route it uses as the document says.
 * The routes still written by hand in openapi_base.json (health, status, index, active note,
 * note metadata) are checked the same way. The fake backend's replies are checked on every
 * request it serves (tests/fakeBackend.ts).
 */
import { describe, expect, it } from "vitest";
import { EngramClient, type HttpRequest, type HttpResponse } from "../src/api/client";
import * as decoders from "../src/api/decode";
import type { FactPatch, IndexRequest, NewFact, SearchFilters, SearchRequest } from "../src/api/types";
import { checkRequest, component, documentProblems, findRoute, openapi, operation, replySchema, schemaProblems, successStatus, type Json } from "./contract";
import { mirrorProblems, sample, trackReads, type SampleMode, type SampleOptions } from "./samples";

/** Values for properties the document types more loosely than the backend fills them: what the
 * backend sends there, as docs/http-api.md says. `syncState` is typed `string`, but the backend
 * only ever sends these four (memory/model.py `Fact.sync_state`). */
const HINTS: SampleOptions["hints"] = {
	"Fact.syncState": ["local", "synced", "pending", "conflict"],
};

/** What the plugin makes of any other value the document allows in a hinted property. */
const OTHERWISE: Record<string, unknown> = {
	"Fact.syncState": "off",
};

interface DecoderCase {
	route: string;
	decode: (v: unknown) => unknown;
	/** The part of the reply the decoded value stands for. */
	part?: (reply: Json) => unknown;
}

const fact = (r: Json): unknown => r.fact;

/** Each reply the client decodes, with the decoder it uses. */
const DECODERS: DecoderCase[] = [
	{ route: "GET /v1/health", decode: decoders.decodeHealth },
	{ route: "GET /v1/status", decode: decoders.decodeStatus },
	{ route: "POST /v1/search", decode: decoders.decodeSearch },
	{ route: "POST /v1/vsearch", decode: decoders.decodeSearch },
	{ route: "POST /v1/query", decode: decoders.decodeQueryRun },
	{ route: "GET /v1/facts", decode: decoders.decodeFacts, part: (r) => r.facts },
	{ route: "GET /v1/facts/{id}", decode: decoders.decodeFactReply, part: fact },
	{ route: "POST /v1/facts", decode: decoders.decodeFactReply, part: fact },
	{ route: "PATCH /v1/facts/{id}", decode: decoders.decodeFactReply, part: fact },
	{ route: "POST /v1/facts/from-note", decode: decoders.decodeFactReply, part: fact },
	{ route: "GET /v1/notes/metadata", decode: decoders.decodeMetadata },
	{ route: "POST /v1/index", decode: decoders.decodeJob, part: (r) => r.job },
];

/** Decoders of what is not an HTTP reply. */
const NOT_REPLIES = new Set(["decodeDiscoveryShape"]);

function successSchema(route: string): Json {
	const op = operation(route);
	const schema = replySchema(op, successStatus(op));
	if (!schema) throw new Error(`${route} documents no reply body`);
	return schema;
}

function escapeRe(s: string): string {
	return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

let variantCount = 0;

/** Enough variants that every enum value and union branch of the document is sampled. */
function variants(): number {
	if (variantCount) return variantCount;
	let most = 1;
	const walk = (v: unknown): void => {
		if (Array.isArray(v)) v.forEach(walk);
		else if (typeof v === "object" && v !== null) {
			for (const [k, x] of Object.entries(v)) {
				if ((k === "enum" || k === "anyOf" || k === "oneOf") && Array.isArray(x)) most = Math.max(most, x.length);
				walk(x);
			}
		}
	};
	walk(openapi());
	for (const values of Object.values(HINTS)) most = Math.max(most, values.length);
	variantCount = most;
	return most;
}

function opts(mode: SampleMode, variant = 0, hints = HINTS): SampleOptions {
	return { mode, variant, hints };
}

describe.each(DECODERS)("$route", ({ route, decode, part }) => {
	const whole = (r: unknown): unknown => (part ? part(r as Json) : r);

	it("is decoded reading only properties the document declares", () => {
		const reads = trackReads(decode, sample(successSchema(route), opts("full")), successSchema(route));
		expect(reads.undeclared, "properties the decoder reads that the document does not have").toEqual([]);
		expect(reads.untyped.filter((n) => !(n in HINTS)), "untyped properties the decoder reads: add what the backend sends to HINTS").toEqual([]);
	});

	it("decodes replies made from its schema to the values they carry", () => {
		const schema = successSchema(route);
		for (let v = 0; v < variants(); v++) {
			const reply = sample(schema, opts("full", v));
			expect(schemaProblems(schema, reply), "the sample itself").toEqual([]);
			expect(mirrorProblems(decode(reply), whole(reply)), JSON.stringify(reply)).toEqual([]);
		}
	});

	it("decodes replies made from its schema without hints, a hinted property's other values as OTHERWISE says", () => {
		// any value the document allows decodes (no protocol error); each value mirrors the
		// reply's, but where a hinted property holds a value the hints do not list
		const schema = successSchema(route);
		const otherwise = Object.entries(OTHERWISE).map(([name, made]) => {
			const prop = name.slice(name.indexOf(".") + 1);
			return new RegExp(`\\.${escapeRe(prop)}: the reply says .*, the decoder made ${escapeRe(JSON.stringify(made))}$`);
		});
		for (let v = 0; v < variants(); v++) {
			const reply = sample(schema, opts("full", v, {}));
			expect(schemaProblems(schema, reply), "the sample itself").toEqual([]);
			const problems = mirrorProblems(decode(reply), whole(reply)).filter((p) => !otherwise.some((re) => re.test(p)));
			expect(problems, JSON.stringify(reply)).toEqual([]);
		}
	});

	it.each(["minimal", "nulls"] as const)("decodes the %s reply the schema allows", (mode) => {
		const schema = successSchema(route);
		const reply = sample(schema, opts(mode));
		expect(schemaProblems(schema, reply), "the sample itself").toEqual([]);
		expect(mirrorProblems(decode(reply), whole(reply), mode === "nulls"), JSON.stringify(reply)).toEqual([]);
	});
});

describe("the OpenAPI document", () => {
	it("compiles, every schema of it, under ajv's strict mode", () => {
		expect(documentProblems()).toEqual([]);
	});

	it("declares each hinted property, and the hinted values are valid for it", () => {
		for (const [name, values] of Object.entries(HINTS)) {
			const [comp = "", prop = ""] = name.split(".");
			const props = component(comp).properties as Json | undefined;
			const schema = props?.[prop] as Json | undefined;
			expect(schema, `${name} is not in the document: drop its hint`).toBeDefined();
			for (const value of values) expect(schemaProblems(schema as Json, value), `${name} = ${JSON.stringify(value)}`).toEqual([]);
			expect(name in OTHERWISE, `${name}: say in OTHERWISE what the plugin makes of other values`).toBe(true);
		}
		expect(Object.keys(OTHERWISE).sort()).toEqual(Object.keys(HINTS).sort());
	});
});

describe("the contract tests cover", () => {
	it("every decoder of an HTTP reply", () => {
		const names = Object.entries(decoders)
			.filter(([name, f]) => name.startsWith("decode") && typeof f === "function" && !NOT_REPLIES.has(name))
			.map(([, f]) => f);
		expect(names.filter((f) => !DECODERS.some((d) => d.decode === f))).toEqual([]);
	});

	it("routes that are in the document", () => {
		for (const { route } of DECODERS) expect(() => operation(route), route).not.toThrow();
	});
});

const FILTERS: Required<SearchFilters> = {
	path: ["Projects/"], tags: ["project"], fields: [["status", "active"]], after: "2024-01-01", before: "2024-06-01",
};
// `explain` is for hybrid queries; the client leaves it out of keyword and vector searches.
const SEARCH: Required<SearchRequest> = { q: "pricing tag:project", n: 10, collections: ["vault"], filters: FILTERS, explain: true };
const NEW_FACT: Required<NewFact> = {
	text: "We ship on Fridays.", title: "Shipping day", type: "decision", importance: 0.7, confidence: 0.9,
	tags: ["release"], entities: ["[[Ada]]"], scope: "default",
};
const PATCH: Required<FactPatch> = { ...NEW_FACT, lifecycleState: "dormant" };
const INDEX: Required<IndexRequest> = { paths: ["a.md"], deleted: ["b.md"], renamed: [{ from: "c.md", to: "d.md" }] };

/** Every public method of the client, each call with every field its request type has. */
const CALLS: Record<string, Array<(c: EngramClient) => Promise<unknown>>> = {
	health: [(c) => c.health()],
	status: [(c) => c.status()],
	search: [(c) => c.search("search", SEARCH), (c) => c.search("vsearch", SEARCH), (c) => c.search("query", { ...SEARCH, n: null })],
	recentFacts: [(c) => c.recentFacts(), (c) => c.recentFacts(500, "decision")],
	getFact: [(c) => c.getFact("f-1.a_b")],
	createFact: [(c) => c.createFact(NEW_FACT), (c) => c.createFact({ text: "x" })],
	updateFact: [(c) => c.updateFact("f 1", PATCH), (c) => c.updateFact("f1", { lifecycleState: "archived" })],
	archiveFact: [(c) => c.archiveFact("f1")],
	factFromNote: [(c) => c.factFromNote("a b/é.md", "a selection"), (c) => c.factFromNote("a.md")],
	noteMetadata: [(c) => c.noteMetadata("a b/é.md")],
	index: [(c) => c.index(INDEX), (c) => c.index()],
	activeNote: [(c) => c.activeNote({ path: "a.md", selection: "sel", cursorLine: 0 }), (c) => c.activeNote(null)],
};

/** A backend that answers each documented route with a reply made from its schema. */
function schemaBackend() {
	const problems: string[] = [];
	const seen: Array<{ route: string; reply: unknown }> = [];
	const transport = async (req: HttpRequest): Promise<HttpResponse> => {
		problems.push(...checkRequest(req.method, req.url, req.body));
		const found = findRoute(req.method, new URL(req.url).pathname);
		if (!found) return { status: 404, text: '{"error":{"code":"not_found","message":"no route"}}' };
		const status = successStatus(found.op);
		const schema = replySchema(found.op, status);
		const reply = schema ? sample(schema, opts("full")) : undefined;
		seen.push({ route: `${found.method} ${found.template}`, reply });
		return { status, text: reply === undefined ? "" : JSON.stringify(reply) };
	};
	const disco = JSON.stringify({ name: "engram", version: "2", protocol: 2, url: "http://127.0.0.1:9", port: 9, token: "t", pid: 1, startedAt: "", vault: "/v", capabilities: [] });
	const client = new EngramClient({ vaultPath: "/v", readDiscovery: async () => disco, transport });
	return { client, problems, seen };
}

describe("the client", () => {
	it("has a call here for each of its public methods", () => {
		const internal = new Set(["constructor", "current", "invalidate", "reloadDiscovery", "call", "send", "sendOrUnreachable"]);
		const methods = Object.getOwnPropertyNames(EngramClient.prototype).filter((m) => !internal.has(m));
		expect(methods.sort()).toEqual(Object.keys(CALLS).sort());
	});

	it.each(Object.entries(CALLS))("%s sends requests the document accepts and decodes what it answers", async (_name, calls) => {
		for (const call of calls) {
			const { client, problems, seen } = schemaBackend();
			const decoded = await call(client);
			expect(problems).toEqual([]);
			const last = seen[seen.length - 1];
			expect(last).toBeDefined();
			const decoder = DECODERS.find((d) => d.route === last?.route);
			if (last?.reply === undefined || !decoder) {
				// no reply body (204), or one the plugin does not read (DELETE answers the fact)
				expect(decoded).toBeUndefined();
				continue;
			}
			const part = decoder.part ? decoder.part(last.reply as Json) : last.reply;
			expect(mirrorProblems(decoded, part)).toEqual([]);
		}
	});
});
