// Fact sync functions, called by Engram over Convex's HTTP API.
//
// Every write carries an opId (idempotency key) and may carry baseVersion
// (the version the writer last saw). Outcomes are values, not throws:
// {status: "ok"}, {status: "conflict", current} or {status: "not_found"}.
// Only a bad request throws (ConvexError with code "invalid_argument",
// "unauthorized" or "not_configured").
import { v } from "convex/values";
import { internal } from "./_generated/api";
import type { Doc } from "./_generated/dataModel";
import {
  internalMutation,
  mutation,
  query,
  type MutationCtx,
  type QueryCtx,
} from "./_generated/server";
import {
  contentHash,
  decodeCursor,
  encodeCursor,
  factInput,
  invalid,
  normalizeFact,
  requireToken,
  searchTextOf,
  toPublic,
} from "./lib/factModel";

/** How long an opId is remembered; an outbox older than this replays as a new write. */
export const APPLIED_OPS_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;
const TRIM_BATCH = 500;
const MAX_PAGE = 500;
const MAX_SEARCH = 100;

type OpKind = "upsert" | "softDelete";
type Result = Record<string, unknown> & { status: string };

async function factByExternalId(
  ctx: QueryCtx,
  externalId: string,
): Promise<Doc<"facts"> | null> {
  return await ctx.db
    .query("facts")
    .withIndex("by_externalId", (q) => q.eq("externalId", externalId))
    .unique();
}

function checkOpId(opId: string): void {
  if (opId.trim() === "" || opId.length > 200) {
    throw invalid("opId", "opId must be 1 to 200 characters");
  }
}

// The first result of an opId, or null when the opId is new.
async function replayed(
  ctx: MutationCtx,
  opId: string,
  kind: OpKind,
  externalId: string,
): Promise<Result | null> {
  const op = await ctx.db
    .query("appliedOps")
    .withIndex("by_opId", (q) => q.eq("opId", opId))
    .unique();
  if (op === null) return null;
  if (op.kind !== kind || op.externalId !== externalId) {
    throw invalid("opId", `opId ${opId} was already used for another operation`);
  }
  const result = op.result as Result;
  return op.changeSeq === undefined ? result : { ...result, changeSeq: op.changeSeq };
}

// Remember the result (its changeSeq, possibly the commit-ts placeholder,
// goes into the field typed for it) and hand it back.
async function record(
  ctx: MutationCtx,
  opId: string,
  kind: OpKind,
  externalId: string,
  result: Result,
): Promise<Result> {
  const { changeSeq, ...rest } = result;
  await ctx.db.insert("appliedOps", {
    opId,
    kind,
    externalId,
    result: rest,
    changeSeq: changeSeq as bigint | undefined,
    createdAt: Date.now(),
  });
  return result;
}

function okResult(doc: Pick<Doc<"facts">, "externalId" | "version" | "contentHash">, changeSeq: unknown, changed: boolean): Result {
  return {
    status: "ok",
    externalId: doc.externalId,
    version: doc.version,
    changeSeq,
    contentHash: doc.contentHash,
    changed,
  };
}

function conflictResult(externalId: string, current: Doc<"facts"> | null): Result {
  return { status: "conflict", externalId, current: current === null ? null : toPublic(current) };
}

/** Create or replace a fact; see the module comment for the outcomes. */
export const upsert = mutation({
  args: {
    token: v.string(),
    opId: v.string(),
    fact: factInput,
    baseVersion: v.optional(v.number()),
    device: v.optional(v.string()),
  },
  handler: async (ctx, args) => {
    requireToken(args.token);
    checkOpId(args.opId);
    const externalId = args.fact.externalId;
    const first = await replayed(ctx, args.opId, "upsert", externalId);
    if (first !== null) return first;

    const content = normalizeFact(args.fact);
    const hash = await contentHash(content);
    const current = await factByExternalId(ctx, externalId);
    if (current !== null && current.deletedAt === undefined && current.contentHash === hash) {
      // Same content already there: nothing to write, even if baseVersion is
      // stale, because both sides already agree.
      return await record(ctx, args.opId, "upsert", externalId, okResult(current, current.changeSeq, false));
    }
    if (args.baseVersion !== undefined && args.baseVersion !== (current?.version ?? 0)) {
      return await record(ctx, args.opId, "upsert", externalId, conflictResult(externalId, current));
    }
    const doc = {
      ...content,
      version: (current?.version ?? 0) + 1,
      changeSeq: ctx.db.vars.commitTs,
      originDevice: current === null ? args.device : current.originDevice,
      lastDevice: args.device,
      lastOpId: args.opId,
      contentHash: hash,
      searchText: searchTextOf(content),
    };
    if (current === null) {
      await ctx.db.insert("facts", doc);
    } else {
      // replace, not patch: a field the writer dropped must disappear, and a
      // tombstone written again comes back to life.
      await ctx.db.replace("facts", current._id, doc);
    }
    return await record(ctx, args.opId, "upsert", externalId, okResult(doc, ctx.db.vars.commitTs, true));
  },
});

