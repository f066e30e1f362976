/** Readable runs (text, matches, code) as DOM: `<mark>` and `<code>`, never parsed as HTML. */
import type { Run } from "../core/markdownText";

export function renderRuns(el: HTMLElement, runs: readonly Run[]): void {
	for (const r of runs) {
		if (r.code) {
			const code = el.createEl("code", { cls: "engram-code" });
			if (r.hit) code.createEl("mark", { cls: "engram-hit", text: r.text });
			else code.setText(r.text);
		} else if (r.hit) el.createEl("mark", { cls: "engram-hit", text: r.text });
		else el.appendText(r.text);
	}
}
