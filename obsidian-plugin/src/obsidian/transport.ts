/** The client's transport in the app: requestUrl (no CORS, goes through Electron). */
import { requestUrl } from "obsidian";
import type { Transport } from "../api/client";

export const requestUrlTransport: Transport = async (req) => {
	const res = await requestUrl({
		url: req.url,
		method: req.method,
		headers: req.headers,
		body: req.body,
		contentType: req.headers["Content-Type"],
		// Read error statuses instead of throwing: the client maps them to typed errors.
		throw: false,
	});
	return { status: res.status, text: res.text };
};
