import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

export default defineConfig({
	resolve: {
		// `obsidian` on npm is types only: run the plugin against our shim of the API.
		alias: { obsidian: fileURLToPath(new URL("./tests/shim/obsidian.ts", import.meta.url)) },
	},
	test: {
		environment: "happy-dom",
		include: ["tests/**/*.test.ts"],
		// every request and reply a test makes through the fake backend is checked against the
		// backend's OpenAPI document; a problem fails that test
		setupFiles: ["./tests/contractSetup.ts"],
		reporters: ["default", "./tests/summaryReporter.ts"],
	},
});
