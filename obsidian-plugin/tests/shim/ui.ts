/** Shim: Modal, SuggestModal, Notice, Setting and PluginSettingTab with Obsidian's DOM classes. */
import type { App } from "./app";
import { Component, Scope } from "./core";

export class Modal {
	containerEl: HTMLElement;
	modalEl: HTMLElement;
	titleEl: HTMLElement;
	contentEl: HTMLElement;
	scope: Scope;
	isOpen = false;

	constructor(public app: App) {
		this.scope = new Scope();
		this.containerEl = createDiv({ cls: "modal-container" });
		this.containerEl.createDiv({ cls: "modal-bg" });
		this.modalEl = this.containerEl.createDiv({ cls: "modal" });
		const close = this.modalEl.createDiv({ cls: "modal-close-button" });
		close.addEventListener("click", () => this.close());
		this.titleEl = this.modalEl.createDiv({ cls: "modal-title" });
		this.contentEl = this.modalEl.createDiv({ cls: "modal-content" });
	}

	setTitle(title: string): this {
		this.titleEl.setText(title);
		return this;
	}

	open(): void {
		if (this.isOpen) return;
		this.isOpen = true;
		document.body.appendChild(this.containerEl);
		this.app.pushModal(this);
		void this.onOpen();
	}

	close(): void {
		if (!this.isOpen) return;
		this.isOpen = false;
		this.app.popModal(this);
		this.containerEl.remove();
		this.onClose();
	}

	/** Shim-only: keys reach the top modal's scope first; Escape closes. */
	handleKey(evt: KeyboardEvent): void {
		if (this.scope.handleKey(evt)) return;
		if (evt.key === "Escape") this.close();
	}

	onOpen(): void | Promise<void> {}
	onClose(): void {}
}

export interface Instruction {
	command: string;
	purpose: string;
}

export abstract class SuggestModal<T> extends Modal {
	limit = 100;
	emptyStateText = "No results found.";
	inputEl: HTMLInputElement;
	resultContainerEl: HTMLElement;
	private instructionsEl: HTMLElement;
	private values: T[] = [];
	private selected = 0;

	constructor(app: App) {
		super(app);
		this.modalEl.addClass("prompt");
		this.titleEl.remove();
		this.contentEl.remove();
		const inputContainer = this.modalEl.createDiv({ cls: "prompt-input-container" });
		this.inputEl = inputContainer.createEl("input", { cls: "prompt-input", type: "text" });
		this.resultContainerEl = this.modalEl.createDiv({ cls: "prompt-results" });
		this.instructionsEl = this.modalEl.createDiv({ cls: "prompt-instructions" });
		this.inputEl.addEventListener("input", () => void this.updateSuggestions());
		this.scope.register([], "ArrowDown", () => {
			this.select(this.selected + 1);
			return false;
		});
		this.scope.register([], "ArrowUp", () => {
			this.select(this.selected - 1);
			return false;
		});
		this.scope.register([], "Enter", (evt) => {
			this.selectActiveSuggestion(evt);
			return false;
		});
	}

	setPlaceholder(p: string): void {
		this.inputEl.placeholder = p;
	}

	setInstructions(list: Instruction[]): void {
		this.instructionsEl.empty();
		for (const i of list) {
			const el = this.instructionsEl.createDiv({ cls: "prompt-instruction" });
			el.createSpan({ cls: "prompt-instruction-command", text: i.command });
			el.createSpan({ text: i.purpose });
		}
	}

	onOpen(): void {
		this.inputEl.focus();
		void this.updateSuggestions();
	}

	/** Like Obsidian: ask for suggestions and render them when they arrive. */
	async updateSuggestions(): Promise<void> {
		const result = this.getSuggestions(this.inputEl.value);
		const values = result instanceof Promise ? await result : result;
		if (!this.isOpen) return;
		this.values = values.slice(0, this.limit);
		this.resultContainerEl.empty();
		if (this.values.length === 0) {
			this.onNoSuggestion();
			return;
		}
		this.values.forEach((v, i) => {
			const el = this.resultContainerEl.createDiv({ cls: "suggestion-item" });
			el.addEventListener("mousemove", () => this.select(i));
			el.addEventListener("click", (evt) => this.selectSuggestion(v, evt));
			this.renderSuggestion(v, el);
		});
		this.select(0);
	}

	onNoSuggestion(): void {
		this.resultContainerEl.createDiv({ cls: "suggestion-empty", text: this.emptyStateText });
	}

	selectSuggestion(value: T, evt: MouseEvent | KeyboardEvent): void {
		this.close();
		this.onChooseSuggestion(value, evt);
	}

	selectActiveSuggestion(evt: MouseEvent | KeyboardEvent): void {
		const v = this.values[this.selected];
		if (v !== undefined) this.selectSuggestion(v, evt);
	}

	private select(i: number): void {
		if (this.values.length === 0) return;
		this.selected = (i + this.values.length) % this.values.length;
		Array.from(this.resultContainerEl.children).forEach((el, j) => el.toggleClass("is-selected", j === this.selected));
	}

