/**
 * TEMPORARY stand-in for `engram serve`, until the Python daemon exists: the contract fake
 * behind a real HTTP server on 127.0.0.1, with the discovery file lifecycle of DESIGN.md
 * (atomic write, mode 0600, removed on clean shutdown). Usage: standin serve --vault DIR
 * [--config-dir .obsidian]. The e2e harness runs it only when no backend command is given.
 */
import { randomBytes } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { dirname, join, relative } from "node:path";
import { FakeEngram } from "../tests/fakeBackend";

function arg(name: string, fallback?: string): string {
	const i = process.argv.indexOf(name);
	const v = i >= 0 ? process.argv[i + 1] : fallback;
	if (v === undefined) throw new Error(`missing ${name}`);
	return v;
}

const vault = arg("--vault");
const configDir = arg("--config-dir", ".obsidian");
const discoveryPath = join(vault, configDir, "plugins", "engram", "discovery.json");

function walk(dir: string): string[] {
	return readdirSync(dir).flatMap((name) => {
		if (name.startsWith(".")) return [];
		const p = join(dir, name);
		return statSync(p).isDirectory() ? walk(p) : name.endsWith(".md") ? [relative(vault, p).split("\\").join("/")] : [];
	});
}

const fake = new FakeEngram(
	{
		list: async () => walk(vault),
		read: async (p) => readFileSync(join(vault, p), "utf8"),
		write: async (p, t) => {
			mkdirSync(dirname(join(vault, p)), { recursive: true });
			writeFileSync(join(vault, p), t);
		},
	},
	vault,
);
fake.token = randomBytes(32).toString("base64url");

const server = createServer((req, res) => {
	const chunks: Buffer[] = [];
	req.on("data", (c: Buffer) => chunks.push(c));
	req.on("end", () => {
		const headers: Record<string, string> = {};
		for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string") headers[k === "authorization" ? "Authorization" : k] = v;
		void fake
			.handle({ url: `http://127.0.0.1${req.url ?? "/"}`, method: req.method, headers, body: Buffer.concat(chunks).toString("utf8") })
			.then((r) => {
				res.writeHead(r.status, r.headers);
				res.end(r.text);
			});
	});
});

server.listen(0, "127.0.0.1", () => {
	const address = server.address();
	const port = typeof address === "object" && address ? address.port : 0;
	mkdirSync(dirname(discoveryPath), { recursive: true });
	const tmp = `${discoveryPath}.${process.pid}.tmp`;
	writeFileSync(tmp, JSON.stringify(fake.discovery(`http://127.0.0.1:${port}`, process.pid), null, 2), { mode: 0o600 });
	renameSync(tmp, discoveryPath);
	process.stderr.write(`stand-in backend on 127.0.0.1:${port} for ${vault}\n`);
});

function stop(): void {
	rmSync(discoveryPath, { force: true });
	server.close();
	process.exit(0);
}
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
