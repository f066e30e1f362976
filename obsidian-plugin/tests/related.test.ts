import { describe, expect, it } from "vitest";
import { groupBacklinks, isGenerated } from "../src/core/backlinks";
import { keywordQuery, relatedNotes, type VaultGraph } from "../src/core/related";

function graph(links: Record<string, string[]>, tags: Record<string, string[]> = {}): VaultGraph {
	const l: Record<string, Record<string, number>> = {};
	for (const [src, targets] of Object.entries(links)) l[src] = Object.fromEntries(targets.map((t) => [t, 1]));
	return { links: l, tags: new Map(Object.entries(tags)), title: (p) => p.replace(/\.md$/, "").split("/").pop() ?? p };
}

const NONE = { sectionLinks: null, meaning: [], words: [] };

describe("related notes", () => {
	const g = graph(
		{
			"A.md": ["B.md", "Hub.md"],
			"B.md": ["A.md"],
			"C.md": ["B.md", "Hub.md"],
			"D.md": ["A.md", "E.md"],
			"E.md": [],
			"F.md": ["Hub.md"],
			"G.md": ["Hub.md"],
			"Engram/daily/2025-01-02.md": ["A.md"],
		},
		{ "A.md": ["#sea"], "T.md": ["#sea", "#boats"] },
	);

	it("gives each note its reasons, strongest first, and merges links both ways", () => {
		const got = relatedNotes(g, { path: "A.md", ...NONE, exclude: (p) => isGenerated(p, "Engram") });
		const byPath = Object.fromEntries(got.map((e) => [e.path, e.reasons.map((r) => r.label)]));
		expect(byPath["B.md"]).toEqual(["linked both ways"]);
		expect(byPath["C.md"]).toEqual(["2 shared links"]);
		expect(byPath["D.md"]).toEqual(["links here"]);
		expect(byPath["E.md"]).toEqual(["D links to both"]);
		expect(byPath["T.md"]).toEqual(["#sea"]);
		expect(got[0]?.path).toBe("B.md");
		expect(got.map((e) => e.path)).not.toContain("A.md");
		expect(got.map((e) => e.path)).not.toContain("Engram/daily/2025-01-02.md");
	});

	it("weighs a hub everything links to less than a rare shared link", () => {
		const got = relatedNotes(g, { path: "A.md", ...NONE });
		const c = got.find((e) => e.path === "C.md");
		const f = got.find((e) => e.path === "F.md");
		expect((c?.score ?? 0) > (f?.score ?? 0)).toBe(true);
	});

	it("adds meaning and words from the backend, relative to the best", () => {
		const got = relatedNotes(g, { path: "A.md", sectionLinks: null, meaning: [{ path: "Z.md", title: "Zed", score: 0.8 }], words: [{ path: "Y.md", title: "Why", score: 3 }] });
		expect(got.find((e) => e.path === "Z.md")?.reasons.map((r) => r.label)).toEqual(["similar meaning"]);
		expect(got.find((e) => e.path === "Z.md")?.title).toBe("Zed");
		expect(got.find((e) => e.path === "Y.md")?.reasons.map((r) => r.label)).toEqual(["similar words"]);
	});

	it("for a section, uses the links written in it", () => {
		const got = relatedNotes(g, { path: "A.md", sectionLinks: ["E.md"], meaning: [], words: [] });
		expect(got.find((e) => e.path === "E.md")?.reasons.map((r) => r.label)).toEqual(["linked from here"]);
		expect(got.find((e) => e.path === "D.md")?.reasons.map((r) => r.label)).toEqual(["1 shared link"]);
		expect(got.find((e) => e.path === "B.md")).toBeUndefined();
	});

	it("turns text into a query without search syntax", () => {
		expect(keywordQuery('tag:x "quoted" -not (a) path:b/c word* #tag')).toBe("tag quoted not path b/c word tag");
		expect(keywordQuery("aa bb cc", 5)).toBe("aa bb");
	});
});

describe("backlinks grouped by note", () => {
	it("one group per note, most links first, each line once, generated notes apart", () => {
		const b = (path: string, line: number) => ({ path, title: path.replace(/\.md$/, ""), line, context: `line ${line}` });
		const got = groupBacklinks([b("x.md", 4), b("y.md", 2), b("y.md", 2), b("y.md", 1), b("Engram/ledger/2025.md", 3)], (p) => isGenerated(p, "Engram"));
		expect(got.notes.map((g) => [g.title, g.count, g.lines.map((l) => l.line)])).toEqual([
			["y", 3, [1, 2]],
			["x", 1, [4]],
		]);
		expect(got.generated.map((g) => g.path)).toEqual(["Engram/ledger/2025.md"]);
	});

	it.each([
		["Engram/daily/2025-01-02.md", "Engram", true],
		["Engram/ledger/reflections/2025-W01.md", "Engram", true],
		["Engram/decisions/x.md", "Engram", false],
		["daily/x.md", "", false],
	])("%s under %s is generated: %s", (path, root, want) => {
		expect(isGenerated(path, root)).toBe(want);
	});
});
