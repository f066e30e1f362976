/** Small formatting helpers shared by the views (pure, locale-independent). */

/** `0.8734` → `0.87`. */
export function formatScore(score: number): string {
	return score.toFixed(2);
}

/** Importance tiers of DESIGN.md: structural ≥ 0.8, potential ≥ 0.4, else contextual. */
export function importanceTier(score: number): "structural" | "potential" | "contextual" {
	if (score >= 0.8) return "structural";
	if (score >= 0.4) return "potential";
	return "contextual";
}

/** ISO time → `YYYY-MM-DD HH:MM` in local time; "never" for null, the input when unparseable. */
export function formatWhen(iso: string | null): string {
	if (iso === null || iso === "") return "never";
	const d = new Date(iso);
	if (Number.isNaN(d.getTime())) return iso;
	const p = (n: number): string => String(n).padStart(2, "0");
	return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}`;
}

/** A note's embedding state for the fact panel: an indexed note with no vectors yet says so and
 * what to run, rather than showing "0 chunks" as if something were broken. */
export function embeddingText(c: { chunks: number; embedded: boolean }): string {
	if (!c.embedded) return "not embedded yet (run engram embed)";
	return c.chunks === 0 ? "nothing to embed" : `embedded, ${plural(c.chunks, "passage")}`;
}

export interface LinkTarget {
	linktext: string;
	display: string;
}

/** `[[Alice|Al]]` → {linktext: "Alice", display: "Al"}; plain names pass through. */
export function parseEntity(entity: string): LinkTarget {
	const m = /^\[\[([^\]|]+)(?:\|([^\]]+))?\]\]$/.exec(entity.trim());
	if (!m) return { linktext: entity.trim(), display: entity.trim() };
	const linktext = (m[1] ?? "").trim();
	return { linktext, display: (m[2] ?? linktext).trim() };
}

export function plural(n: number, one: string, many = `${one}s`): string {
	return `${n} ${n === 1 ? one : many}`;
}
