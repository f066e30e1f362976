/** Shim: Events, Component, Scope, Keymap and small helpers with Obsidian's observable behaviour. */

export interface EventRef {
	events: Events;
	name: string;
	fn: (...args: unknown[]) => unknown;
}

export class Events {
	private handlers = new Map<string, EventRef[]>();

	on(name: string, fn: (...args: never[]) => unknown): EventRef {
		const ref: EventRef = { events: this, name, fn: fn as (...args: unknown[]) => unknown };
		const list = this.handlers.get(name) ?? [];
		list.push(ref);
		this.handlers.set(name, list);
		return ref;
	}

	off(name: string, fn: (...args: never[]) => unknown): void {
		const list = this.handlers.get(name);
		if (list) this.handlers.set(name, list.filter((r) => r.fn !== fn));
	}

	offref(ref: EventRef): void {
		const list = this.handlers.get(ref.name);
		if (list) this.handlers.set(ref.name, list.filter((r) => r !== ref));
	}

	trigger(name: string, ...args: unknown[]): void {
		for (const ref of [...(this.handlers.get(name) ?? [])]) ref.fn(...args);
	}

	tryTrigger(ref: EventRef, args: unknown[]): void {
		ref.fn(...args);
	}

	/** Shim-only: how many handlers are attached (all names, or one). */
	listenerCount(name?: string): number {
		if (name !== undefined) return this.handlers.get(name)?.length ?? 0;
		let n = 0;
		for (const list of this.handlers.values()) n += list.length;
		return n;
	}
}

/** Shim-only bookkeeping so tests can prove cleanup. */
export const shimStats = { domListeners: 0, intervals: new Set<number>() };

export class Component {
	private cleanups: Array<() => void> = [];
	private children: Component[] = [];
	_loaded = false;

	load(): void {
		if (this._loaded) return;
		this._loaded = true;
		void this.onload();
		for (const c of this.children) c.load();
	}

	/** Shim-only: load and wait for an async onload, as Obsidian's plugin manager does. */
	async loadAsync(): Promise<void> {
		if (this._loaded) return;
		this._loaded = true;
		await this.onload();
		for (const c of this.children) c.load();
	}

	onload(): void | Promise<void> {}

	unload(): void {
		if (!this._loaded) return;
		this._loaded = false;
		for (const c of this.children.splice(0)) c.unload();
		for (const fn of this.cleanups.splice(0).reverse()) fn();
		this.onunload();
	}

	onunload(): void {}

	addChild<T extends Component>(c: T): T {
		this.children.push(c);
		if (this._loaded) c.load();
		return c;
	}

	removeChild<T extends Component>(c: T): T {
		this.children = this.children.filter((x) => x !== c);
		c.unload();
		return c;
	}

	register(cb: () => unknown): void {
		this.cleanups.push(() => void cb());
	}

	registerEvent(ref: EventRef): void {
		this.register(() => ref.events.offref(ref));
	}

	registerDomEvent(el: EventTarget, type: string, cb: (evt: never) => unknown, options?: boolean | AddEventListenerOptions): void {
		const fn = cb as unknown as EventListener;
		el.addEventListener(type, fn, options);
		shimStats.domListeners++;
		this.register(() => {
			el.removeEventListener(type, fn, options);
			shimStats.domListeners--;
		});
	}

	registerInterval(id: number): number {
		shimStats.intervals.add(id);
		this.register(() => {
			window.clearInterval(id);
			shimStats.intervals.delete(id);
		});
		return id;
	}
}

export type Modifier = "Mod" | "Ctrl" | "Meta" | "Shift" | "Alt";

interface KeyHandler {
	modifiers: Modifier[];
	key: string | null;
	func: (evt: KeyboardEvent, ctx: unknown) => false | unknown;
}

/** True when the event has exactly these modifiers (Mod = Ctrl or Cmd). */
export function matchesModifiers(evt: KeyboardEvent, mods: readonly string[]): boolean {
	const mod = mods.includes("Mod");
	const ctrl = mods.includes("Ctrl") || (mod && !evt.metaKey);
	const meta = mods.includes("Meta") || (mod && evt.metaKey);
	return evt.ctrlKey === ctrl && evt.metaKey === meta && evt.shiftKey === mods.includes("Shift") && evt.altKey === mods.includes("Alt");
}

export class Scope {
	private keys: KeyHandler[] = [];

	constructor(private readonly parent?: Scope) {}

	register(modifiers: Modifier[] | null, key: string | null, func: KeyHandler["func"]): KeyHandler {
		const h: KeyHandler = { modifiers: modifiers ?? [], key, func };
		this.keys.push(h);
		return h;
	}

	unregister(handler: KeyHandler): void {
		this.keys = this.keys.filter((h) => h !== handler);
	}

	/** Shim-only: run the first matching handler; true when one handled the key. */
	handleKey(evt: KeyboardEvent): boolean {
		for (const h of this.keys) {
			if (h.key !== null && h.key.toLowerCase() !== evt.key.toLowerCase()) continue;
			if (!matchesModifiers(evt, h.modifiers)) continue;
			if (h.func(evt, {}) === false) {
				evt.preventDefault();
				return true;
			}
		}
		return this.parent?.handleKey(evt) ?? false;
	}
}

export type PaneType = "tab" | "split" | "window";

export const Keymap = {
	isModEvent(evt?: MouseEvent | KeyboardEvent | null): PaneType | boolean {
		if (!evt) return false;
		const mod = evt.ctrlKey || evt.metaKey;
		if (mod && evt.altKey && evt.shiftKey) return "window";
		if (mod && evt.altKey) return "split";
		return mod ? "tab" : false;
	},
	isModifier(evt: MouseEvent | KeyboardEvent, m: Modifier): boolean {
		if (m === "Mod") return evt.ctrlKey || evt.metaKey;
		return m === "Shift" ? evt.shiftKey : m === "Alt" ? evt.altKey : m === "Ctrl" ? evt.ctrlKey : evt.metaKey;
	},
};

export const Platform = {
	isDesktop: true,
	isDesktopApp: true,
	isMobile: false,
	isMobileApp: false,
	isMacOS: false,
	isWin: false,
	isLinux: true,
};

export function normalizePath(path: string): string {
	return path.replace(/\\/g, "/").replace(/\/+/g, "/").replace(/^\/|\/$/g, "") || "/";
}

export function setIcon(el: HTMLElement, icon: string): void {
	el.empty();
	el.createSpan({ cls: "shim-icon", attr: { "data-icon": icon } });
}
