// @vitest-environment node
import { describe, expect, it } from "vitest";
import { BackendProcess } from "../src/obsidian/backendProcess";

function exited(p: BackendProcess): Promise<void> {
	return new Promise((resolve) => {
		const check = (): void => {
			if (!p.running) resolve();
			else setTimeout(check, 10);
		};
		check();
	});
}

describe("BackendProcess (real child processes)", () => {
	it("keeps the end of stderr and how the process ended", async () => {
		const p = new BackendProcess();
		let heard = 0;
		const script = "process.stderr.write('\\u001b[31mboom\\u001b[0m: bad option\\n'); process.exit(3)";
		p.start([process.execPath, "-e", script], process.cwd(), () => heard++);
		expect(p.running).toBe(true);
		await exited(p);
		expect(heard).toBe(1);
		expect(p.info.exit).toBe("The backend exited with code 3");
		expect(p.info.stderrTail).toBe("boom: bad option\n");
	});

	it("explains a command that is not installed", async () => {
		const p = new BackendProcess();
		p.start(["engram-does-not-exist-here", "serve"], process.cwd(), () => undefined);
		await exited(p);
		expect(p.info.exit).toMatch(/Could not run "engram-does-not-exist-here": not found/);
	});

	it("stops only the process it started, once", async () => {
		const p = new BackendProcess();
		p.start([process.execPath, "-e", "setInterval(() => {}, 1000)"], process.cwd(), () => undefined);
		expect(p.running).toBe(true);
		p.stop();
		expect(p.running).toBe(false);
		expect(p.info.exit).toBe("Stopped by the plugin");
		p.stop();
		const idle = new BackendProcess();
		idle.stop();
		expect(idle.info.exit).toBeNull();
	});

	it("refuses an empty command", () => {
		expect(() => new BackendProcess().start([], process.cwd(), () => undefined)).toThrow(/empty/);
	});
});
