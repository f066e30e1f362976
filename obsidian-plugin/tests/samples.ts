/**
 * Replies made from the OpenAPI schemas, a record of what a decoder reads, and a comparison of a
 * decoded value with the reply it came from: the decoder half of the contract tests.
 */
import { deref, type Json } from "./contract";

const COMPONENT = "#/components/schemas/";

/** `full`: every property, never null; `nulls`: every property, null wherever allowed;
 * `minimal`: only what the schema requires, null wherever allowed. */
export type SampleMode = "full" | "nulls" | "minimal";

export interface SampleOptions {
	mode: SampleMode;
	/** Picks the n-th value of every enum and union (wrapping), so each one is decoded once. */
	variant: number;
	/** Values for properties the document types more loosely than the backend sends them (or
	 * not at all), by `Component.property`: used instead of a made-up value wherever the property
	 * is not null. Each must be valid for the property's schema (contract.test.ts checks). */
	hints: Record<string, readonly unknown[]>;
}

function isObj(v: unknown): v is Json {
	return typeof v === "object" && v !== null && !Array.isArray(v);
}

const SHAPE_KEYWORDS = ["type", "$ref", "anyOf", "oneOf", "allOf", "enum", "const", "properties", "items", "prefixItems"];

/** True for a schema that says nothing of its value's type (`{"readOnly": true}`). */
export function untyped(schema: Json): boolean {
	return !SHAPE_KEYWORDS.some((k) => k in schema);
}

function nullOnly(schema: Json): boolean {
	return schema.type === "null";
}

function componentOf(node: Json): string | null {
	return typeof node.$ref === "string" && node.$ref.startsWith(COMPONENT) ? node.$ref.slice(COMPONENT.length) : null;
}

/** A value valid for `schema`, with a distinct value in every string and number so that a
 * decoder reading one field into another shows. */
export function sample(schema: Json, opts: SampleOptions): unknown {
	let counter = 0;
	const next = (): number => ++counter;
	const gen = (node: Json, comp: string, at: string, depth: number): unknown => {
		if (depth > 16) throw new Error(`sample: ${comp}${at} nests too deep`);
		const ref = componentOf(node);
		if (ref) return gen(deref(node), ref, "", depth + 1);
		if (typeof node.$ref === "string") return gen(deref(node), comp, at, depth + 1);
		if ("const" in node) return node.const;
		if (Array.isArray(node.enum)) return node.enum[opts.variant % node.enum.length];
		const branches = (node.anyOf ?? node.oneOf) as Json[] | undefined;
		if (branches) {
			const nulls = branches.find(nullOnly);
			const others = branches.filter((b) => !nullOnly(b));
			if (nulls && (opts.mode !== "full" || others.length === 0)) return null;
			return gen(others[opts.variant % others.length] as Json, comp, at, depth + 1);
		}
		const types = Array.isArray(node.type) ? (node.type as string[]) : typeof node.type === "string" ? [node.type] : [];
		if (types.includes("null") && (opts.mode !== "full" || types.length === 1)) return null;
		const hint = opts.hints[`${comp}${at}`];
		if (hint) return hint[opts.variant % hint.length];
		const type = types.find((t) => t !== "null") ?? (node.properties ? "object" : node.items || node.prefixItems ? "array" : null);
		const label = at.split(".").pop() || comp;
		switch (type) {
			case "object": {
				const props = (node.properties ?? {}) as Json;
				const required = new Set((node.required as string[] | undefined) ?? []);
				const out: Json = {};
				for (const [key, sub] of Object.entries(props)) {
					if (opts.mode === "minimal" && !required.has(key)) continue;
					out[key] = gen(sub as Json, comp, `${at}.${key}`, depth + 1);
				}
				return out;
			}
			case "array": {
				if (Array.isArray(node.prefixItems)) return (node.prefixItems as Json[]).map((s, i) => gen(s, comp, `${at}[${i}]`, depth + 1));
				const min = typeof node.minItems === "number" ? node.minItems : 0;
				const n = opts.mode === "minimal" ? min : Math.max(1, min);
				return Array.from({ length: n }, () => gen((node.items ?? {}) as Json, comp, `${at}[]`, depth + 1));
			}
			case "string": {
				const i = next();
				if (node.format === "date-time") return `2025-01-02T03:04:${String(i % 60).padStart(2, "0")}+00:00`;
				if (node.format === "date") return `2025-01-${String((i % 28) + 1).padStart(2, "0")}`;
				let s = `${label}-${i}`;
				if (typeof node.maxLength === "number") s = s.slice(0, node.maxLength);
				if (typeof node.minLength === "number") s = s.padEnd(node.minLength, "x");
				return s;
			}
			case "integer":
			case "number": {
				const min = typeof node.minimum === "number" ? node.minimum : -Infinity;
				const max = typeof node.maximum === "number" ? node.maximum : Infinity;
				// never 0 or 1, the decoders' usual fallbacks
				const v = type === "integer" ? next() + 1 : max <= 1 ? ((next() % 90) + 5) / 100 : next() + 0.5;
				return Math.min(max, Math.max(min, v));
			}
			case "boolean":
				return opts.mode !== "minimal";
			default: {
				if (!untyped(node)) throw new Error(`sample: no value for ${comp}${at}: ${JSON.stringify(node)}`);
				return `${label}-${next()}`;
			}
		}
	};
	const root = componentOf(schema);
	return gen(schema, root ?? "(reply)", "", 0);
}

