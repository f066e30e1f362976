/**
 * Obsidian's DOM helpers (createEl, createDiv, empty, setText, addClass, …) installed on the
 * prototypes of whatever DOM is present: happy-dom under vitest, real Chromium in the e2e test.
 */

type Info = DomElementInfo | string | undefined;

function applyInfo(el: HTMLElement, o: Info): void {
	if (o === undefined) return;
	const info: DomElementInfo = typeof o === "string" ? { text: o } : o;
	if (info.cls !== undefined) {
		const classes = Array.isArray(info.cls) ? info.cls : info.cls.split(" ");
		el.classList.add(...classes.filter((c) => c !== ""));
	}
	if (info.text !== undefined) {
		if (typeof info.text === "string") el.textContent = info.text;
		else el.appendChild(info.text);
	}
	if (info.attr) for (const [k, v] of Object.entries(info.attr)) if (v !== null) el.setAttribute(k, String(v));
	if (info.title !== undefined) el.title = info.title;
	if (info.href !== undefined) el.setAttribute("href", info.href);
	if (info.type !== undefined) el.setAttribute("type", info.type);
	if (info.placeholder !== undefined) el.setAttribute("placeholder", info.placeholder);
	if (info.value !== undefined) (el as HTMLInputElement).value = info.value;
}

function make<K extends keyof HTMLElementTagNameMap>(
	doc: Document,
	parent: Node | null,
	tag: K,
	o?: Info,
	cb?: (el: HTMLElementTagNameMap[K]) => void,
): HTMLElementTagNameMap[K] {
	const el = doc.createElement(tag);
	applyInfo(el, o);
	const info = typeof o === "object" ? o : undefined;
	const target = info?.parent ?? parent;
	if (target) {
		if (info?.prepend) target.insertBefore(el, target.firstChild);
		else target.appendChild(el);
	}
	cb?.(el);
	return el;
}

let installed = false;

/** Install the helpers once on the current global DOM. */
export function installDomHelpers(): void {
	if (installed) return;
	installed = true;
	const doc = globalThis.document;
	const NodeProto = globalThis.Node.prototype as unknown as Record<string, unknown>;
	const ElProto = globalThis.Element.prototype as unknown as Record<string, unknown>;
	const HtmlProto = globalThis.HTMLElement.prototype as unknown as Record<string, unknown>;

	NodeProto.createEl = function (this: Node, tag: keyof HTMLElementTagNameMap, o?: Info, cb?: (el: HTMLElement) => void) {
		return make(doc, this, tag, o, cb);
	};
	NodeProto.createDiv = function (this: Node, o?: Info, cb?: (el: HTMLElement) => void) {
		return make(doc, this, "div", o, cb);
	};
	NodeProto.createSpan = function (this: Node, o?: Info, cb?: (el: HTMLElement) => void) {
		return make(doc, this, "span", o, cb);
	};
	NodeProto.empty = function (this: Node) {
		while (this.firstChild) this.removeChild(this.firstChild);
	};
	NodeProto.detach = function (this: Node) {
		this.parentNode?.removeChild(this);
	};
	NodeProto.appendText = function (this: Node, text: string) {
		this.appendChild(doc.createTextNode(text));
	};
	NodeProto.instanceOf = function (this: Node, type: new () => unknown) {
		return this instanceof type;
	};
	ElProto.setText = function (this: Element, val: string | DocumentFragment) {
		if (typeof val === "string") this.textContent = val;
		else {
			this.textContent = "";
			this.appendChild(val);
		}
	};
	ElProto.getText = function (this: Element) {
		return this.textContent ?? "";
	};
	ElProto.addClass = function (this: Element, ...c: string[]) {
		this.classList.add(...c.flatMap((x) => x.split(" ")).filter(Boolean));
	};
	ElProto.addClasses = function (this: Element, c: string[]) {
		this.classList.add(...c);
	};
	ElProto.removeClass = function (this: Element, ...c: string[]) {
		this.classList.remove(...c);
	};
	ElProto.removeClasses = function (this: Element, c: string[]) {
		this.classList.remove(...c);
	};
	ElProto.toggleClass = function (this: Element, c: string | string[], value: boolean) {
		for (const x of Array.isArray(c) ? c : [c]) this.classList.toggle(x, value);
	};
	ElProto.hasClass = function (this: Element, c: string) {
		return this.classList.contains(c);
	};
	ElProto.setAttr = function (this: Element, name: string, value: string | number | boolean | null) {
		if (value === null) this.removeAttribute(name);
		else this.setAttribute(name, String(value));
	};
	ElProto.getAttr = function (this: Element, name: string) {
		return this.getAttribute(name);
	};
	ElProto.find = function (this: Element, sel: string) {
		return this.querySelector(sel);
	};
	ElProto.findAll = function (this: Element, sel: string) {
		return Array.from(this.querySelectorAll(sel));
	};
	HtmlProto.show = function (this: HTMLElement) {
		this.hidden = false;
	};
	HtmlProto.hide = function (this: HTMLElement) {
		this.hidden = true;
	};
	HtmlProto.toggle = function (this: HTMLElement, show: boolean) {
		this.hidden = !show;
	};
	const frag = globalThis.DocumentFragment.prototype as unknown as Record<string, unknown>;
	frag.createEl = NodeProto.createEl;
	frag.createDiv = NodeProto.createDiv;
	frag.createSpan = NodeProto.createSpan;

	const g = globalThis as unknown as Record<string, unknown>;
	g.createEl = (tag: keyof HTMLElementTagNameMap, o?: Info, cb?: (el: HTMLElement) => void) => make(doc, null, tag, o, cb);
	g.createDiv = (o?: Info, cb?: (el: HTMLElement) => void) => make(doc, null, "div", o, cb);
	g.createSpan = (o?: Info, cb?: (el: HTMLElement) => void) => make(doc, null, "span", o, cb);
	g.createFragment = (cb?: (f: DocumentFragment) => void) => {
		const f = doc.createDocumentFragment();
		cb?.(f);
		return f;
	};
	g.activeDocument = doc;
	g.activeWindow = globalThis.window;
}
