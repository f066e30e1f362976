/** What the shim needs from its surroundings: files on disk and HTTP (Node in e2e, memory in unit tests). */

export interface HostRequest {
	url: string;
	method?: string;
	headers?: Record<string, string>;
	body?: string | ArrayBuffer;
	contentType?: string;
}

export interface HostResponse {
	status: number;
	text: string;
	headers: Record<string, string>;
}

export interface ShimHost {
	/** Absolute vault path (FileSystemAdapter.getBasePath). */
	basePath: string;
	exists(path: string): Promise<boolean>;
	read(path: string): Promise<string>;
	write(path: string, data: string): Promise<void>;
	remove(path: string): Promise<void>;
	rename(from: string, to: string): Promise<void>;
	/** Every markdown note in the vault, hidden folders excluded. */
	listNotes(): Promise<string[]>;
	/** Rejects when nothing answers (like requestUrl on a refused connection). */
	request(req: HostRequest): Promise<HostResponse>;
}

export type RequestHandler = (req: HostRequest) => Promise<HostResponse> | HostResponse;

/** A host kept in memory, for unit tests. `files` maps vault-relative paths to contents. */
export function memoryHost(
	files: Record<string, string> = {},
	handler: RequestHandler = () => Promise.reject(new Error("net::ERR_CONNECTION_REFUSED")),
	basePath = "/vaults/test",
): ShimHost & { files: Map<string, string>; handler: RequestHandler } {
	const map = new Map(Object.entries(files));
	const host = {
		basePath,
		files: map,
		handler,
		exists: async (p: string) => map.has(p),
		read: async (p: string) => {
			const v = map.get(p);
			if (v === undefined) throw new Error(`ENOENT: ${p}`);
			return v;
		},
		write: async (p: string, d: string) => void map.set(p, d),
		remove: async (p: string) => void map.delete(p),
		rename: async (a: string, b: string) => {
			const v = map.get(a);
			map.delete(a);
			if (v !== undefined) map.set(b, v);
		},
		listNotes: async () => [...map.keys()].filter((p) => p.endsWith(".md") && !p.split("/").some((s) => s.startsWith("."))),
		request: async (req: HostRequest) => host.handler(req),
	};
	return host;
}
