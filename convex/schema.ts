// The Convex replica of Engram's facts. Markdown notes in the vault stay the
// source of truth; this table is what other machines pull from.
import { defineSchema, defineTable } from "convex/server";
import { v } from "convex/values";
import { factContentFields } from "./lib/factModel";

export default defineSchema({
  facts: defineTable({
    ...factContentFields,
    // +1 on every accepted write (upsert with new content, soft delete).
    version: v.number(),
    // Commit timestamp of the last accepted write: strictly increasing in
    // commit order, so a pull cursor on it never skips a later commit.
    changeSeq: v.commitTs(),
    // Milliseconds since the epoch; set means "tombstone".
    deletedAt: v.optional(v.number()),
    originDevice: v.optional(v.string()),
    lastDevice: v.optional(v.string()),
    lastOpId: v.string(),
    contentHash: v.string(),
    // Title, text, tags and entities joined; emptied on delete so tombstones
    // drop out of search.
    searchText: v.string(),
  })
    .index("by_externalId", ["externalId"])
    .index("by_change", ["changeSeq", "externalId"])
    .searchIndex("search_text", {
      searchField: "searchText",
      filterFields: ["scope"],
    }),

  // Idempotency keys: an opId seen before gets its first result back.
  appliedOps: defineTable({
    opId: v.string(),
    kind: v.union(v.literal("upsert"), v.literal("softDelete")),
    externalId: v.string(),
    // The first result, without its changeSeq (kept below so the commit
    // timestamp placeholder sits in a field typed for it).
    result: v.any(),
    changeSeq: v.optional(v.commitTs()),
    createdAt: v.number(),
  })
    .index("by_opId", ["opId"])
    .index("by_createdAt", ["createdAt"]),
});
