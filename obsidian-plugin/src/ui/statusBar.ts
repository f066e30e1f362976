/** The status bar item's content for a connection state. */
import { describeState, type ConnectionState, type StateKind } from "../core/status";

const KINDS: StateKind[] = ["not-running", "starting", "offline", "connected", "indexing", "syncing"];

export function renderStatusBar(el: HTMLElement, state: ConnectionState): void {
	const view = describeState(state);
	el.addClass("engram-status");
	for (const k of KINDS) el.removeClass(`engram-state-${k}`);
	el.addClass(view.cls);
	el.setAttr("aria-label", view.tooltip);
	el.setAttr("data-tooltip-position", "top");
	el.empty();
	el.createSpan({ cls: "engram-status-dot" });
	el.createSpan({ cls: "engram-status-text", text: view.text });
}
