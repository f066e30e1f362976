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
		reporters: ["default", "./tests/summaryReporter.ts"],
	},
});
