/** Body of the status modal: counts, models, sync, last error and what can be done. */
import type { Discovery, Status } from "../api/types";
import { capitalize, modelLabel } from "../core/labels";
import { describeState, isOnline, type ConnectionState } from "../core/status";
import { formatWhen, plural } from "./format";

export interface ProcessInfo {
	/** True while a backend we spawned is alive. */
	running: boolean;
	/** How the last backend we spawned ended, e.g. "exited with code 1". */
	exit: string | null;
	/** The end of its stderr (already free of secrets: the backend never prints the token). */
	stderrTail: string;
}

export interface StatusDetails {
	state: ConnectionState;
	discovery: Discovery | null;
	process: ProcessInfo | null;
	/** The configured backend command, "" when none. */
	command: string;
	pendingChanges: number;
}

export interface StatusActions {
	startBackend(): void;
	reindexAll(): void;
	refresh(): void;
}

function row(table: HTMLElement, label: string, value: string, cls?: string): void {
	const tr = table.createEl("tr");
	tr.createEl("th", { text: label });
	tr.createEl("td", { text: value, cls });
}

function renderCounts(el: HTMLElement, s: Status): void {
	const table = el.createEl("table", { cls: "engram-table" });
	row(table, "Vault", s.vault.path || "—");
	row(table, "Collection", s.vault.collection);
	row(table, "Notes", String(s.documents));
	row(table, "Facts folder", s.facts ? s.facts.root : "none (no agent memory in this vault)");
	row(table, "Chunks", String(s.chunks));
	row(table, "Embedded", s.chunks === 0 && s.documents > 0 ? "not embedded yet (run engram embed)" : `${s.embedded} of ${s.chunks}`);
	const ix = s.indexing;
	row(table, "Indexing", ix.state === "indexing" ? `${ix.done} of ${ix.total}` : `idle, last ${formatWhen(ix.lastUpdate)}`);
	row(table, "Watcher", s.watcher.enabled ? `on, ${s.watcher.queue} queued` : "off");
	row(
		table,
		"Sync",
		s.sync.configured ? `${s.sync.state}, ${s.sync.pending} pending, last ${formatWhen(s.sync.lastSync)}` : "not configured",
	);
	el.createDiv({ cls: "engram-section-title", text: "Models" });
	const models = el.createEl("table", { cls: "engram-table" });
	row(models, "Embedding", modelLabel(s.models.embed));
	row(models, "Reranker", modelLabel(s.models.rerank));
	row(models, "Generator", modelLabel(s.models.generate));
	const stages = Object.entries(s.queryStages ?? {});
	if (stages.length) {
		el.createDiv({ cls: "engram-section-title", text: "Deep search" });
		const t = el.createEl("table", { cls: "engram-table" });
		for (const [stage, how] of stages) row(t, capitalize(stage), how, how.startsWith("on") ? undefined : "engram-muted");
	}
	if (s.languageAdvice) el.createDiv({ cls: "engram-warning", text: s.languageAdvice });
}

export function renderStatusDetails(el: HTMLElement, d: StatusDetails, actions: StatusActions): void {
	el.empty();
	el.addClass("engram-status-details");
	const view = describeState(d.state);
	const head = el.createDiv({ cls: `engram-status-headline ${view.cls}` });
	head.createSpan({ cls: "engram-status-dot" });
	head.createSpan({ text: view.label });
	if (!isOnline(d.state)) el.createDiv({ cls: "engram-muted", text: view.tooltip });

	if (isOnline(d.state)) renderCounts(el, d.state.status);

	if (d.discovery) {
		el.createDiv({ cls: "engram-section-title", text: "Backend" });
		const t = el.createEl("table", { cls: "engram-table" });
		row(t, "Address", d.discovery.url);
		row(t, "Version", d.discovery.version || "unknown");
		row(t, "Process", String(d.discovery.pid));
		row(t, "Started", formatWhen(d.discovery.startedAt));
	}
	if (d.pendingChanges > 0) {
		el.createDiv({
			cls: "engram-muted",
			text: Number.isFinite(d.pendingChanges)
				? `${plural(d.pendingChanges, "vault change")} waiting to be sent`
				: "A full reindex is waiting to be sent",
		});
	}

	const lastError = isOnline(d.state) ? d.state.status.lastError : null;
	if (lastError) {
		el.createDiv({ cls: "engram-section-title", text: "Last error" });
		el.createDiv({ cls: "engram-error", text: `${formatWhen(lastError.at)}: ${lastError.message}` });
	}
	if (d.process && (d.process.exit || d.process.stderrTail)) {
		el.createDiv({ cls: "engram-section-title", text: "Backend process" });
		if (d.process.exit) el.createDiv({ cls: "engram-error", text: d.process.exit });
		if (d.process.stderrTail) el.createEl("pre", { cls: "engram-log", text: d.process.stderrTail });
	}

	const buttons = el.createDiv({ cls: "engram-buttons" });
	const canStart = d.command !== "" && !isOnline(d.state) && d.state.kind !== "starting" && !d.process?.running;
	if (canStart) {
		const start = buttons.createEl("button", { cls: "mod-cta", text: "Start backend" });
		start.addEventListener("click", () => actions.startBackend());
	}
	if (isOnline(d.state)) {
		const reindex = buttons.createEl("button", { text: "Reindex vault" });
		reindex.addEventListener("click", () => actions.reindexAll());
	}
	const refresh = buttons.createEl("button", { text: "Refresh" });
	refresh.addEventListener("click", () => actions.refresh());
}
