// Two test projects: the Convex functions under convex-test (in the edge
// runtime, close to Convex's own), and the HTTP double driven over loopback.
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const root = fileURLToPath(new URL("../..", import.meta.url));

export default defineConfig({
  root,
  test: {
    projects: [
      {
        test: {
          name: "convex",
          include: ["convex/**/*.test.ts"],
          environment: "edge-runtime",
          server: { deps: { inline: ["convex-test"] } },
        },
      },
      {
        test: {
          name: "double",
          include: ["tests/convex_double/**/*.test.mjs"],
          environment: "node",
          testTimeout: 20_000,
          hookTimeout: 30_000,
        },
      },
    ],
  },
});
