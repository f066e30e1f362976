import { describe, expect, it } from "vitest";
import { clipRuns, queryTerms, wholeWordHits } from "../src/core/highlight";
import { readableRuns, readableText, type Run } from "../src/core/markdownText";

/** Runs as one string: [hit], `code`. */
const show = (runs: Run[]): string => runs.map((r) => (r.hit ? `[${r.text}]` : r.code ? `\`${r.text}\`` : r.text)).join("");

describe("readable text from markdown", () => {
	it.each([
		["heading markers", "## Embed a note ### Details", "Embed a note Details"],
		["wiki link with display", "See [[Internal links|links]] for more", "See links for more"],
		["wiki link to a folder note", "Open [[Plugins/Command palette]] now", "Open Command palette now"],
		["heading link", "[[Internal links#Link to a heading]]", "Internal links › Link to a heading"],
		["same-note heading link", "see [[#Embed a note]]", "see Embed a note"],
		["block link", "[[Note#^abc123]] ok", "Note ok"],
		["escaped pipe in a table", "| [[Note\\|shown]] | x |", "shown · x"],
		["emphasis", "**bold** and *italic* and __also__ and ~~gone~~ and ==marked==", "bold and italic and also and gone and marked"],
		["snake_case stays", "the steering_rule type", "the steering_rule type"],
		["markdown links", "[Obsidian Sync](https://obsidian.md/sync) is nice", "Obsidian Sync is nice"],
		["icon embeds vanish", "- ![[lucide-table.svg#icon]] **View menu** — create", "• View menu — create"],
		["note embeds keep the name", "![[Daily notes]]", "Daily notes"],
		["images keep alt text", "![A graph|300](graph.png) shows", "A graph shows"],
		["tasks", "- [ ] open - [x] done", "☐ open ☑ done"],
		["callouts", "> [!tip] Use this", "Use this"],
		["table alignment rows", "| a | b | | --- | :-: | | 1 | 2 |", "a · b · 1 · 2"],
		["comments", "keep %%hidden%% this", "keep this"],
		["html", "a<br>b <span class=\"x\">c</span>", "a b c"],
		["block ids", "a paragraph ^abc-1", "a paragraph"],
		["escapes", "not \\*emphasis\\*", "not *emphasis*"],
		["horizontal rules", "above --- below", "above below"],
		["tags stay", "#project/alpha is tagged", "#project/alpha is tagged"],
		["emphasis around a link", "1. Open **[[Settings]]**. 2. select **General**.", "1. Open Settings. 2. select General."],
		["a link cut at the end", "When you create [[Set up Obsidian Sync#Connect to a remote…", "When you create Set up Obsidian Sync › Connect to a remote…"],
		["an embed cut at the end", "icons: - *Settings* ![[lucide-settings…", "icons: • Settings…"],
		["a link cut at the start", "…Sync|Obsidian Sync]] is an add-on", "…Obsidian Sync is an add-on"],
		["emphasis cut at the end", "settings go to **General…", "settings go to General…"],
		["code inside a link", "Use [[#`move`|move]] to rename", "Use move to rename"],
		["callout lines", "> [!warning] Warning > At the moment, no", "Warning At the moment, no"],
		["a list after a sentence", "for daily use. - New to Sync? See: x", "for daily use. • New to Sync? See: x"],
		["a dash in a sentence", "Sync - the service - works", "Sync - the service - works"],
		["comparisons outside quotes", "if a > b then", "if a > b then"],
	])("%s", (_name, md, text) => {
		expect(readableText(md)).toBe(text);
	});

	it("keeps code as code and does not read markdown inside it", () => {
		expect(show(readableRuns("Use `**not bold**` here"))).toBe("Use `**not bold**` here");
		expect(show(readableRuns("## Embed ```md ![[Internal links]] ``` after"))).toBe("Embed `![[Internal links]]` after");
	});

	it("carries highlight offsets (code points) over to the readable text", () => {
		// "[[Internal links|links]] about 🙂 lighthouse": offsets count the emoji as one.
		const md = "[[Internal links|links]] about 🙂 lighthouse";
		const at = Array.from(md).join("").indexOf("lighthouse");
		const cp = Array.from(md.slice(0, at)).length;
		expect(show(readableRuns(md, [[cp, cp + 10]]))).toBe("links about 🙂 [lighthouse]");
	});

	it("marks links to the note being looked at", () => {
		const runs = readableRuns("see [[Command palette|the palette]] and [[Other]]", [], { isSelfLink: (l) => l === "Command palette" });
		expect(show(runs)).toBe("see [the palette] and Other");
	});
});

describe("whole-word highlights", () => {
	const hits = (text: string, ranges: Array<[number, number]>, terms: string[] = []): string =>
		show(wholeWordHits(readableRuns(text, ranges), terms));

	it.each([
		["a whole word", "the lighthouse keeper", [[4, 14]], [], "the [lighthouse] keeper"],
		["a stem grows to its word", "lighthouses stand", [[0, 10]], [], "[lighthouses] stand"],
		["a letter inside a word is dropped", "Bookmarks", [[5, 6]], [], "Bookmarks"],
		["stopwords are dropped", "a note about the sea", [[0, 1], [13, 16]], [], "a note about the sea"],
		["query terms mark words the backend did not", "Embed files in notes", [], ["embed"], "[Embed] files in notes"],
		["query prefixes", "embedding models", [], ["embed"], "[embedding] models"],
		["a stem the query does not look like", "set up settings", [[0, 3], [7, 15]], ["settings"], "set up [settings]"],
		["a plural the query looks like", "lighthouses", [[0, 11]], ["lighthouse"], "[lighthouses]"],
		["accents fold", "Überlegungen zur Linse", [], ["uberlegungen"], "[Überlegungen] zur Linse"],
	] as const)("%s", (_n, text, ranges, terms, want) => {
		expect(hits(text, ranges as unknown as Array<[number, number]>, [...terms])).toBe(want);
	});

	it("keeps matches in scripts without spaces", () => {
		expect(hits("灯塔看守人", [[0, 2]])).toBe("[灯塔]看守人");
	});

	it("query terms skip filters, exclusions and stopwords", () => {
		expect(queryTerms('?the "light house" tag:x -sea path:a/b keeper*')).toEqual(["light", "house", "keeper"]);
	});

	it("clips at a word with an ellipsis, without changing its input", () => {
		const runs = readableRuns("one two three four five six");
		const clipped = clipRuns(runs, 12);
		expect(show(clipped)).toBe("one two…");
		expect(show(runs)).toBe("one two three four five six");
	});
});
