import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createHarness, DISCOVERY, disposeCurrent, key, type, type Harness } from "./harness";
import { MarkdownView, Notice, shimStats, TFile, TFolder } from "./shim/obsidian";

const CONSOLE = ["log", "info", "warn", "error", "debug"] as const;
let consoleSpies: Array<ReturnType<typeof vi.spyOn>> = [];

beforeEach(() => {
	vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval", "Date"] });
	vi.setSystemTime(new Date("2025-03-04T05:06:07Z"));
	consoleSpies = CONSOLE.map((m) => vi.spyOn(console, m));
	Notice.shown = [];
});

afterEach(() => {
	disposeCurrent();
	// No console noise, whatever the test did.
	for (const spy of consoleSpies) expect(spy).not.toHaveBeenCalled();
	vi.restoreAllMocks();
	vi.useRealTimers();
});

function prompt(): HTMLElement | null {
	return document.querySelector<HTMLElement>(".modal-container .prompt");
}

function suggestions(): string[] {
	return Array.from(document.querySelectorAll(".suggestion-item .engram-recall-title")).map((e) => e.textContent ?? "");
}

async function openRecall(h: Harness, query: string): Promise<HTMLInputElement> {
	key("R", { ctrl: true, shift: true });
	const input = prompt()?.querySelector<HTMLInputElement>(".prompt-input");
	if (!input) throw new Error("recall modal did not open");
	await h.tick();
	type(input, query);
	await h.tick(500);
	return input;
}

async function openNote(h: Harness, path: string): Promise<MarkdownView> {
	const file = h.app.vault.getFileByPath(path);
	if (!file) throw new Error(`no ${path}`);
	await h.app.workspace.getLeaf(false).openFile(file);
	await h.tick();
	return h.app.workspace.getActiveViewOfType(MarkdownView) as MarkdownView;
}

describe("plugin lifecycle", () => {
	it("connects and shows it in the status bar", async () => {
		const h = await createHarness();
		expect(h.statusText()).toBe("Engram");
		const item = h.app.dom.statusBar.querySelector(".status-bar-item");
		expect(item?.getAttribute("aria-label")).toBe("Connected: 3 notes, 6 chunks, 0 embedded");
		expect([...h.app.commands.commands.keys()].sort()).toEqual([
			"engram:open-fact-panel", "engram:open-related-notes", "engram:recall", "engram:reindex-vault", "engram:show-status",
			"engram:start-backend", "engram:stop-backend", "engram:store-as-fact",
		]);
	});

	it("shows not running without discovery.json, and connects once it appears", async () => {
		const h = await createHarness({ discovery: false });
		expect(h.statusText()).toBe("Engram: not running");
		h.writeDiscovery(4100);
		await h.tick(5000);
		expect(h.statusText()).toBe("Engram");
	});

	it("follows a backend restart on a new port and token", async () => {
		const h = await createHarness();
		h.fake.token = "rotated";
		h.writeDiscovery(4200);
		await h.tick(5000);
		expect(h.statusText()).toBe("Engram");
		expect(h.plugin.settings.pollIntervalSeconds).toBe(5);
		const polls = h.fake.requests.filter((r) => r.path === "/v1/status").length;
		await h.tick(5000);
		expect(h.fake.requests.filter((r) => r.path === "/v1/status").length).toBe(polls + 1);
	});

	it("goes offline when the backend stops answering", async () => {
		const h = await createHarness();
		h.host.handler = () => Promise.reject(new Error("net::ERR_CONNECTION_REFUSED"));
		await h.tick(5000);
		expect(h.statusText()).toBe("Engram: offline");
		h.host.files.delete(DISCOVERY);
		await h.tick(5000);
		expect(h.statusText()).toBe("Engram: not running");
	});
});