	abstract getSuggestions(query: string): T[] | Promise<T[]>;
	abstract renderSuggestion(value: T, el: HTMLElement): void;
	abstract onChooseSuggestion(item: T, evt: MouseEvent | KeyboardEvent): void;
}

export class Notice {
	static shown: Notice[] = [];
	noticeEl: HTMLElement;
	messageEl: HTMLElement;

	constructor(message: string | DocumentFragment, duration = 5000) {
		let container = document.body.querySelector<HTMLElement>(".notice-container");
		if (!container) container = document.body.createDiv({ cls: "notice-container" });
		this.noticeEl = container.createDiv({ cls: "notice" });
		this.messageEl = this.noticeEl.createDiv({ cls: "notice-message" });
		this.messageEl.setText(message);
		Notice.shown.push(this);
		if (duration > 0) window.setTimeout(() => this.hide(), duration);
	}

	setMessage(message: string | DocumentFragment): this {
		this.messageEl.setText(message);
		return this;
	}

	hide(): void {
		this.noticeEl.remove();
	}
}

type Cb<T> = (value: T) => unknown;

class ValueComponent<E extends HTMLInputElement | HTMLSelectElement, V> {
	protected changeCb: Cb<V> | null = null;
	constructor(public inputEl: E) {}
	onChange(cb: Cb<V>): this {
		this.changeCb = cb;
		return this;
	}
}

export class TextComponent extends ValueComponent<HTMLInputElement, string> {
	constructor(parent: HTMLElement) {
		super(parent.createEl("input", { type: "text" }));
		this.inputEl.addEventListener("input", () => this.changeCb?.(this.inputEl.value));
	}
	setValue(v: string): this {
		this.inputEl.value = v;
		return this;
	}
	getValue(): string {
		return this.inputEl.value;
	}
	setPlaceholder(p: string): this {
		this.inputEl.placeholder = p;
		return this;
	}
}

export class ToggleComponent extends ValueComponent<HTMLInputElement, boolean> {
	constructor(parent: HTMLElement) {
		super(parent.createEl("input", { type: "checkbox", cls: "checkbox-container" }));
		this.inputEl.addEventListener("change", () => this.changeCb?.(this.inputEl.checked));
	}
	setValue(v: boolean): this {
		this.inputEl.checked = v;
		return this;
	}
	getValue(): boolean {
		return this.inputEl.checked;
	}
}

export class DropdownComponent extends ValueComponent<HTMLSelectElement, string> {
	constructor(parent: HTMLElement) {
		super(parent.createEl("select", { cls: "dropdown" }));
		this.selectEl = this.inputEl;
		this.inputEl.addEventListener("change", () => this.changeCb?.(this.inputEl.value));
	}
	selectEl: HTMLSelectElement;
	addOption(value: string, display: string): this {
		this.inputEl.createEl("option", { text: display, value });
		return this;
	}
	setValue(v: string): this {
		this.inputEl.value = v;
		return this;
	}
	getValue(): string {
		return this.inputEl.value;
	}
}

export class ButtonComponent {
	buttonEl: HTMLButtonElement;
	constructor(parent: HTMLElement) {
		this.buttonEl = parent.createEl("button");
	}
	setButtonText(t: string): this {
		this.buttonEl.setText(t);
		return this;
	}
	setCta(): this {
		this.buttonEl.addClass("mod-cta");
		return this;
	}
	onClick(cb: (evt: MouseEvent) => unknown): this {
		this.buttonEl.addEventListener("click", (evt) => cb(evt));
		return this;
	}
}

export class Setting {
	settingEl: HTMLElement;
	nameEl: HTMLElement;
	descEl: HTMLElement;
	controlEl: HTMLElement;

	constructor(containerEl: HTMLElement) {
		this.settingEl = containerEl.createDiv({ cls: "setting-item" });
		const info = this.settingEl.createDiv({ cls: "setting-item-info" });
		this.nameEl = info.createDiv({ cls: "setting-item-name" });
		this.descEl = info.createDiv({ cls: "setting-item-description" });
		this.controlEl = this.settingEl.createDiv({ cls: "setting-item-control" });
	}
	setName(n: string): this {
		this.nameEl.setText(n);
		return this;
	}
	setDesc(d: string | DocumentFragment): this {
		this.descEl.setText(d);
		return this;
	}
	setHeading(): this {
		this.settingEl.addClass("setting-item-heading");
		return this;
	}
	addText(cb: (c: TextComponent) => unknown): this {
		cb(new TextComponent(this.controlEl));
		return this;
	}
	addToggle(cb: (c: ToggleComponent) => unknown): this {
		cb(new ToggleComponent(this.controlEl));
		return this;
	}
	addDropdown(cb: (c: DropdownComponent) => unknown): this {
		cb(new DropdownComponent(this.controlEl));
		return this;
	}
	addButton(cb: (c: ButtonComponent) => unknown): this {
		cb(new ButtonComponent(this.controlEl));
		return this;
	}
}

export class PluginSettingTab extends Component {
	containerEl: HTMLElement;
	constructor(
		public app: App,
		public plugin: unknown,
	) {
		super();
		this.containerEl = createDiv({ cls: "vertical-tab-content" });
	}
	display(): void {}
	hide(): void {
		this.containerEl.empty();
	}
}
