// Obsidian's review linter over the plugin. Run it from the repository root (npm run lint does)
// so the manifest-aware rules read ../manifest.json (minAppVersion, id, isDesktopOnly) and the
// patterns below match manifest.json and LICENSE at the root.
import obsidianmd from "eslint-plugin-obsidianmd";
import { PlainTextParser } from "eslint-plugin-obsidianmd/dist/lib/plainTextParser.js";
import { defineConfig, globalIgnores } from "eslint/config";
import { fileURLToPath } from "node:url";
import tseslint from "typescript-eslint";

const here = fileURLToPath(new URL(".", import.meta.url));

export default defineConfig([
	globalIgnores(["obsidian-plugin/main.js", "obsidian-plugin/node_modules/**", "obsidian-plugin/.e2e-build/**"]),
	...obsidianmd.configs.recommended,
	{
		files: ["obsidian-plugin/src/**/*.ts"],
		languageOptions: {
			parserOptions: { project: "./tsconfig.json", tsconfigRootDir: here },
		},
	},
	{
		// typescript-estree parses .json as one object expression, which the manifest rule expects.
		files: ["manifest.json"],
		languageOptions: { parser: tseslint.parser, parserOptions: { extraFileExtensions: [".json"] } },
		plugins: { obsidianmd },
		rules: { "obsidianmd/validate-manifest": "error" },
	},
	{
		files: ["LICENSE"],
		languageOptions: { parser: PlainTextParser },
		plugins: { obsidianmd },
		rules: { "obsidianmd/validate-license": "warn" },
	},
]);
