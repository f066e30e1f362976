/** Deterministic timers for debounce tests: time moves only when `advance` is called. */
import type { Timers } from "../src/core/timers";

export class FakeTimers implements Timers {
	now = 0;
	private nextId = 1;
	private timers = new Map<number, { at: number; fn: () => void }>();

	setTimeout(fn: () => void, ms: number): number {
		const id = this.nextId++;
		this.timers.set(id, { at: this.now + ms, fn });
		return id;
	}

	clearTimeout(id: number): void {
		this.timers.delete(id);
	}

	get pending(): number {
		return this.timers.size;
	}

	/** Move time forward, running due timers in order (including ones they schedule). */
	advance(ms: number): void {
		const end = this.now + ms;
		for (;;) {
			let next: [number, { at: number; fn: () => void }] | null = null;
			for (const entry of this.timers) if (entry[1].at <= end && (!next || entry[1].at < next[1].at)) next = entry;
			if (!next) break;
			this.timers.delete(next[0]);
			this.now = next[1].at;
			next[1].fn();
		}
		this.now = end;
	}
}
