#!/usr/bin/env node
// `npm test`: typecheck convex/, run the convex-test unit tests and the
// double's HTTP tests, and end with a plain "N passed, N failed" line (the
// form CI reads; vitest's own summary is not one it parses).
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../..", import.meta.url));
const bin = (name) => path.join(root, "node_modules", ".bin", name);
const run = (cmd, args) => spawnSync(cmd, args, { cwd: root, stdio: "inherit" }).status;

let passed = 0;
let failed = 0;

// The typecheck counts as one test: `npx convex deploy` refuses code that fails it.
if (run(bin("tsc"), ["-p", "convex/tsconfig.json"]) === 0) {
  passed += 1;
  console.log("typecheck of convex/: passed");
} else {
  failed += 1;
  console.log("typecheck of convex/: FAILED");
}

const outDir = mkdtempSync(path.join(tmpdir(), "engram-convex-tests-"));
const report = path.join(outDir, "vitest.json");
const status = run(bin("vitest"), [
  "run",
  "--config",
  "tests/convex_double/vitest.config.mjs",
  "--reporter=default",
  "--reporter=json",
  `--outputFile.json=${report}`,
  ...process.argv.slice(2),
]);
let skipped = 0;
try {
  const results = JSON.parse(readFileSync(report, "utf8"));
  passed += results.numPassedTests;
  failed += results.numFailedTests;
  skipped += results.numPendingTests + results.numTodoTests;
  // A file that failed to load has no failed tests but still failed.
  if (results.numFailedTestSuites > 0 && results.numFailedTests === 0) failed += results.numFailedTestSuites;
} catch (e) {
  console.log(`vitest wrote no report (${e.message})`);
  failed += 1;
} finally {
  rmSync(outDir, { recursive: true, force: true });
}
if (status !== 0 && failed === 0) failed += 1;

console.log(`${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ""}`);
process.exit(failed > 0 ? 1 : 0);
