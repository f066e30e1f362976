/**
 * discovery.json: how the plugin finds the running backend. The file lives inside the vault, so
 * sync tools can carry it to another machine; it is only trusted when it names this vault and a
 * loopback URL (the token must never be sent anywhere else).
 */
import { decodeDiscoveryShape } from "./decode";
import { EngramError } from "./errors";
import { PROTOCOL, type Discovery } from "./types";

export const DISCOVERY_FILE = "discovery.json";

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]"]);

/** Compare two absolute paths the way the OS would: separators, trailing slash, drive case. */
export function samePath(a: string, b: string): boolean {
	const norm = (p: string): string => {
		let s = p.replace(/\\/g, "/");
		while (s.length > 1 && s.endsWith("/")) s = s.slice(0, -1);
		// Windows drive paths are case-insensitive; POSIX paths are compared exactly.
		return /^[A-Za-z]:\//.test(s) ? s.toLowerCase() : s;
	};
	return norm(a) === norm(b);
}

/** True when `url` is plain HTTP on a loopback host. */
export function isLoopbackUrl(url: string): boolean {
	let parsed: URL;
	try {
		parsed = new URL(url);
	} catch {
		return false;
	}
	return parsed.protocol === "http:" && LOOPBACK_HOSTS.has(parsed.hostname);
}

/**
 * Parse and check discovery.json text for the vault at `vaultPath` (one path, or every form of
 * it: the path Obsidian reports and the symlink-free one the backend writes).
 * Throws EngramError: `not-running` when unusable, `vault-mismatch` for another vault's file.
 */
export function parseDiscovery(text: string, vaultPath: string | readonly string[]): Discovery {
	const forms = typeof vaultPath === "string" ? [vaultPath] : vaultPath;
	let raw: unknown;
	try {
		raw = JSON.parse(text);
	} catch {
		throw new EngramError("not-running", "discovery.json is not valid JSON (the backend may be writing it)");
	}
	let d: Discovery;
	try {
		d = decodeDiscoveryShape(raw);
	} catch (err) {
		throw new EngramError("not-running", `discovery.json is incomplete: ${(err as Error).message}`);
	}
	if (d.name !== "engram") {
		throw new EngramError("not-running", `discovery.json belongs to "${d.name}", not engram`);
	}
	if (d.protocol !== PROTOCOL) {
		throw new EngramError(
			"protocol",
			`The backend speaks protocol ${d.protocol}, this plugin speaks ${PROTOCOL}: update the older one`,
		);
	}
	if (!isLoopbackUrl(d.url)) {
		throw new EngramError("not-running", "discovery.json points to a non-loopback address; refusing to send the token there");
	}
	if (d.token.length === 0) {
		throw new EngramError("not-running", "discovery.json has an empty token");
	}
	if (!forms.some((p) => samePath(d.vault, p))) {
		throw new EngramError(
			"vault-mismatch",
			`discovery.json was written for ${d.vault}, not this vault (${forms[0] ?? ""}); start the backend here`,
		);
	}
	return { ...d, url: d.url.replace(/\/+$/, "") };
}
