/** Words for Engram's internal names: fact types, lifecycle and sync states, model states. */
import type { ModelInfo, SyncState } from "../api/types";

/** `steering_rule` → "steering rule", `sessionSummary` → "session summary". */
export function humanize(name: string): string {
	return name
		.replace(/([a-z])([A-Z])/g, "$1 $2")
		.replace(/[_-]+/g, " ")
		.replace(/\s+/g, " ")
		.trim()
		.toLowerCase();
}

/** First letter upper case: for labels that start a line or a badge. */
export function capitalize(text: string): string {
	return text.charAt(0).toUpperCase() + text.slice(1);
}

/** A fact type as a badge reads it: "Steering rule", "Session summary", "Decision". */
export function factTypeLabel(type: string): string {
	return capitalize(humanize(type));
}

const LIFECYCLE: Record<string, string> = {
	active: "Active",
	dormant: "Dormant (not recalled lately)",
	merged: "Merged into another fact",
	archived: "Archived",
	pruned: "Pruned",
};

/** A lifecycle state in words; unknown states are humanized. */
export function lifecycleLabel(state: string): string {
	return LIFECYCLE[state] ?? capitalize(humanize(state));
}

const SYNC: Record<SyncState, string> = {
	local: "On this device only",
	synced: "Synced",
	pending: "Waiting to sync",
	conflict: "Sync conflict",
	off: "Sync state unknown",
};

export function syncLabel(state: SyncState): string {
	return SYNC[state];
}

const TIERS: Record<string, string> = {
	structural: "core",
	potential: "useful",
	contextual: "background",
};

/** Importance as words: "high (core)", with the number kept for a tooltip. */
export function importanceLabel(score: number, tier: string): string {
	const level = score >= 0.8 ? "High" : score >= 0.4 ? "Medium" : "Low";
	const t = TIERS[tier];
	return t ? `${level} (${t})` : level;
}

/** Confidence as words. */
export function confidenceLabel(score: number): string {
	if (score >= 0.9) return "Very sure";
	if (score >= 0.7) return "Sure";
	if (score >= 0.4) return "Unsure";
	return "Doubtful";
}

/**
 * A model role's state for the status window. The backend reports a role nobody configured as
 * `missing` with no id: that is "not configured", not a file that went missing.
 */
export function modelLabel(m: ModelInfo | undefined): string {
	if (!m || (m.state === "missing" && m.id === "")) return "not configured";
	const state = m.state === "missing" ? "not downloaded: run engram models pull" : m.state === "available" ? "ready, loads when needed" : "loaded";
	return m.id ? `${m.id} (${state})` : state;
}
