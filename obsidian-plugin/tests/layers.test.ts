// @vitest-environment node
/** Architecture rules read from the source: who may import `obsidian`, and banned DOM/console APIs. */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const SRC = join(__dirname, "..", "src");

function files(dir: string): string[] {
	return readdirSync(dir).flatMap((name) => {
		const p = join(dir, name);
		return statSync(p).isDirectory() ? files(p) : p.endsWith(".ts") ? [p] : [];
	});
}

const sources = files(SRC).map((p) => ({ path: relative(SRC, p).replace(/\\/g, "/"), text: readFileSync(p, "utf8") }));

function imports(text: string): string[] {
	return [...text.matchAll(/^\s*import\s[^;]*?from\s+"([^"]+)"/gms)].map((m) => m[1] ?? "");
}

describe("layers", () => {
	it("finds the sources", () => {
		expect(sources.length).toBeGreaterThan(15);
	});

	it("only main.ts and src/obsidian/ import the Obsidian API or Node", () => {
		const offenders = sources
			.filter((s) => s.path !== "main.ts" && !s.path.startsWith("obsidian/"))
			.filter((s) => imports(s.text).some((i) => i === "obsidian" || i === "child_process" || i.startsWith("node:")))
			.map((s) => s.path);
		expect(offenders).toEqual([]);
	});

	it("api/ and core/ do not import views or adapters", () => {
		const offenders = sources
			.filter((s) => s.path.startsWith("api/") || s.path.startsWith("core/"))
			.filter((s) => imports(s.text).some((i) => i.includes("/ui/") || i.includes("/obsidian/") || i.startsWith("../ui") || i.startsWith("../obsidian")))
			.map((s) => s.path);
		expect(offenders).toEqual([]);
	});

	it("api/ does not import core/", () => {
		const offenders = sources.filter((s) => s.path.startsWith("api/") && imports(s.text).some((i) => i.startsWith("../core"))).map((s) => s.path);
		expect(offenders).toEqual([]);
	});
});

describe("banned APIs", () => {
	it.each([
		["innerHTML", /\.innerHTML\b/],
		["outerHTML", /\.outerHTML\b/],
		["insertAdjacentHTML", /insertAdjacentHTML/],
		["inline styles", /\.style\.|setCssStyles|setCssProps|cssText/],
		["console", /\bconsole\./],
		["fetch (use requestUrl)", /\bfetch\(/],
		["a hardcoded config folder", /["'`]\.obsidian/],
	])("no %s in src/", (_name, pattern) => {
		expect(sources.filter((s) => pattern.test(s.text)).map((s) => s.path)).toEqual([]);
	});
});
