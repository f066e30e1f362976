/** The backend command line: splitting the user's setting and the arguments we add. */

/**
 * Split a command setting into argv: whitespace separates, single or double quotes group
 * (`"C:\Program Files\engram\engram.exe" --index work`). Backslashes are literal so Windows
 * paths survive. No globbing, variables or pipes: the result is spawned without a shell.
 */
export function splitCommand(command: string): string[] {
	const out: string[] = [];
	let cur = "";
	let has = false;
	let quote: string | null = null;
	for (const c of command) {
		if (quote !== null) {
			if (c === quote) quote = null;
			else cur += c;
		} else if (c === "'" || c === '"') {
			quote = c;
			has = true;
		} else if (/\s/.test(c)) {
			if (has) out.push(cur);
			cur = "";
			has = false;
		} else {
			cur += c;
			has = true;
		}
	}
	if (quote !== null) throw new Error("The backend command has an unclosed quote");
	if (has) out.push(cur);
	return out;
}

/** Arguments that make `engram serve` index this vault and write discovery.json for us. */
export function serveArgs(vaultPath: string, configDir: string): string[] {
	return ["serve", "--vault", vaultPath, "--config-dir", configDir];
}
