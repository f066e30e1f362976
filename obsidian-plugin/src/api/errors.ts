/** Typed failures of the backend client; the UI maps `kind` to a state and a message. */

export type ErrorKind =
	| "not-running" // no usable discovery.json: the backend is not started
	| "vault-mismatch" // discovery.json was written for another vault (synced folder)
	| "unreachable" // discovery says a port, nobody answers there
	| "unauthorized" // the token was refused, even after re-reading discovery.json
	| "http" // the backend answered with an error status
	| "protocol"; // the reply does not have the shape this plugin understands

export class EngramError extends Error {
	readonly kind: ErrorKind;
	readonly status: number | null;
	readonly code: string | null;
	/** The backend's suggestion for what to do (`error.hint`), already part of `message`. */
	readonly hint: string | null;

	constructor(kind: ErrorKind, message: string, status: number | null = null, code: string | null = null, hint: string | null = null) {
		super(hint ? `${message} (${hint})` : message);
		this.name = "EngramError";
		this.kind = kind;
		this.status = status;
		this.code = code;
		this.hint = hint;
	}
}

/** The message to show a person for any thrown value, without stack traces. */
export function errorMessage(err: unknown): string {
	if (err instanceof Error) return err.message;
	if (typeof err === "string") return err;
	return "Unknown error";
}

/** True for an HTTP error with the given status (e.g. 404 for an unknown note). */
export function isHttpStatus(err: unknown, status: number): boolean {
	return err instanceof EngramError && err.kind === "http" && err.status === status;
}
