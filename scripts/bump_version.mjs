#!/usr/bin/env node
// Bump the plugin version everywhere at once: obsidian-plugin/package.json (+ its lock file),
// manifest.json and versions.json (version → manifest's minAppVersion).
//
//   node scripts/bump_version.mjs 0.2.0        explicit version
//   node scripts/bump_version.mjs patch|minor|major
//   node scripts/bump_version.mjs --check      exit 1 unless all files agree
//
// The release tag must then be exactly the new version, without a "v" (BRAT and Obsidian read it).
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const files = {
	manifest: join(root, "manifest.json"),
	versions: join(root, "versions.json"),
	pkg: join(root, "obsidian-plugin", "package.json"),
	lock: join(root, "obsidian-plugin", "package-lock.json"),
};
const SEMVER = /^(\d+)\.(\d+)\.(\d+)(-[0-9A-Za-z.-]+)?$/;

const read = (p) => JSON.parse(readFileSync(p, "utf8"));
const write = (p, data, indent) => writeFileSync(p, JSON.stringify(data, null, indent) + "\n");
const indentOf = (p) => (/\n(\t| +)"/.exec(readFileSync(p, "utf8"))?.[1] ?? "  ");

function next(current, how) {
	if (SEMVER.test(how)) return how;
	const m = SEMVER.exec(current);
	if (!m) throw new Error(`manifest.json version ${current} is not x.y.z`);
	const [maj, min, pat] = [Number(m[1]), Number(m[2]), Number(m[3])];
	if (how === "major") return `${maj + 1}.0.0`;
	if (how === "minor") return `${maj}.${min + 1}.0`;
	if (how === "patch") return m[4] ? `${maj}.${min}.${pat}` : `${maj}.${min}.${pat + 1}`;
	throw new Error(`expected x.y.z, patch, minor, major or --check, got ${JSON.stringify(how)}`);
}

function main(arg) {
	const manifest = read(files.manifest);
	const versions = read(files.versions);
	const pkg = read(files.pkg);
	if (arg === "--check") {
		const problems = [];
		if (pkg.version !== manifest.version) problems.push(`package.json has ${pkg.version}, manifest.json ${manifest.version}`);
		if (versions[manifest.version] !== manifest.minAppVersion) {
			problems.push(`versions.json maps ${manifest.version} to ${versions[manifest.version]}, manifest says ${manifest.minAppVersion}`);
		}
		for (const p of problems) process.stderr.write(`${p}\n`);
		return problems.length ? 1 : 0;
	}
	if (!arg) throw new Error("usage: bump_version.mjs <x.y.z|patch|minor|major|--check>");
	const version = next(manifest.version, arg);
	manifest.version = version;
	versions[version] = manifest.minAppVersion;
	pkg.version = version;
	write(files.manifest, manifest, indentOf(files.manifest));
	write(files.versions, versions, indentOf(files.versions));
	write(files.pkg, pkg, indentOf(files.pkg));
	try {
		const lock = read(files.lock);
		lock.version = version;
		if (lock.packages?.[""]) lock.packages[""].version = version;
		write(files.lock, lock, indentOf(files.lock));
	} catch {
		// no lock file yet: npm writes it with the right version on the next install
	}
	process.stdout.write(`${version}\n`);
	return 0;
}

try {
	process.exitCode = main(process.argv[2]);
} catch (err) {
	process.stderr.write(`${err.message}\n`);
	process.exitCode = 2;
}
