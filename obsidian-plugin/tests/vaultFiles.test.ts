/** The vault's path forms: Obsidian's path and the symlink-free one the backend writes. */
import { mkdir, mkdtemp, realpath, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { vaultPathForms } from "../src/obsidian/vaultFiles";

describe("vaultPathForms", () => {
	it("vaultPathForms adds the symlink-free path only when it differs", async () => {
		const root = await mkdtemp(join(tmpdir(), "engram-forms-"));
		try {
			await mkdir(join(root, "real", "vault"), { recursive: true });
			await symlink(join(root, "real"), join(root, "link"), "dir");
			const real = await realpath(join(root, "real", "vault"));
			expect(await vaultPathForms(join(root, "link", "vault"))).toEqual([join(root, "link", "vault"), real]);
			expect(await vaultPathForms(real)).toEqual([real]);
			expect(await vaultPathForms(join(root, "missing"))).toEqual([join(root, "missing")]);
		} finally {
			await rm(root, { recursive: true, force: true });
		}
	});
});
