import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createHarness, disposeCurrent } from "./harness";

let dir = "";

beforeEach(() => {
	vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval"] });
	dir = mkdtempSync(join(tmpdir(), "engram-autostart-"));
});

afterEach(() => {
	disposeCurrent();
	vi.useRealTimers();
	rmSync(dir, { recursive: true, force: true });
});

/** A fake `engram` that records its arguments and pid, then idles until killed. The record
 * is written to a temporary name and renamed, so it appears complete or not at all (a reader
 * polling for it once saw half-written JSON). */
function fakeEngram(): { command: string; record: string } {
	const record = join(dir, "argv.json");
	const script = join(dir, "fake engram.js");
	const partial = `${record}.partial`;
	writeFileSync(
		script,
		'const fs = require("fs");\n' +
			`fs.writeFileSync(${JSON.stringify(partial)}, JSON.stringify({ argv: process.argv.slice(2), pid: process.pid }));\n` +
			`fs.renameSync(${JSON.stringify(partial)}, ${JSON.stringify(record)});\n` +
			"setInterval(() => {}, 1000);\n",
	);
	return { command: `"${process.execPath}" "${script}"`, record };
}

function alive(pid: number): boolean {
	try {
		process.kill(pid, 0);
		return true;
	} catch {
		return false;
	}
}

async function until(cond: () => boolean, tick: (ms: number) => Promise<void>): Promise<void> {
	const start = performance.now();
	while (!cond()) {
		if (performance.now() - start > 10_000) throw new Error("timed out");
		await tick(50);
		await new Promise((r) => setImmediate(r));
	}
}

describe("auto-start", () => {
	it("spawns `<command> serve --vault … --config-dir …` when no backend answers, and stops it on unload", async () => {
		const { command, record } = fakeEngram();
		const h = await createHarness({ discovery: false, basePath: dir, data: { autoStart: true, backendCommand: command } });
		await until(() => existsSync(record), h.tick);
		const { argv, pid } = JSON.parse(readFileSync(record, "utf8")) as { argv: string[]; pid: number };
		expect(argv).toEqual(["serve", "--vault", dir, "--config-dir", ".obsidian"]);
		expect(h.statusText()).toBe("Engram: starting…");
		expect(alive(pid)).toBe(true);
		h.dispose();
		await until(() => !alive(pid), h.tick);
	});

	it("leaves a running backend alone", async () => {
		const { command, record } = fakeEngram();
		const h = await createHarness({ data: { autoStart: true, backendCommand: command } });
		await h.tick(3000);
		expect(h.statusText()).toBe("Engram");
		expect(existsSync(record)).toBe(false);
	});
});