describe("recall modal", () => {
	it("opens on Mod+Shift+R, searches once per pause, and opens the note at the line on Enter", async () => {
		const h = await createHarness();
		await openRecall(h, "budget");
		const queries = h.fake.requests.filter((r) => ["/v1/search", "/v1/vsearch", "/v1/query"].includes(r.path));
		expect(queries).toEqual([{ method: "POST", path: "/v1/search" }]);
		expect(suggestions()).toEqual(["Beta", "Alpha"]);
		expect(Array.from(document.querySelectorAll(".suggestion-item mark")).map((m) => m.textContent)).toEqual(["Budget", "budget"]);
		key("Enter");
		await h.tick();
		expect(prompt()).toBeNull();
		const view = h.app.workspace.getActiveViewOfType(MarkdownView);
		expect(view?.file?.path).toBe("Beta.md");
		expect(view?.editor.getCursor().line).toBe(2);
	});

	it("opens in a new tab on Mod+Enter", async () => {
		const h = await createHarness();
		await openNote(h, "Alpha.md");
		await openRecall(h, "gamma");
		key("Enter", { ctrl: true });
		await h.tick();
		expect(h.app.workspace.getLeavesOfType("markdown").map((l) => (l.view as MarkdownView).file?.path)).toEqual(["Alpha.md", "folder/Gamma.md"]);
	});

	it("inserts a link at the cursor on Shift+Enter", async () => {
		const h = await createHarness();
		const view = await openNote(h, "Alpha.md");
		view.editor.setCursor({ line: 1, ch: 0 });
		await openRecall(h, "gamma");
		key("Enter", { shift: true });
		await h.tick();
		expect(view.editor.getLine(1)).toBe("[[Gamma]]");
	});

	it("runs a deep query with the ? prefix and shows the backend's notices", async () => {
		const h = await createHarness();
		await openRecall(h, "?alpha");
		const body = h.fake.requests.filter((r) => r.path === "/v1/query");
		expect(body).toHaveLength(1);
		expect(document.querySelector(".engram-recall-bar")?.textContent).toContain("Deep search");
		expect(document.querySelector(".engram-notice")?.textContent).toContain("keywords only");
	});

	it("uses the default search mode setting; ? switches to the other mode", async () => {
		const h = await createHarness({ data: { defaultSearchMode: "query" } });
		const input = await openRecall(h, "alpha");
		expect(input.placeholder).toBe("Deep search (start with ? for a quick search)");
		type(input, "?budget");
		await h.tick(500);
		expect(h.fake.queries.map((q) => [q.body.q, q.mode, q.body.collections])).toEqual([
			["alpha", "query", ["vault"]],
			["budget", "search", ["vault"]],
		]);
		expect(document.querySelector(".engram-recall-bar")?.textContent).toContain("Quick search");
	});

	it("lists recent facts for an empty query", async () => {
		const h = await createHarness();
		await h.fake.handle({
			url: "http://127.0.0.1:4100/v1/facts/from-note",
			method: "POST",
			headers: { Authorization: `Bearer ${h.fake.token}` },
			body: JSON.stringify({ path: "Alpha.md" }),
		});
		key("R", { ctrl: true, shift: true });
		await h.tick();
		expect(h.fake.requests.some((r) => r.path === "/v1/facts?limit=20")).toBe(true);
		expect(suggestions()).toEqual(["Alpha"]);
		expect(document.querySelector(".engram-recall-bar")?.textContent).toBe("Recent facts");
		key("Escape");
		expect(prompt()).toBeNull();
	});

	it("shows the error instead of results when the backend is down", async () => {
		const h = await createHarness();
		h.host.handler = () => Promise.reject(new Error("net::ERR_CONNECTION_REFUSED"));
		await openRecall(h, "alpha");
		expect(document.querySelector(".suggestion-empty")?.textContent).toContain("does not answer");
	});
});

