/** Reports the active note and selection to the backend for agents, debounced and deduplicated. */
import type { ActiveNote } from "../api/types";
import { Debouncer, type Timers } from "./timers";

export const ACTIVE_NOTE_DEBOUNCE_MS = 500;
/** Agents need the gist of a selection, not a whole book pasted into a request. */
export const MAX_SELECTION_CHARS = 8000;

export class ActiveNoteReporter {
	private readonly debouncer: Debouncer;
	private lastSent: string | null = null;

	constructor(
		private readonly send: (note: ActiveNote) => Promise<void>,
		timers: Timers,
	) {
		this.debouncer = new Debouncer(timers, ACTIVE_NOTE_DEBOUNCE_MS);
	}

	/** Note what is active now; sent after a pause if it differs from what was last sent. */
	update(note: ActiveNote | null): void {
		if (note === null) return;
		const clipped: ActiveNote = { ...note, selection: note.selection.slice(0, MAX_SELECTION_CHARS) };
		this.debouncer.schedule(() => void this.deliver(clipped));
	}

	/** Forget what was sent, so the next update is sent even if unchanged (after a reconnect). */
	reset(): void {
		this.lastSent = null;
	}

	dispose(): void {
		this.debouncer.cancel();
	}

	private async deliver(note: ActiveNote): Promise<void> {
		const key = JSON.stringify(note);
		if (key === this.lastSent) return;
		try {
			await this.send(note);
			this.lastSent = key;
		} catch {
			// Best effort: agents read a slightly old active note rather than the user seeing errors.
		}
	}
}
