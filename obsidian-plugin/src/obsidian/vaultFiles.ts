/** Where the plugin's files are, and reading discovery.json through the vault adapter. */
import { promises as fs } from "fs";
import { FileSystemAdapter, normalizePath, type App, type PluginManifest } from "obsidian";
import { DISCOVERY_FILE } from "../api/discovery";

/** The plugin folder (`<configDir>/plugins/<id>`), never a hardcoded config folder name. */
export function pluginDir(app: App, manifest: PluginManifest): string {
	return normalizePath(manifest.dir ?? `${app.vault.configDir}/plugins/${manifest.id}`);
}

export function discoveryPath(app: App, manifest: PluginManifest): string {
	return normalizePath(`${pluginDir(app, manifest)}/${DISCOVERY_FILE}`);
}

/** discovery.json's text, or null when it does not exist (hidden folders need the adapter). */
export async function readDiscoveryFile(app: App, path: string): Promise<string | null> {
	const adapter = app.vault.adapter;
	if (!(await adapter.exists(path))) return null;
	return adapter.read(path);
}

/**
 * The vault's path as Obsidian reports it and, when a symlink lies on the way (macOS /tmp and
 * /var, a linked Documents folder), as the backend writes it in discovery.json: resolved.
 */
export async function vaultPathForms(basePath: string): Promise<string[]> {
	try {
		const real = await fs.realpath(basePath);
		return real === basePath ? [basePath] : [basePath, real];
	} catch {
		return [basePath];
	}
}

/** The vault's absolute path on desktop; null elsewhere. */
export function vaultBasePath(app: App): string | null {
	const adapter = app.vault.adapter;
	return adapter instanceof FileSystemAdapter ? adapter.getBasePath() : null;
}