describe("facts", () => {
	it("stores the selection as a fact and links to it from the notice", async () => {
		const h = await createHarness();
		const view = await openNote(h, "Beta.md");
		view.editor.setSelection({ line: 3, ch: 0 }, { line: 3, ch: 25 });
		expect(h.app.commands.executeCommandById("engram:store-as-fact", h.app)).toBe(true);
		await h.tick();
		const fact = h.fake.facts[0];
		expect(fact?.text).toBe("The alpha budget is tight");
		const notice = Notice.shown[Notice.shown.length - 1];
		expect(notice?.messageEl.textContent).toBe("Stored the selection as a fact: The alpha budget is tight");
		await h.app.vault.loadFromHost(); // Obsidian's watcher sees the new note
		notice?.messageEl.querySelector("a")?.click();
		await h.tick();
		expect(h.app.workspace.getActiveFile()?.path).toBe(fact?.path);
	});

	it("is not offered inside the facts folder", async () => {
		const h = await createHarness();
		await h.app.vault.create("Engram/facts/x.md", "x");
		await openNote(h, "Engram/facts/x.md");
		expect(h.app.commands.executeCommandById("engram:store-as-fact", h.app)).toBe(false);
	});

	it("follows the facts folder the backend reports, unless the setting names one", async () => {
		const h = await createHarness();
		h.fake.factsRoot = "Memory";
		await h.tick(5000); // the next status poll reports it
		await h.app.vault.create("Memory/facts/x.md", "x");
		await h.app.vault.create("Engram/y.md", "y");
		await openNote(h, "Memory/facts/x.md");
		expect(h.app.commands.executeCommandById("engram:store-as-fact", h.app)).toBe(false);
		await openNote(h, "Engram/y.md");
		expect(h.app.commands.executeCommandById("engram:store-as-fact", h.app)).toBe(true);
		await h.tick();
		expect(h.fake.facts.map((f) => f.path)).toEqual(["Memory/facts/y-f0000001.md"]);
		h.plugin.settings.factsRoot = "Engram";
		expect(h.app.commands.executeCommandById("engram:store-as-fact", h.app)).toBe(false);
	});

	it("the fact panel follows the active note, and archives a fact", async () => {
		const h = await createHarness();
		await openNote(h, "Alpha.md");
		h.app.commands.executeCommandById("engram:open-fact-panel", h.app);
		await h.tick();
		const panel = () => h.app.dom.right.querySelector<HTMLElement>(".engram-panel");
		expect(panel()?.querySelector(".engram-panel-title")?.textContent).toBe("Alpha");
		expect(panel()?.textContent).toContain("Backlinks · 1 note");
		expect(panel()?.querySelector(".engram-backlink-title")?.textContent).toBe("Gamma");
		expect(panel()?.querySelector(".engram-backlink.engram-context")?.textContent).toBe("Links to Alpha and more.");
		// related by links, from Obsidian's metadata cache: Gamma links here, Alpha links to Beta
		expect(Array.from(panel()?.querySelectorAll(".engram-related-title") ?? []).map((e) => e.textContent).sort()).toEqual(["Beta", "Gamma"]);

		await openNote(h, "Beta.md");
		expect(panel()?.querySelector(".engram-panel-title")?.textContent).toBe("Beta");

		Array.from(panel()?.querySelectorAll("button") ?? []).find((b) => b.textContent === "Store as fact")?.click();
		await h.tick();
		await h.app.vault.loadFromHost();
		const fact = h.fake.facts[0];
		await openNote(h, fact?.path ?? "");
		expect(panel()?.querySelector(".engram-badge-fact")?.textContent).toBe("Fact");
		Array.from(panel()?.querySelectorAll("button") ?? []).find((b) => b.textContent === "Archive")?.click();
		await h.tick();
		expect(h.fake.facts[0]?.lifecycleState).toBe("archived");
		expect(panel()?.textContent).toContain("Archived");
	});
});

