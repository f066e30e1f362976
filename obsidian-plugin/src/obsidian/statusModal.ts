/** The status modal opened from the status bar item. */
import { Modal } from "obsidian";
import { renderStatusDetails, type StatusActions, type StatusDetails } from "../ui/statusDetails";
import type { EngramContext } from "./context";

export class StatusModal extends Modal {
	private unsubscribe: (() => void) | null = null;

	constructor(
		private readonly ctx: EngramContext,
		private readonly details: () => StatusDetails,
		private readonly actions: StatusActions,
	) {
		super(ctx.app);
	}

	onOpen(): void {
		this.setTitle("Engram");
		this.modalEl.addClass("engram-status-modal");
		this.render();
		this.unsubscribe = this.ctx.monitor.onChange(() => this.render());
		void this.ctx.monitor.poll();
	}

	onClose(): void {
		this.unsubscribe?.();
		this.unsubscribe = null;
		this.contentEl.empty();
	}

	private render(): void {
		renderStatusDetails(this.contentEl, this.details(), this.actions);
	}
}
