// Keeps the idempotency table small: opIds older than the retention window go.
import { cronJobs } from "convex/server";
import { internal } from "./_generated/api";

const crons = cronJobs();

crons.daily("trim applied ops", { hourUTC: 3, minuteUTC: 17 }, internal.facts.trimAppliedOps, {});

export default crons;
