/** Fails a test when a request or reply it caused was off the OpenAPI contract (tests/contract.ts). */
import { afterEach } from "vitest";
import { takeViolations } from "./contract";

afterEach(() => {
	const problems = takeViolations();
	if (problems.length) throw new Error(`Off the backend's OpenAPI document:\n  ${[...new Set(problems)].join("\n  ")}`);
});