/** Turn a fact into a tombstone that pulls still list. */
export const softDelete = mutation({
  args: {
    token: v.string(),
    opId: v.string(),
    externalId: v.string(),
    baseVersion: v.optional(v.number()),
    device: v.optional(v.string()),
  },
  handler: async (ctx, args) => {
    requireToken(args.token);
    checkOpId(args.opId);
    const { externalId } = args;
    const first = await replayed(ctx, args.opId, "softDelete", externalId);
    if (first !== null) return first;

    const current = await factByExternalId(ctx, externalId);
    if (current === null) {
      return await record(ctx, args.opId, "softDelete", externalId, { status: "not_found", externalId });
    }
    if (current.deletedAt !== undefined) {
      return await record(ctx, args.opId, "softDelete", externalId, okResult(current, current.changeSeq, false));
    }
    if (args.baseVersion !== undefined && args.baseVersion !== current.version) {
      return await record(ctx, args.opId, "softDelete", externalId, conflictResult(externalId, current));
    }
    const version = current.version + 1;
    await ctx.db.patch("facts", current._id, {
      version,
      changeSeq: ctx.db.vars.commitTs,
      deletedAt: Date.now(),
      lastDevice: args.device,
      lastOpId: args.opId,
      searchText: "",
    });
    return await record(
      ctx,
      args.opId,
      "softDelete",
      externalId,
      okResult({ ...current, version }, ctx.db.vars.commitTs, true),
    );
  },
});

/**
 * Facts changed after `cursor` (tombstones included), oldest change first.
 * Pass back `nextCursor` until `isDone`; a write committed later always sorts
 * after every cursor handed out before it, so nothing is skipped.
 */
export const listChangedSince = query({
  args: {
    token: v.string(),
    cursor: v.optional(v.union(v.string(), v.null())),
    limit: v.optional(v.number()),
  },
  handler: async (ctx, args) => {
    requireToken(args.token);
    const limit = Math.max(1, Math.min(MAX_PAGE, Math.floor(args.limit ?? 100)));
    const after = decodeCursor(args.cursor);
    const docs: Doc<"facts">[] = [];
    if (after !== null) {
      // Rest of the commit the cursor points into (one commit may write many facts).
      docs.push(
        ...(await ctx.db
          .query("facts")
          .withIndex("by_change", (q) => q.eq("changeSeq", after.seq).gt("externalId", after.externalId))
          .take(limit + 1)),
      );
    }
    if (docs.length <= limit) {
      docs.push(
        ...(await ctx.db
          .query("facts")
          .withIndex("by_change", (q) => (after === null ? q : q.gt("changeSeq", after.seq)))
          .take(limit + 1 - docs.length)),
      );
    }
    const page = docs.slice(0, limit);
    const last = page.at(-1);
    return {
      changes: page.map(toPublic),
      nextCursor: last === undefined ? (args.cursor ?? "") : encodeCursor({ seq: last.changeSeq as bigint, externalId: last.externalId }),
      isDone: docs.length <= limit,
    };
  },
});

/** One fact by its id from the note's frontmatter; tombstones included. */
export const get = query({
  args: { token: v.string(), externalId: v.string() },
  handler: async (ctx, args) => {
    requireToken(args.token);
    const doc = await factByExternalId(ctx, args.externalId);
    return doc === null ? null : toPublic(doc);
  },
});

/** Live facts matching `query`, best first (for deep search's cloud half). */
export const search = query({
  args: {
    token: v.string(),
    query: v.string(),
    limit: v.optional(v.number()),
    scope: v.optional(v.string()),
  },
  handler: async (ctx, args) => {
    requireToken(args.token);
    if (args.query.trim() === "") return [];
    const limit = Math.max(1, Math.min(MAX_SEARCH, Math.floor(args.limit ?? 20)));
    const docs = await ctx.db
      .query("facts")
      .withSearchIndex("search_text", (q) => {
        const matched = q.search("searchText", args.query);
        return args.scope === undefined ? matched : matched.eq("scope", args.scope);
      })
      .take(limit);
    return docs.filter((doc) => doc.deletedAt === undefined).map(toPublic);
  },
});

/** Forget opIds past the retention window; the cron calls this daily. */
export const trimAppliedOps = internalMutation({
  args: {},
  handler: async (ctx) => {
    const cutoff = Date.now() - APPLIED_OPS_RETENTION_MS;
    const old = await ctx.db
      .query("appliedOps")
      .withIndex("by_createdAt", (q) => q.lt("createdAt", cutoff))
      .take(TRIM_BATCH);
    for (const op of old) await ctx.db.delete("appliedOps", op._id);
    if (old.length === TRIM_BATCH) {
      await ctx.scheduler.runAfter(0, internal.facts.trimAppliedOps, {});
    }
    return old.length;
  },
});
