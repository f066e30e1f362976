/** Splitting a snippet into plain and highlighted runs from the API's `highlights` offsets. */

export interface Segment {
	text: string;
	hit: boolean;
}

/**
 * Offsets count Unicode code points (Python string indices), end exclusive. Out-of-range,
 * reversed and overlapping ranges are clamped and merged so any reply renders safely.
 */
export function segments(snippet: string, highlights: ReadonlyArray<readonly [number, number]>): Segment[] {
	const chars = Array.from(snippet);
	const n = chars.length;
	const ranges = highlights
		.map(([a, b]) => [Math.max(0, Math.min(n, Math.floor(a))), Math.max(0, Math.min(n, Math.floor(b)))] as const)
		.filter(([a, b]) => b > a)
		.sort((x, y) => x[0] - y[0]);
	const merged: Array<[number, number]> = [];
	for (const [a, b] of ranges) {
		const last = merged[merged.length - 1];
		if (last && a <= last[1]) last[1] = Math.max(last[1], b);
		else merged.push([a, b]);
	}
	const out: Segment[] = [];
	let pos = 0;
	for (const [a, b] of merged) {
		if (a > pos) out.push({ text: chars.slice(pos, a).join(""), hit: false });
		out.push({ text: chars.slice(a, b).join(""), hit: true });
		pos = b;
	}
	if (pos < n || out.length === 0) out.push({ text: chars.slice(pos).join(""), hit: false });
	return out;
}
