/** The fact panel's content for the active note (pure rendering; the ItemView wires events).
 * What a person looks for first comes first: the fact, related notes, the index in one line,
 * then backlinks grouped by note, with Engram's own generated notes apart and folded. */
import type { Fact, NoteMetadata } from "../api/types";
import { groupBacklinks, type BacklinkGroup } from "../core/backlinks";
import { confidenceLabel, factTypeLabel, importanceLabel, lifecycleLabel, syncLabel } from "../core/labels";
import { readableRuns } from "../core/markdownText";
import type { RelatedEntry } from "../core/related";
import { embeddingText, formatWhen, parseEntity, plural } from "./format";
import { folderOf } from "./recallItem";
import { renderRelatedList, type RelatedActions } from "./relatedList";
import { renderRuns } from "./richText";

/** Where an entity link leads, as the Obsidian layer resolved it. */
export type EntityTarget = { kind: "note" | "alias"; path: string; title: string } | { kind: "unresolved" };

/** What the panel needs from the vault: link resolution and which notes Engram generates. */
export interface PanelEnv {
	resolve(linktext: string, sourcePath: string): EntityTarget;
	isGenerated(path: string): boolean;
	/** Backlink groups the person folded (or, for generated notes, unfolded). */
	toggled: Set<string>;
}

export interface RelatedState {
	entries: RelatedEntry[];
	/** Why the list is shorter than it could be (nothing embedded, offline), or null. */
	note: string | null;
}

export type PanelModel =
	| { kind: "no-note" }
	| { kind: "offline"; message: string }
	| { kind: "loading"; path: string }
	| { kind: "unknown"; path: string }
	| { kind: "error"; path: string; message: string }
	| { kind: "ready"; meta: NoteMetadata; canStore: boolean; busy: boolean; related: RelatedState | null };

export interface PanelActions extends RelatedActions {
	openPath(path: string, line?: number): void;
	openFact(id: string): void;
	storeAsFact(path: string): void;
	archiveFact(fact: Fact): void;
	reindex(path: string): void;
	/** Open the related-notes view for the whole list. */
	showRelated(): void;
}

const RELATED_IN_PANEL = 5;
const GENERATED_KEY = "\u0000generated";

function link(parent: HTMLElement, text: string, onClick: () => void, cls = "engram-link"): HTMLElement {
	const a = parent.createEl("a", { cls, text, href: "#" });
	a.addEventListener("click", (evt) => {
		evt.preventDefault();
		onClick();
	});
	return a;
}

function section(el: HTMLElement, title: string, cls = ""): HTMLElement {
	const s = el.createDiv({ cls: `engram-section ${cls}`.trim() });
	s.createDiv({ cls: "engram-section-title", text: title });
	return s;
}

function field(parent: HTMLElement, label: string, tooltip?: string): HTMLElement {
	const r = parent.createDiv({ cls: "engram-field" });
	r.createSpan({ cls: "engram-field-label", text: label });
	const v = r.createSpan({ cls: "engram-field-value" });
	if (tooltip) v.setAttr("title", tooltip);
	return v;
}

function renderEntity(v: HTMLElement, entity: string, meta: NoteMetadata, env: PanelEnv, actions: PanelActions): void {
	const t = parseEntity(entity);
	const target = env.resolve(t.linktext, meta.path);
	const display = t.display;
	if (target.kind === "unresolved") {
		v.createSpan({ cls: "engram-unresolved", text: display, attr: { title: `No note called "${t.linktext}" in this vault` } });
		return;
	}
	const a = link(v, display, () => actions.openPath(target.path), "engram-link engram-entity");
	if (target.kind === "alias" || target.title !== display) {
		a.setAttr("title", target.kind === "alias" ? `${target.title} (has the alias "${t.linktext}")` : target.title);
		if (target.kind === "alias") v.createSpan({ cls: "engram-muted engram-alias-of", text: ` (${target.title})` });
	}
}