describe("auto-sync", () => {
	it("ignores the startup create storm and batches later changes into one request", async () => {
		const h = await createHarness({ layoutReady: false });
		await h.app.vault.create("early.md", "before layout ready");
		h.app.workspace.triggerLayoutReady();
		await h.tick(3000);
		expect(h.fake.indexRequests).toEqual([]);

		await h.app.vault.create("new.md", "hello");
		await h.app.vault.modify(h.app.vault.getFileByPath("Beta.md") as TFile, "changed");
		await h.app.vault.rename(h.app.vault.getFileByPath("Alpha.md") as TFile, "Alpha 2.md");
		await h.app.vault.rename(h.app.vault.getFolderByPath("folder") as TFolder, "moved");
		await h.app.vault.delete(h.app.vault.getFileByPath("early.md") as TFile);
		await h.app.vault.create("image.png", "binary");
		await h.tick(999);
		expect(h.fake.indexRequests).toEqual([]);
		await h.tick(1);
		expect(h.fake.indexRequests).toEqual([
			{
				paths: ["Beta.md", "new.md"],
				deleted: ["early.md"],
				renamed: [
					{ from: "Alpha.md", to: "Alpha 2.md" },
					{ from: "folder/Gamma.md", to: "moved/Gamma.md" },
				],
			},
		]);
	});

	it("keeps changes while offline and sends them when the backend is back", async () => {
		const h = await createHarness();
		const handler = h.host.handler;
		h.host.handler = () => Promise.reject(new Error("net::ERR_CONNECTION_REFUSED"));
		await h.app.vault.create("offline.md", "x");
		await h.tick(5000);
		expect(h.statusText()).toBe("Engram: offline");
		h.host.handler = handler;
		await h.tick(5000);
		expect(h.statusText()).toBe("Engram");
		expect(h.fake.indexRequests).toEqual([{ paths: ["offline.md"] }]);
	});

	it("reports the active note and selection, debounced", async () => {
		const h = await createHarness();
		const view = await openNote(h, "Alpha.md");
		view.editor.setSelection({ line: 2, ch: 4 }, { line: 2, ch: 9 });
		document.dispatchEvent(new Event("selectionchange"));
		await h.tick(499);
		expect(h.fake.activeNotes).toEqual([]);
		await h.tick(1);
		expect(h.fake.activeNotes).toEqual([{ path: "Alpha.md", selection: "alpha", cursorLine: 3 }]);
		document.dispatchEvent(new Event("selectionchange"));
		await h.tick(1000);
		expect(h.fake.activeNotes).toHaveLength(1);
	});

	it("re-sends the open note every minute, so the backend knows it is still open", async () => {
		const h = await createHarness();
		await openNote(h, "Alpha.md");
		await h.tick(500);
		expect(h.fake.activeNotes).toEqual([{ path: "Alpha.md", selection: "", cursorLine: 1 }]);
		await h.tick(55_000);
		expect(h.fake.activeNotes).toHaveLength(1); // unchanged, and not yet a minute
		await h.tick(10_000);
		expect(h.fake.activeNotes).toEqual([
			{ path: "Alpha.md", selection: "", cursorLine: 1 },
			{ path: "Alpha.md", selection: "", cursorLine: 1 },
		]);
	});

	it("withdraws the active note when no note is open, and keeps it while a sidebar has focus", async () => {
		const h = await createHarness();
		await openNote(h, "Alpha.md");
		await h.tick(500);
		h.app.commands.executeCommandById("engram:open-fact-panel", h.app);
		await h.tick(1000);
		expect(h.fake.activeNotes).toHaveLength(1); // the fact panel has focus; Alpha is still open
		await openNote(h, "Beta.md");
		await h.tick(500);
		expect(h.fake.activeNotes.at(-1)).toEqual({ path: "Beta.md", selection: "", cursorLine: 1 });
		h.app.workspace.getActiveViewOfType(MarkdownView)?.leaf.detach(); // the last tab closes
		await h.tick(500);
		expect(h.fake.activeNotes.at(-1)).toEqual({ path: null });
		await h.tick(120_000);
		expect(h.fake.activeNotes).toHaveLength(3); // nothing open: nothing more to say
	});

	it("withdraws the active note on unload and when sharing is turned off", async () => {
		const h = await createHarness();
		await openNote(h, "Alpha.md");
		await h.tick(500);
		h.plugin.settings.reportActiveNote = false;
		await h.plugin.saveSettings();
		await h.tick();
		expect(h.fake.activeNotes.at(-1)).toEqual({ path: null });
		h.plugin.settings.reportActiveNote = true;
		await h.plugin.saveSettings();
		await h.tick(5000); // the next status poll reports it again
		expect(h.fake.activeNotes.at(-1)).toEqual({ path: "Alpha.md", selection: "", cursorLine: 1 });
		h.plugin.unload();
		await h.tick();
		expect(h.fake.activeNotes.at(-1)).toEqual({ path: null });
	});
});

