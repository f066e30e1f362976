// @vitest-environment node
import { describe, expect, it } from "vitest";
import { serveArgs, splitCommand } from "../src/core/command";
import { segments } from "../src/core/highlight";
import type { Status } from "../src/api/types";
import { DEFAULT_SETTINGS, effectiveFactsRoot, isInside, normalizeSettings } from "../src/core/settings";
import { Debouncer } from "../src/core/timers";
import { FakeTimers } from "./fakeTimers";

describe("segments", () => {
	const hits = (snippet: string, h: Array<[number, number]>) =>
		segments(snippet, h).map((s) => (s.hit ? `[${s.text}]` : s.text)).join("");
	it.each([
		["no highlights", "hello world", [], "hello world"],
		["one", "hello world", [[6, 11]], "hello [world]"],
		["two, unsorted", "a bb ccc", [[5, 8], [0, 1]], "[a] bb [ccc]"],
		["overlapping merge", "abcdef", [[1, 3], [2, 5]], "a[bcde]f"],
		["adjacent merge", "abcdef", [[0, 2], [2, 4]], "[abcd]ef"],
		["out of range is clamped", "abc", [[1, 99]], "a[bc]"],
		["negative and reversed are dropped", "abc", [[-5, 0], [2, 1]], "abc"],
		["code points, not UTF-16 units", "😀 café ok", [[2, 6]], "😀 [café] ok"],
		["whole string", "abc", [[0, 3]], "[abc]"],
	] as Array<[string, string, Array<[number, number]>, string]>)("%s", (_n, snippet, h, want) => {
		expect(hits(snippet, h)).toBe(want);
	});
	it("returns one empty segment for an empty snippet", () => {
		expect(segments("", [])).toEqual([{ text: "", hit: false }]);
	});
});

describe("splitCommand", () => {
	it.each([
		["engram", ["engram"]],
		["  uv run  engram ", ["uv", "run", "engram"]],
		['"/Applications/My Tools/engram" --index work', ["/Applications/My Tools/engram", "--index", "work"]],
		["'C:\\Program Files\\engram.exe'", ["C:\\Program Files\\engram.exe"]],
		["C:\\tools\\engram.exe", ["C:\\tools\\engram.exe"]],
		['a "" b', ["a", "", "b"]],
		["", []],
	])("%s", (cmd, argv) => {
		expect(splitCommand(cmd)).toEqual(argv);
	});
	it("rejects an unclosed quote", () => {
		expect(() => splitCommand('"engram')).toThrow(/unclosed quote/);
	});
	it("serveArgs passes the vault and its config folder", () => {
		expect(serveArgs("/v", ".obsidian")).toEqual(["serve", "--vault", "/v", "--config-dir", ".obsidian"]);
	});
});

describe("settings", () => {
	it("fills defaults and keeps valid values only", () => {
		expect(normalizeSettings(null)).toEqual(DEFAULT_SETTINGS);
		const s = normalizeSettings({
			backendCommand: " /opt/engram ",
			autoStart: "yes",
			pollIntervalSeconds: 0.2,
			defaultSearchMode: "vsearch",
			factsRoot: "/Memory/",
			unknown: 1,
		});
		expect(s.backendCommand).toBe("/opt/engram");
		expect(s.autoStart).toBe(false);
		expect(s.pollIntervalSeconds).toBe(1);
		expect(s.defaultSearchMode).toBe("search");
		expect(s.factsRoot).toBe("Memory");
		expect("unknown" in s).toBe(false);
	});
	it("uses the facts folder the backend reports unless one is set", () => {
		const s = normalizeSettings(null);
		expect(s.factsRoot).toBe("");
		const status = (root: string | null) => ({ facts: root === null ? null : { root } }) as unknown as Status;
		expect(effectiveFactsRoot(s, null)).toBe("Engram");
		expect(effectiveFactsRoot(s, status(null))).toBe("Engram");
		expect(effectiveFactsRoot(s, status("Memory/Engram/"))).toBe("Memory/Engram");
		expect(effectiveFactsRoot({ ...s, factsRoot: "Mine" }, status("Memory"))).toBe("Mine");
	});

	it("isInside matches whole folder names", () => {
		expect(isInside("Engram/facts/a.md", "Engram")).toBe(true);
		expect(isInside("EngramX/a.md", "Engram")).toBe(false);
		expect(isInside("a.md", "")).toBe(true);
	});
});

describe("Debouncer", () => {
	it("runs the last call once after the pause", () => {
		const t = new FakeTimers();
		const d = new Debouncer(t, 100, null, () => t.now);
		const calls: number[] = [];
		d.schedule(() => calls.push(1));
		t.advance(50);
		d.schedule(() => calls.push(2));
		t.advance(99);
		expect(calls).toEqual([]);
		t.advance(1);
		expect(calls).toEqual([2]);
		expect(t.pending).toBe(0);
	});
	it("flushes no later than maxWait during a steady stream", () => {
		const t = new FakeTimers();
		const d = new Debouncer(t, 100, 250, () => t.now);
		let runs = 0;
		for (let i = 0; i < 10; i++) {
			d.schedule(() => runs++);
			t.advance(50);
		}
		expect(runs).toBe(2);
	});
	it("cancel drops the pending call", () => {
		const t = new FakeTimers();
		const d = new Debouncer(t, 10);
		let ran = false;
		d.schedule(() => (ran = true));
		d.cancel();
		t.advance(100);
		expect(ran).toBe(false);
		expect(d.scheduled).toBe(false);
	});
});