function renderFact(el: HTMLElement, meta: NoteMetadata, fact: Fact, env: PanelEnv, actions: PanelActions, busy: boolean): void {
	const s = section(el, "Fact", "engram-fact");
	const badges = s.createDiv({ cls: "engram-badges" });
	badges.createSpan({ cls: "engram-badge engram-badge-fact", text: factTypeLabel(fact.factType), attr: { title: fact.factType } });
	badges.createSpan({ cls: `engram-badge engram-lifecycle-${fact.lifecycleState}`, text: lifecycleLabel(fact.lifecycleState) });
	badges.createSpan({ cls: `engram-badge engram-sync-${fact.syncState}`, text: syncLabel(fact.syncState) });
	const tier = fact.importanceTier || (fact.importanceScore >= 0.8 ? "structural" : fact.importanceScore >= 0.4 ? "potential" : "contextual");
	field(s, "Importance", `${fact.importanceScore.toFixed(2)} · ${tier}`).setText(importanceLabel(fact.importanceScore, tier));
	field(s, "Confidence", fact.confidence.toFixed(2)).setText(confidenceLabel(fact.confidence));
	field(s, "Updated").setText(formatWhen(fact.updatedAt || fact.timestamp));
	if (fact.entities.length) {
		const v = field(s, "About");
		fact.entities.forEach((e, i) => {
			if (i > 0) v.appendText(", ");
			renderEntity(v, e, meta, env, actions);
		});
	}
	if (fact.tags.length) field(s, "Tags").setText(fact.tags.map((t) => (t.startsWith("#") ? t : `#${t}`)).join(" "));
	if (fact.supersededBy) {
		const id = fact.supersededBy;
		link(field(s, "Replaced by"), id, () => actions.openFact(id));
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

function renderRelated(el: HTMLElement, related: RelatedState | null, actions: PanelActions): void {
	const s = section(el, "Related notes", "engram-panel-related");
	if (related === null) {
		s.createDiv({ cls: "engram-muted", text: "Finding related notes…" });
		return;
	}
	if (related.entries.length === 0) s.createDiv({ cls: "engram-muted", text: "No related notes found yet." });
	else renderRelatedList(s, related.entries.slice(0, RELATED_IN_PANEL), actions);
	if (related.note) s.createDiv({ cls: "engram-muted engram-basis", text: related.note });
	if (related.entries.length > RELATED_IN_PANEL) link(s.createDiv({ cls: "engram-more" }), `All ${related.entries.length} related notes`, () => actions.showRelated());
}

function renderIndex(el: HTMLElement, meta: NoteMetadata, busy: boolean, actions: PanelActions): void {
	const c = meta.coverage;
	const row = el.createDiv({ cls: "engram-index-line" });
	const text = c.indexed ? `Indexed ${formatWhen(c.indexedAt)} · ${embeddingText(c)}` : "Not indexed yet";
	row.createSpan({ cls: "engram-muted", text });
	const reindex = row.createEl("button", { cls: "engram-small-button", text: "Reindex note" });
	reindex.disabled = busy;
	reindex.addEventListener("click", () => actions.reindex(meta.path));
}

/** Whether a group shows its lines: the person's notes unfold by default, generated ones not. */
function isOpen(env: PanelEnv, key: string, defaultOpen: boolean): boolean {
	return env.toggled.has(key) ? !defaultOpen : defaultOpen;
}

function collapsible(parent: HTMLElement, env: PanelEnv, key: string, defaultOpen: boolean, cls: string): { head: HTMLElement; body: HTMLElement } {
	const box = parent.createDiv({ cls });
	const head = box.createDiv({ cls: "engram-collapse-head", attr: { role: "button", tabindex: "0" } });
	const body = box.createDiv({ cls: "engram-collapse-body" });
	const apply = (): void => {
		const open = isOpen(env, key, defaultOpen);
		box.toggleClass("is-collapsed", !open);
		head.setAttr("aria-expanded", String(open));
	};
	const toggle = (): void => {
		if (env.toggled.has(key)) env.toggled.delete(key);
		else env.toggled.add(key);
		apply();
	};
	head.addEventListener("click", (evt) => {
		if ((evt.target as HTMLElement | null)?.closest("a")) return;
		toggle();
	});
	head.addEventListener("keydown", (evt) => {
		if (evt.key === "Enter" || evt.key === " ") {
			evt.preventDefault();
			toggle();
		}
	});
	apply();
	return { head, body };
}

function renderGroup(parent: HTMLElement, g: BacklinkGroup, meta: NoteMetadata, env: PanelEnv, actions: PanelActions, defaultOpen: boolean, showFolder: boolean): void {
	const { head, body } = collapsible(parent, env, g.path, defaultOpen, "engram-backlink-group");
	head.parentElement?.setAttr("data-path", g.path);
	head.createSpan({ cls: "engram-collapse-icon" });
	link(head, g.title, () => actions.openPath(g.path, g.lines[0]?.line), "engram-link engram-backlink-title");
	// Two notes of one name (in different folders): say which is which.
	const folder = showFolder ? folderOf(g.path) : "";
	if (folder) head.createSpan({ cls: "engram-related-folder", text: folder });
	head.createSpan({ cls: "engram-count", text: String(g.count), attr: { title: plural(g.count, "link") } });
	const self = selfNames(meta);
	for (const l of g.lines) {
		const line = body.createDiv({ cls: "engram-backlink engram-context", attr: { title: `Line ${l.line}` } });
		renderRuns(line, readableRuns(l.context, [], { isSelfLink: (p) => self.has(p.toLowerCase()) }));
		line.addEventListener("click", () => actions.openPath(g.path, l.line));
	}
}

/** Names a link to this note may use: its path with and without `.md`, and its file name. */
function selfNames(meta: NoteMetadata): Set<string> {
	const noExt = meta.path.replace(/\.md$/i, "");
	const base = noExt.split("/").pop() ?? noExt;
	return new Set([meta.path, noExt, base, meta.title].map((s) => s.toLowerCase()));
}

function renderBacklinks(el: HTMLElement, meta: NoteMetadata, env: PanelEnv, actions: PanelActions): void {
	const { notes, generated } = groupBacklinks(meta.backlinks, (p) => env.isGenerated(p));
	const links = notes.reduce((n, g) => n + g.count, 0);
	const title = notes.length === 0 ? "Backlinks" : `Backlinks · ${plural(notes.length, "note")}${links > notes.length ? `, ${plural(links, "link")}` : ""}`;
	const s = section(el, title, "engram-backlinks");
	if (notes.length === 0) s.createDiv({ cls: "engram-muted", text: generated.length ? "No notes of yours link here." : "No backlinks" });
	const titles = new Map<string, number>();
	for (const g of [...notes, ...generated]) titles.set(g.title, (titles.get(g.title) ?? 0) + 1);
	const twin = (g: BacklinkGroup): boolean => (titles.get(g.title) ?? 0) > 1;
	for (const g of notes) renderGroup(s, g, meta, env, actions, true, twin(g));
	if (generated.length === 0) return;
	const { head, body } = collapsible(el, env, GENERATED_KEY, false, "engram-section engram-generated");
	head.createSpan({ cls: "engram-collapse-icon" });
	head.createSpan({ cls: "engram-section-title", text: `From Engram's daily notes and ledger · ${generated.length}` });
	for (const g of generated) renderGroup(body, g, meta, env, actions, false, twin(g));
}

function renderReady(el: HTMLElement, model: Extract<PanelModel, { kind: "ready" }>, env: PanelEnv, actions: PanelActions): void {
	const { meta, canStore, busy } = model;
	const head = el.createDiv({ cls: "engram-panel-head" });
	head.createDiv({ cls: "engram-panel-title", text: meta.title });
	head.createDiv({ cls: "engram-recall-path", text: meta.path });

	if (meta.fact) renderFact(el, meta, meta.fact, env, actions, busy);
	else if (canStore) {
		const buttons = el.createDiv({ cls: "engram-buttons" });
		const store = buttons.createEl("button", { cls: "mod-cta", text: "Store as fact" });
		store.disabled = busy;
		store.addEventListener("click", () => actions.storeAsFact(meta.path));
	}
	renderRelated(el, model.related, actions);
	renderIndex(el, meta, busy, actions);
	renderBacklinks(el, meta, env, actions);
}

export function renderPanel(el: HTMLElement, model: PanelModel, actions: PanelActions, env: PanelEnv): void {
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
			renderReady(el, model, env, actions);
			return;
	}
}
