/** Where the plugin's files are, and reading discovery.json through the vault adapter. */
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

/** The vault's absolute path on desktop; null elsewhere. */
export function vaultBasePath(app: App): string | null {
	const adapter = app.vault.adapter;
	return adapter instanceof FileSystemAdapter ? adapter.getBasePath() : null;
}
