/** Plugin settings (data.json): defaults and a forgiving loader. */
import type { SearchMode, Status } from "../api/types";

export interface EngramSettings {
	/** Command that runs the backend; `serve --vault … --config-dir …` is appended. */
	backendCommand: string;
	/** Spawn the backend when no live discovery.json exists. */
	autoStart: boolean;
	/** Seconds between `GET /v1/status` polls. */
	pollIntervalSeconds: number;
	/** Mode of a plain recall query; the `?` prefix switches to the other one. */
	defaultSearchMode: Extract<SearchMode, "search" | "query">;
	/** Vault folder the backend stores facts under; "" follows what the backend reports. */
	factsRoot: string;
	/** Send vault changes to `POST /v1/index` as they happen. */
	autoSync: boolean;
	/** Tell the backend which note and selection are active (for agents). */
	reportActiveNote: boolean;
}

export const DEFAULT_SETTINGS: Readonly<EngramSettings> = Object.freeze({
	backendCommand: "engram",
	autoStart: false,
	pollIntervalSeconds: 5,
	defaultSearchMode: "search",
	factsRoot: "",
	autoSync: true,
	reportActiveNote: true,
});

export const MIN_POLL_SECONDS = 1;
export const MAX_POLL_SECONDS = 300;

/** Defaults overlaid with every valid value found in `loaded` (data.json may be old or hand-edited). */
export function normalizeSettings(loaded: unknown): EngramSettings {
	const s: EngramSettings = { ...DEFAULT_SETTINGS };
	if (typeof loaded !== "object" || loaded === null) return s;
	const o = loaded as Record<string, unknown>;
	if (typeof o.backendCommand === "string") s.backendCommand = o.backendCommand.trim();
	if (typeof o.autoStart === "boolean") s.autoStart = o.autoStart;
	if (typeof o.pollIntervalSeconds === "number" && Number.isFinite(o.pollIntervalSeconds)) {
		s.pollIntervalSeconds = clampPoll(o.pollIntervalSeconds);
	}
	if (o.defaultSearchMode === "search" || o.defaultSearchMode === "query") s.defaultSearchMode = o.defaultSearchMode;
	if (typeof o.factsRoot === "string") s.factsRoot = normalizeFolder(o.factsRoot);
	if (typeof o.autoSync === "boolean") s.autoSync = o.autoSync;
	if (typeof o.reportActiveNote === "boolean") s.reportActiveNote = o.reportActiveNote;
	return s;
}

/** The backend's facts folder when nobody says otherwise (`engram init --facts-root`). */
export const DEFAULT_FACTS_ROOT = "Engram";

/**
 * The facts folder in effect: the setting when one is set, else the one the backend reports in
 * its status, else the backend's default. Never "" (that would make every note a fact).
 */
export function effectiveFactsRoot(settings: EngramSettings, status: Status | null): string {
	if (settings.factsRoot !== "") return settings.factsRoot;
	const reported = status?.facts ? normalizeFolder(status.facts.root) : "";
	return reported !== "" ? reported : DEFAULT_FACTS_ROOT;
}

export function clampPoll(seconds: number): number {
	return Math.min(MAX_POLL_SECONDS, Math.max(MIN_POLL_SECONDS, Math.round(seconds)));
}

/** A vault folder path without leading/trailing slashes; empty means the vault root. */
export function normalizeFolder(folder: string): string {
	return folder.trim().replace(/\\/g, "/").replace(/^\/+|\/+$/g, "");
}

/** True when `path` is inside `folder` (vault-relative paths). */
export function isInside(path: string, folder: string): boolean {
	if (folder === "") return true;
	return path === folder || path.startsWith(folder + "/");
}
