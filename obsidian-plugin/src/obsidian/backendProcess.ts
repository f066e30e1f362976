/**
 * The backend process we spawned (desktop only). Only a process started here is ever stopped
 * here: a backend the user runs in a terminal is left alone.
 */
import { spawn, type ChildProcess } from "child_process";
import type { ProcessInfo } from "../ui/statusDetails";

const TAIL_CHARS = 4000;
// eslint-disable-next-line no-control-regex -- stripping terminal colour codes from stderr
const ANSI = /\u001b\[[0-9;]*[A-Za-z]/g;

export class BackendProcess {
	private child: ChildProcess | null = null;
	readonly info: ProcessInfo = { running: false, exit: null, stderrTail: "" };

	get running(): boolean {
		return this.child !== null;
	}

	/** Spawn `argv` without a shell in `cwd`; `onExit` hears when it ends. */
	start(argv: string[], cwd: string, onExit: () => void): void {
		if (this.child) return;
		const [cmd, ...args] = argv;
		if (!cmd) throw new Error("The backend command is empty");
		this.info.exit = null;
		this.info.stderrTail = "";
		const child = spawn(cmd, args, { cwd, stdio: ["ignore", "ignore", "pipe"], windowsHide: true });
		this.child = child;
		this.info.running = true;
		child.stderr?.setEncoding("utf8");
		child.stderr?.on("data", (chunk: string) => {
			this.info.stderrTail = (this.info.stderrTail + chunk.replace(ANSI, "")).slice(-TAIL_CHARS);
		});
		const finish = (exit: string): void => {
			if (this.child !== child) return;
			this.child = null;
			this.info.running = false;
			this.info.exit = exit;
			onExit();
		};
		child.on("error", (err: NodeJS.ErrnoException) => {
			finish(
				err.code === "ENOENT"
					? `Could not run "${cmd}": not found. Set the full path of engram in the plugin settings.`
					: `Could not run "${cmd}": ${err.message}`,
			);
		});
		child.on("exit", (code, signal) => {
			finish(signal ? `The backend stopped (signal ${signal})` : `The backend exited with code ${code ?? "?"}`);
		});
	}

	/** Stop the process we started, if it is still running. */
	stop(): void {
		const child = this.child;
		if (!child) return;
		this.child = null;
		this.info.running = false;
		this.info.exit = "Stopped by the plugin";
		child.kill();
	}
}