interface Place {
	schema: Json;
	comp: string;
	at: string;
}

/** The object schemas a node can be (through `$ref`, `anyOf`, `oneOf`). */
function objectShapes(p: Place): Place[] {
	const ref = componentOf(p.schema);
	if (ref) return objectShapes({ schema: deref(p.schema), comp: ref, at: "" });
	if (typeof p.schema.$ref === "string") return objectShapes({ ...p, schema: deref(p.schema) });
	const branches = (p.schema.anyOf ?? p.schema.oneOf) as Json[] | undefined;
	if (branches) return branches.flatMap((b) => objectShapes({ ...p, schema: b }));
	return p.schema.type === "object" || (Array.isArray(p.schema.type) && p.schema.type.includes("object")) || p.schema.properties ? [p] : [];
}

function itemPlace(p: Place, index: number): Place {
	const ref = componentOf(p.schema);
	if (ref) return itemPlace({ schema: deref(p.schema), comp: ref, at: "" }, index);
	const branches = (p.schema.anyOf ?? p.schema.oneOf) as Json[] | undefined;
	const arr = branches?.find((b) => deref(b).type === "array") ?? p.schema;
	const s = deref(arr);
	const tuple = s.prefixItems as Json[] | undefined;
	return { schema: (tuple?.[index] ?? s.items ?? {}) as Json, comp: p.comp, at: `${p.at}[]` };
}

export interface Reads {
	/** `Component.path.key` of every property read that the schema does not declare. */
	undeclared: string[];
	/** The same for properties the schema declares without a type. */
	untyped: string[];
}

/** Run `decode` on `value` through proxies that note each property it reads, against `schema`. */
export function trackReads(decode: (v: unknown) => unknown, value: unknown, schema: Json): Reads {
	const reads: Reads = { undeclared: [], untyped: [] };
	const wrap = (v: unknown, p: Place): unknown => {
		if (Array.isArray(v)) {
			return new Proxy(v, {
				get: (t, k, r) => (typeof k === "string" && /^\d+$/.test(k) ? wrap(t[Number(k)], itemPlace(p, Number(k))) : Reflect.get(t, k, r)),
			});
		}
		if (!isObj(v)) return v;
		return new Proxy(v, {
			get: (t, k, r) => {
				if (typeof k !== "string" || k in Object.prototype) return Reflect.get(t, k, r);
				const shapes = objectShapes(p);
				const name = `${shapes[0]?.comp ?? p.comp}${shapes[0]?.at ?? p.at}.${k}`;
				const owner = shapes.find((s) => isObj(s.schema.properties) && k in s.schema.properties);
				// an object schema without properties is a free map (frontmatter, stages): any key is fine
				const freeMap = shapes.length > 0 && shapes.every((s) => !isObj(s.schema.properties));
				if (!owner) {
					if (!freeMap) reads.undeclared.push(name);
					return wrap(t[k], { schema: {}, comp: p.comp, at: `${p.at}.${k}` });
				}
				const sub = (owner.schema.properties as Json)[k] as Json;
				if (untyped(sub)) reads.untyped.push(name);
				return wrap(t[k], { schema: sub, comp: owner.comp, at: `${owner.at}.${k}` });
			},
		});
	};
	decode(wrap(value, { schema, comp: componentOf(schema) ?? "(reply)", at: "" }));
	reads.undeclared = [...new Set(reads.undeclared)].sort();
	reads.untyped = [...new Set(reads.untyped)].sort();
	return reads;
}

/** Where a decoded value differs from the reply it came from: every decoded property named like
 * one of the reply's must hold the reply's value (a null in the reply may become a default; with
 * `mayDrop`, a list may lose entries the decoder cannot use). */
export function mirrorProblems(decoded: unknown, reply: unknown, mayDrop = false, at = "$"): string[] {
	if (reply === null || reply === undefined) return [];
	if (Array.isArray(reply)) {
		if (!Array.isArray(decoded)) return [`${at}: the reply has a list, the decoder made ${JSON.stringify(decoded)}`];
		if (decoded.length !== reply.length && !(mayDrop && decoded.length < reply.length)) {
			return [`${at}: the reply has ${reply.length} entries, the decoder made ${decoded.length}`];
		}
		return decoded.length === reply.length ? reply.flatMap((r, i) => mirrorProblems(decoded[i], r, mayDrop, `${at}[${i}]`)) : [];
	}
	if (isObj(reply)) {
		if (!isObj(decoded)) return [`${at}: the reply has an object, the decoder made ${JSON.stringify(decoded)}`];
		return Object.keys(decoded)
			.filter((k) => k in reply)
			.flatMap((k) => mirrorProblems(decoded[k], reply[k], mayDrop, `${at}.${k}`));
	}
	return Object.is(decoded, reply) ? [] : [`${at}: the reply says ${JSON.stringify(reply)}, the decoder made ${JSON.stringify(decoded)}`];
}
