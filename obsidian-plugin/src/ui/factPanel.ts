/** The fact panel's content for the active note (pure rendering; the ItemView wires events). */
import type { Fact, NoteMetadata } from "../api/types";
import { embeddingText, formatScore, formatWhen, importanceTier, parseEntity } from "./format";

export type PanelModel =
	| { kind: "no-note" }
	| { kind: "offline"; message: string }
	| { kind: "loading"; path: string }
	| { kind: "unknown"; path: string }
	| { kind: "error"; path: string; message: string }
	| { kind: "ready"; meta: NoteMetadata; canStore: boolean; busy: boolean };

export interface PanelActions {
	openPath(path: string, line?: number): void;
	openLink(linktext: string, sourcePath: string): void;
	openFact(id: string): void;
	storeAsFact(path: string): void;
	archiveFact(fact: Fact): void;
	reindex(path: string): void;
}

function link(parent: HTMLElement, text: string, onClick: () => void, cls = "engram-link"): HTMLElement {
	const a = parent.createEl("a", { cls, text, href: "#" });
	a.addEventListener("click", (evt) => {
		evt.preventDefault();
		onClick();
	});
	return a;
}

function section(el: HTMLElement, title: string): HTMLElement {
	const s = el.createDiv({ cls: "engram-section" });
	s.createDiv({ cls: "engram-section-title", text: title });
	return s;
}

function field(parent: HTMLElement, label: string): HTMLElement {
	const r = parent.createDiv({ cls: "engram-field" });
	r.createSpan({ cls: "engram-field-label", text: label });
	return r.createSpan({ cls: "engram-field-value" });
}

function renderFact(el: HTMLElement, meta: NoteMetadata, fact: Fact, actions: PanelActions, busy: boolean): void {
	const s = section(el, "Fact");
	const badges = s.createDiv({ cls: "engram-badges" });
	badges.createSpan({ cls: "engram-badge engram-badge-fact", text: fact.factType });
	badges.createSpan({ cls: `engram-badge engram-lifecycle-${fact.lifecycleState}`, text: fact.lifecycleState });
	badges.createSpan({ cls: `engram-badge engram-sync-${fact.syncState}`, text: `sync: ${fact.syncState}` });
	const tier = fact.importanceTier || importanceTier(fact.importanceScore);
	field(s, "Importance").setText(`${formatScore(fact.importanceScore)} (${tier})`);
	field(s, "Confidence").setText(formatScore(fact.confidence));
	field(s, "Updated").setText(formatWhen(fact.updatedAt || fact.timestamp));
	if (fact.entities.length) {
		const v = field(s, "Entities");
		fact.entities.forEach((e, i) => {
			if (i > 0) v.appendText(", ");
			const t = parseEntity(e);
			link(v, t.display, () => actions.openLink(t.linktext, meta.path));
		});
	}
	if (fact.tags.length) field(s, "Tags").setText(fact.tags.map((t) => (t.startsWith("#") ? t : `#${t}`)).join(" "));
	if (fact.supersededBy) {
		const id = fact.supersededBy;
		link(field(s, "Superseded by"), id, () => actions.openFact(id));
	}
	if (fact.contradictsWith.length) {
		const v = field(s, "Contradicts");
		fact.contradictsWith.forEach((id, i) => {
			if (i > 0) v.appendText(", ");
			link(v, id, () => actions.openFact(id));
		});
	}
	const buttons = s.createDiv({ cls: "engram-buttons" });
	const archive = buttons.createEl("button", { text: "Archive" });
	archive.disabled = busy || fact.lifecycleState === "archived";
	archive.addEventListener("click", () => actions.archiveFact(fact));
}

function renderReady(el: HTMLElement, meta: NoteMetadata, canStore: boolean, busy: boolean, actions: PanelActions): void {
	const head = el.createDiv({ cls: "engram-panel-head" });
	head.createDiv({ cls: "engram-panel-title", text: meta.title });
	head.createDiv({ cls: "engram-recall-path", text: meta.path });

	if (meta.fact) renderFact(el, meta, meta.fact, actions, busy);
	else if (canStore) {
		const buttons = el.createDiv({ cls: "engram-buttons" });
		const store = buttons.createEl("button", { cls: "mod-cta", text: "Store as fact" });
		store.disabled = busy;
		store.addEventListener("click", () => actions.storeAsFact(meta.path));
	}

	const bl = section(el, `Backlinks (${meta.backlinks.length})`);
	if (meta.backlinks.length === 0) bl.createDiv({ cls: "engram-muted", text: "No backlinks" });
	for (const b of meta.backlinks) {
		const item = bl.createDiv({ cls: "engram-backlink" });
		link(item, b.title, () => actions.openPath(b.path, b.line));
		if (b.context) item.createDiv({ cls: "engram-context", text: b.context });
	}

	const rel = section(el, "Related");
	if (meta.related.length === 0) rel.createDiv({ cls: "engram-muted", text: "Nothing related found" });
	for (const r of meta.related) {
		const item = rel.createDiv({ cls: "engram-related" });
		link(item, r.title, () => actions.openPath(r.path));
		item.createSpan({ cls: "engram-recall-score", text: formatScore(r.score) });
	}

	const cov = section(el, "Index");
	const c = meta.coverage;
	field(cov, "Indexed").setText(c.indexed ? `yes, ${formatWhen(c.indexedAt)}` : "no");
	field(cov, "Embedded").setText(embeddingText(c));
	const buttons = cov.createDiv({ cls: "engram-buttons" });
	const reindex = buttons.createEl("button", { text: "Reindex note" });
	reindex.disabled = busy;
	reindex.addEventListener("click", () => actions.reindex(meta.path));
}

export function renderPanel(el: HTMLElement, model: PanelModel, actions: PanelActions): void {
	el.empty();
	el.addClass("engram-panel");
	switch (model.kind) {
		case "no-note":
			el.createDiv({ cls: "engram-empty", text: "Open a note to see what Engram knows about it." });
			return;
		case "offline":
			el.createDiv({ cls: "engram-empty", text: model.message });
			return;
		case "loading":
			el.createDiv({ cls: "engram-empty", text: `Loading ${model.path}…` });
			return;
		case "unknown": {
			el.createDiv({ cls: "engram-empty", text: `${model.path} is not indexed yet.` });
			const buttons = el.createDiv({ cls: "engram-buttons" });
			const reindex = buttons.createEl("button", { text: "Index it now" });
			reindex.addEventListener("click", () => actions.reindex(model.path));
			return;
		}
		case "error":
			el.createDiv({ cls: "engram-error", text: model.message });
			return;
		case "ready":
			renderReady(el, model.meta, model.canStore, model.busy, actions);
			return;
	}
}
