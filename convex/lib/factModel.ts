// Shapes and pure helpers shared by the schema and the fact functions.
import { ConvexError, v, type Infer } from "convex/values";
import type { Doc } from "../_generated/dataModel";

export const lifecycleState = v.union(
  v.literal("active"),
  v.literal("dormant"),
  v.literal("merged"),
  v.literal("archived"),
  v.literal("pruned"),
);

const scalarFields = {
  externalId: v.string(),
  title: v.string(),
  text: v.string(),
  factType: v.string(),
  source: v.optional(v.string()),
  createdBy: v.optional(v.string()),
  scope: v.optional(v.string()),
  timestamp: v.string(),
  updatedAt: v.optional(v.string()),
  importanceScore: v.optional(v.number()),
  confidence: v.optional(v.number()),
  lifecycleState,
  supersededBy: v.optional(v.string()),
  // The fact this one replaces (the other note carries supersededBy).
  supersedes: v.optional(v.string()),
  lastEditedBy: v.optional(v.union(v.literal("human"), v.literal("system"))),
};

/** The fact as stored: list fields are always present. */
export const factContentFields = {
  ...scalarFields,
  tags: v.array(v.string()),
  entities: v.array(v.string()),
  contradictsWith: v.array(v.string()),
};

/** The fact as a client sends it: list fields may be left out. */
export const factInput = v.object({
  ...scalarFields,
  tags: v.optional(v.array(v.string())),
  entities: v.optional(v.array(v.string())),
  contradictsWith: v.optional(v.array(v.string())),
});

export type FactInput = Infer<typeof factInput>;
const factContent = v.object(factContentFields);
export type FactContent = Infer<typeof factContent>;

const LIMITS = {
  externalId: 200,
  title: 1_000,
  text: 200_000,
  shortString: 1_000,
  listItems: 500,
};

/** A function error the client must not retry: the request itself is wrong. */
export function invalid(field: string, message: string): ConvexError<{
  code: string;
  field: string;
  message: string;
}> {
  return new ConvexError({ code: "invalid_argument", field, message });
}

function checkLength(field: string, value: string | undefined, max: number): void {
  if (value !== undefined && value.length > max) {
    throw invalid(field, `${field} is longer than ${max} characters`);
  }
}

function checkUnit(field: string, value: number | undefined): void {
  if (value !== undefined && !(value >= 0 && value <= 1)) {
    throw invalid(field, `${field} must be a number from 0 to 1`);
  }
}

function checkList(field: string, items: string[]): void {
  if (items.length > LIMITS.listItems) {
    throw invalid(field, `${field} has more than ${LIMITS.listItems} items`);
  }
  for (const item of items) checkLength(field, item, LIMITS.shortString);
}

/** Validate a client's fact beyond its types and fill in empty lists. */
export function normalizeFact(input: FactInput): FactContent {
  if (input.externalId.trim() === "") throw invalid("externalId", "externalId is empty");
  checkLength("externalId", input.externalId, LIMITS.externalId);
  checkLength("title", input.title, LIMITS.title);
  checkLength("text", input.text, LIMITS.text);
  for (const field of ["factType", "source", "createdBy", "scope", "supersededBy", "supersedes"] as const) {
    checkLength(field, input[field], LIMITS.shortString);
  }
  for (const field of ["timestamp", "updatedAt"] as const) {
    const value = input[field];
    if (value !== undefined && Number.isNaN(Date.parse(value))) {
      throw invalid(field, `${field} is not an ISO 8601 date`);
    }
  }
  checkUnit("importanceScore", input.importanceScore);
  checkUnit("confidence", input.confidence);
  const content: FactContent = {
    ...input,
    tags: input.tags ?? [],
    entities: input.entities ?? [],
    contradictsWith: input.contradictsWith ?? [],
  };
  checkList("tags", content.tags);
  checkList("entities", content.entities);
  checkList("contradictsWith", content.contradictsWith);
  return content;
}

// Keys sorted at every level so the hash does not depend on field order.
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, item]) => `${JSON.stringify(k)}:${canonicalJson(item)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

/** SHA-256 (hex) of the fact's content fields: same content, same hash. */
export async function contentHash(content: FactContent): Promise<string> {
  const bytes = new TextEncoder().encode(canonicalJson(content));
  const digest = await crypto.subtle.digest("SHA-256", bytes);
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** The text the search index sees for a live fact. */
export function searchTextOf(content: FactContent): string {
  return [content.title, content.text, content.tags.join(" "), content.entities.join(" ")]
    .filter((part) => part !== "")
    .join("\n");
}

/** The fact as functions return it: no Convex ids, no search helper field. */
export function toPublic(doc: Doc<"facts">): Omit<Doc<"facts">, "_id" | "_creationTime" | "searchText"> {
  const { _id, _creationTime, searchText, ...rest } = doc;
  void _id;
  void _creationTime;
  void searchText;
  return rest;
}

export type PublicFact = ReturnType<typeof toPublic>;

/** Pull position: the last change seen, as "<changeSeq>:<externalId>". */
export type Cursor = { seq: bigint; externalId: string };

export function encodeCursor(cursor: Cursor): string {
  return `${cursor.seq.toString()}:${cursor.externalId}`;
}

export function decodeCursor(raw: string | null | undefined): Cursor | null {
  if (raw === null || raw === undefined || raw === "") return null;
  const colon = raw.indexOf(":");
  const digits = colon < 0 ? "" : raw.slice(0, colon);
  if (!/^[0-9]{1,20}$/.test(digits)) throw invalid("cursor", "cursor is not one this deployment issued");
  return { seq: BigInt(digits), externalId: raw.slice(colon + 1) };
}

// Compare without stopping at the first differing character, so response
// time does not tell how much of a guessed token was right.
function sameSecret(given: string, expected: string): boolean {
  let diff = given.length ^ expected.length;
  for (let i = 0; i < expected.length; i++) {
    diff |= (given.charCodeAt(i) || 0) ^ expected.charCodeAt(i);
  }
  return diff === 0;
}

/**
 * The functions are public (callable with just the deployment URL), so each
 * one checks the shared sync token set with `npx convex env set`.
 */
export function requireToken(token: string): void {
  const expected = process.env.ENGRAM_SYNC_TOKEN;
  if (expected === undefined || expected === "") {
    throw new ConvexError({
      code: "not_configured",
      message: "ENGRAM_SYNC_TOKEN is not set on this deployment",
    });
  }
  if (!sameSecret(token, expected)) {
    throw new ConvexError({ code: "unauthorized", message: "wrong sync token" });
  }
}
