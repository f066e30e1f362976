// @vitest-environment node
import { describe, expect, it } from "vitest";
import { isLoopbackUrl, parseDiscovery, samePath } from "../src/api/discovery";
import { EngramError } from "../src/api/errors";

const VAULT = "/home/me/notes";
const good = {
	name: "engram",
	version: "0.1.0",
	protocol: 2,
	url: "http://127.0.0.1:48123",
	port: 48123,
	token: "tok",
	pid: 42,
	startedAt: "2025-01-01T00:00:00Z",
	vault: VAULT,
	capabilities: ["search", "query"],
};

function kindOf(text: string, vault = VAULT): string {
	try {
		parseDiscovery(text, vault);
		return "ok";
	} catch (err) {
		return err instanceof EngramError ? err.kind : "other";
	}
}

describe("parseDiscovery", () => {
	it("accepts a valid file and strips a trailing slash from the url", () => {
		const d = parseDiscovery(JSON.stringify({ ...good, url: "http://127.0.0.1:48123/" }), VAULT);
		expect(d.url).toBe("http://127.0.0.1:48123");
		expect(d.token).toBe("tok");
		expect(d.capabilities).toEqual(["search", "query"]);
	});

	it.each([
		["not JSON (half written)", '{"name": "eng', "not-running"],
		["an array", "[]", "not-running"],
		["no token", JSON.stringify({ ...good, token: undefined }), "not-running"],
		["an empty token", JSON.stringify({ ...good, token: "" }), "not-running"],
		["another program", JSON.stringify({ ...good, name: "other" }), "not-running"],
		["a newer protocol", JSON.stringify({ ...good, protocol: 3 }), "protocol"],
		["the older protocol 1", JSON.stringify({ ...good, protocol: 1 }), "protocol"],
		["a LAN address", JSON.stringify({ ...good, url: "http://192.168.1.5:48123" }), "not-running"],
		["https", JSON.stringify({ ...good, url: "https://127.0.0.1:48123" }), "not-running"],
		["another vault", JSON.stringify({ ...good, vault: "/home/other/notes" }), "vault-mismatch"],
		["the same vault with a trailing slash", JSON.stringify({ ...good, vault: `${VAULT}/` }), "ok"],
		["localhost", JSON.stringify({ ...good, url: "http://localhost:9" }), "ok"],
		["IPv6 loopback", JSON.stringify({ ...good, url: "http://[::1]:9" }), "ok"],
	])("rejects or accepts %s", (_name, text, kind) => {
		expect(kindOf(text)).toBe(kind);
	});

	it("compares Windows paths without case and with either separator", () => {
		const text = JSON.stringify({ ...good, vault: "C:\\Users\\Me\\Notes" });
		expect(kindOf(text, "c:/users/me/notes")).toBe("ok");
	});

	it("accepts the vault's resolved path (the backend resolves symlinks)", () => {
		const text = JSON.stringify({ ...good, vault: "/private/tmp/notes" });
		expect(kindOf(text, "/tmp/notes")).toBe("vault-mismatch");
		expect(parseDiscovery(text, ["/tmp/notes", "/private/tmp/notes"]).url).toBe(good.url);
	});

	it("does not put the token in error messages", () => {
		const attempt = (): unknown => parseDiscovery(JSON.stringify({ ...good, token: "s3cret", vault: "/elsewhere" }), VAULT);
		expect(attempt).toThrow(EngramError);
		expect(attempt).not.toThrow(/s3cret/);
	});
});

describe("path and url helpers", () => {
	it("samePath keeps POSIX case", () => {
		expect(samePath("/a/B", "/a/b")).toBe(false);
		expect(samePath("/a/b/", "/a/b")).toBe(true);
	});
	it("isLoopbackUrl rejects garbage", () => {
		expect(isLoopbackUrl("not a url")).toBe(false);
		expect(isLoopbackUrl("http://127.0.0.1.evil.com/")).toBe(false);
	});
});
