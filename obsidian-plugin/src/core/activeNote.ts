/** Reports the active note and selection to the backend for agents: debounced, deduplicated,
 * refreshed every minute while it stays open, and withdrawn when no note is open or the plugin
 * unloads. The backend forgets a report nobody refreshed for a few minutes (Obsidian crashed),
 * so agents are never told about a note the user closed long ago. */
import type { ActiveNote } from "../api/types";
import { Debouncer, type Timers } from "./timers";

export const ACTIVE_NOTE_DEBOUNCE_MS = 500;
/** Well inside the backend's five minutes, even with a background window's slowed timers. */
export const ACTIVE_NOTE_REFRESH_MS = 60_000;
/** Agents need the gist of a selection, not a whole book pasted into a request. */
export const MAX_SELECTION_CHARS = 8000;

/** `null`: no note is open (the backend forgets the last one). */
export type ActiveNoteReport = ActiveNote | null;

/** `told` when the backend may hold a report from us but we cannot know which (reconnected). */
const UNKNOWN = "?";

export class ActiveNoteReporter {
	private readonly debouncer: Debouncer;
	/** What the backend holds from us (JSON of the note), null when nothing, or UNKNOWN. */
	private told: string | null = null;
	private sentAt = 0;
	/** What is open now, as last seen. */
	private current: ActiveNoteReport = null;

	constructor(
		private readonly send: (note: ActiveNoteReport) => Promise<void>,
		timers: Timers,
		private readonly now: () => number = () => Date.now(),
	) {
		this.debouncer = new Debouncer(timers, ACTIVE_NOTE_DEBOUNCE_MS);
	}

	/** Note what is active now (null: no note is open); sent after a pause if it differs from
	 * what the backend holds. */
	update(note: ActiveNoteReport): void {
		this.current = clip(note);
		const report = this.current;
		this.debouncer.schedule(() => void this.deliver(report));
	}

	/** Called on every status poll while connected, with what is open now (undefined: keep the
	 * last seen): sends what the backend is missing, and re-sends an open note once a minute so
	 * the backend knows it is still open. */
	refresh(note?: ActiveNoteReport): void {
		if (note !== undefined) this.current = clip(note);
		if (this.debouncer.scheduled) return;
		const due = this.now() - this.sentAt >= ACTIVE_NOTE_REFRESH_MS;
		if (this.current === null) void this.deliver(null);
		else if (JSON.stringify(this.current) !== this.told || due) void this.deliver(this.current, true);
	}

	/** The backend may have lost or kept our report (we were offline): the next refresh resends. */
	reset(): void {
		if (this.told !== null) this.told = UNKNOWN;
	}

	/** Withdraw the report now (the plugin unloads, or sharing was turned off). */
	async clear(): Promise<void> {
		this.debouncer.cancel();
		this.current = null;
		await this.deliver(null);
	}

	dispose(): void {
		this.debouncer.cancel();
	}

	private async deliver(note: ActiveNoteReport, force = false): Promise<void> {
		if (note === null && this.told === null) return; // nothing to withdraw
		const key = JSON.stringify(note);
		if (key === this.told && !force) return;
		try {
			await this.send(note);
			this.told = note === null ? null : key;
			this.sentAt = this.now();
		} catch {
			// Best effort: agents read a slightly old active note rather than the user seeing errors.
		}
	}
}

function clip(note: ActiveNoteReport): ActiveNoteReport {
	return note && { ...note, selection: note.selection.slice(0, MAX_SELECTION_CHARS) };
}
