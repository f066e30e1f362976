// Bundles src/main.ts into main.js the way Obsidian loads plugins: one CommonJS file whose
// `obsidian`, `electron`, CodeMirror and Node built-in imports are provided by the app.
import esbuild from "esbuild";
import { builtinModules } from "node:module";

const production = process.argv[2] === "production";

const context = await esbuild.context({
	entryPoints: ["src/main.ts"],
	bundle: true,
	external: [
		"obsidian",
		"electron",
		"@codemirror/*",
		"@lezer/*",
		...builtinModules,
		...builtinModules.map((m) => `node:${m}`),
	],
	format: "cjs",
	target: "es2018",
	platform: "browser",
	logLevel: "warning",
	sourcemap: production ? false : "inline",
	treeShaking: true,
	minify: production,
	legalComments: "none",
	outfile: "main.js",
});

if (production) {
	await context.rebuild();
	await context.dispose();
} else {
	await context.watch();
}
