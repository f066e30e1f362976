/** Timers behind an interface so debouncing is tested without waiting on the clock. */

export interface Timers {
	setTimeout(fn: () => void, ms: number): number;
	clearTimeout(id: number): void;
}

/** The window's timers (popout-safe: `window`, not the bare globals). */
export const windowTimers: Timers = {
	setTimeout: (fn, ms) => window.setTimeout(fn, ms),
	clearTimeout: (id) => window.clearTimeout(id),
};

/**
 * Runs the last scheduled function `ms` after the last call; with `maxWait`, no later than
 * `maxWait` after the first call of a burst (so a stream of edits still gets flushed).
 */
export class Debouncer {
	private timer: number | null = null;
	private burstStart: number | null = null;
	private pending: (() => void) | null = null;

	constructor(
		private readonly timers: Timers,
		private readonly ms: number,
		private readonly maxWait: number | null = null,
		private readonly now: () => number = () => Date.now(),
	) {}

	schedule(fn: () => void): void {
		this.pending = fn;
		const t = this.now();
		if (this.burstStart === null) this.burstStart = t;
		let wait = this.ms;
		if (this.maxWait !== null) wait = Math.max(0, Math.min(wait, this.burstStart + this.maxWait - t));
		if (this.timer !== null) this.timers.clearTimeout(this.timer);
		this.timer = this.timers.setTimeout(() => this.fire(), wait);
	}

	/** Run the pending function now, if any. */
	flush(): void {
		if (this.pending !== null) this.fire();
	}

	cancel(): void {
		if (this.timer !== null) this.timers.clearTimeout(this.timer);
		this.timer = null;
		this.burstStart = null;
		this.pending = null;
	}

	get scheduled(): boolean {
		return this.pending !== null;
	}

	private fire(): void {
		const fn = this.pending;
		if (this.timer !== null) this.timers.clearTimeout(this.timer);
		this.timer = null;
		this.burstStart = null;
		this.pending = null;
		fn?.();
	}
}