describe("settings and status modal", () => {
	it("renders every setting and saves changes to data.json", async () => {
		const h = await createHarness();
		const tab = h.app.settingTabs[0];
		tab?.display();
		const names = Array.from(tab?.containerEl.querySelectorAll(".setting-item-name") ?? []).map((e) => e.textContent);
		expect(names).toEqual([
			"Backend command", "Start backend automatically", "Status poll interval", "Default search mode",
			"Facts folder", "Index changes as you edit", "Share the active note with agents",
		]);
		const poll = tab?.containerEl.querySelectorAll<HTMLInputElement>("input[type=number]")[0] as HTMLInputElement;
		type(poll, "30");
		await h.tick();
		expect(JSON.parse(h.host.files.get(".obsidian/plugins/engram/data.json") ?? "{}").pollIntervalSeconds).toBe(30);
		const before = h.fake.requests.filter((r) => r.path === "/v1/status").length;
		await h.tick(29_000);
		expect(h.fake.requests.filter((r) => r.path === "/v1/status").length).toBe(before);
		await h.tick(1000);
		expect(h.fake.requests.filter((r) => r.path === "/v1/status").length).toBe(before + 1);
	});

	it("opens the status modal from the status bar", async () => {
		const h = await createHarness();
		h.app.dom.statusBar.querySelector<HTMLElement>(".status-bar-item")?.click();
		await h.tick();
		const modal = document.querySelector(".engram-status-modal");
		expect(modal?.querySelector(".modal-title")?.textContent).toBe("Engram");
		expect(modal?.textContent).toContain("Notes3");
		expect(modal?.textContent).toContain("http://127.0.0.1:4100");
		key("Escape");
		expect(document.querySelector(".engram-status-modal")).toBeNull();
	});
});

describe("unload", () => {
	it("leaves no listeners, intervals, status item, commands, views or timers", async () => {
		const active = new Set<number>();
		const realSet = window.setInterval.bind(window);
		const realClear = window.clearInterval.bind(window);
		vi.spyOn(window, "setInterval").mockImplementation(((fn: () => void, ms: number) => {
			const id = realSet(fn, ms);
			active.add(id);
			return id;
		}) as typeof window.setInterval);
		vi.spyOn(window, "clearInterval").mockImplementation(((id?: number) => {
			if (id !== undefined) active.delete(id);
			realClear(id);
		}) as typeof window.clearInterval);
		const domBefore = shimStats.domListeners;
		const h = await createHarness();
		await openNote(h, "Alpha.md");
		h.app.commands.executeCommandById("engram:open-fact-panel", h.app);
		await h.tick();
		h.app.settingTabs[0]?.display();
		(h.app.settingTabs[0]?.containerEl.querySelector("input[type=number]") as HTMLInputElement).value = "7";
		h.app.settingTabs[0]?.containerEl.querySelector("input[type=number]")?.dispatchEvent(new Event("input"));
		await h.app.vault.create("pending.md", "x");
		await h.tick();
		expect(active.size).toBeGreaterThan(0);
		expect(h.app.workspace.listenerCount()).toBeGreaterThan(0);

		h.plugin.unload();
		await h.tick();
		expect(active.size).toBe(0);
		expect(shimStats.domListeners).toBe(domBefore);
		expect(h.app.workspace.listenerCount()).toBe(0);
		expect(h.app.vault.listenerCount()).toBe(0);
		expect(h.app.dom.statusBar.children).toHaveLength(0);
		expect(h.app.commands.commands.size).toBe(0);
		expect(h.app.viewRegistry.size).toBe(0);
		expect(h.app.settingTabs).toHaveLength(0);
		expect(h.app.workspace.getLeavesOfType("engram-facts")).toHaveLength(0);
		// Nothing keeps running: no more requests however long we wait.
		const count = h.fake.requests.length;
		await h.tick(120_000);
		expect(h.fake.requests.length).toBe(count);
		expect(vi.getTimerCount()).toBe(0);
	});
});
