/**
 * A working stand-in for the `obsidian` module (types-only on npm). Unit tests alias `obsidian`
 * to this file; the e2e harness bundles it for Chromium and hands it to the production main.js
 * through `require("obsidian")`. It implements the API surface the plugin uses, with the DOM
 * classes Obsidian uses, so views render real elements that tests and screenshots can inspect.
 */
import { installDomHelpers } from "./dom";
import type { HostRequest, ShimHost } from "./host";

installDomHelpers();

export { App, Commands, Plugin, type Command, type PluginManifest } from "./app";
export { Component, Events, Keymap, Platform, Scope, normalizePath, setIcon, shimStats } from "./core";
export { memoryHost, type HostRequest, type HostResponse, type ShimHost } from "./host";
export { ButtonComponent, DropdownComponent, Modal, Notice, PluginSettingTab, Setting, SuggestModal, TextComponent, ToggleComponent } from "./ui";
export { FileSystemAdapter, TAbstractFile, TFile, TFolder, Vault } from "./vault";
export { getAllTags, getLinkpath, MetadataCache, parseFrontMatterAliases, type CachedMetadata } from "./metadata";
export { ItemView, MarkdownView, View, Workspace, WorkspaceLeaf } from "./workspace";

let host: ShimHost | null = null;

/** Shim-only: where requestUrl sends requests (the App's host). */
export function setRequestHost(h: ShimHost | null): void {
	host = h;
}

export interface RequestUrlResponse {
	status: number;
	headers: Record<string, string>;
	text: string;
	json: unknown;
	arrayBuffer: ArrayBuffer;
}

/** Like Obsidian's: no CORS, rejects on network failure, and on status ≥ 400 unless `throw: false`. */
export async function requestUrl(param: (HostRequest & { throw?: boolean }) | string): Promise<RequestUrlResponse> {
	if (!host) throw new Error("requestUrl: no host configured");
	const req = typeof param === "string" ? { url: param } : param;
	const res = await host.request(req);
	if (res.status >= 400 && (typeof param === "string" || param.throw !== false)) {
		throw new Error(`Request failed, status ${res.status}`);
	}
	return {
		status: res.status,
		headers: res.headers,
		text: res.text,
		get json(): unknown {
			return JSON.parse(res.text) as unknown;
		},
		arrayBuffer: new TextEncoder().encode(res.text).buffer as ArrayBuffer,
	};
}
