// Messages typed while a turn runs: queued in order, shown in the chat (each removable), and the
// first sent when the turn ends by itself. A turn stopped by the user (or failed) leaves the queue
// alone, so nothing typed is lost and nothing is sent behind the user's back. No `vscode` import.
import type { Attachment } from "./attachments.js";

export interface QueuedPrompt {
  id: string;
  text: string;
  attachments: Attachment[];
}

export class PromptQueue {
  private items: QueuedPrompt[] = [];
  private counter = 0;

  get list(): readonly QueuedPrompt[] {
    return this.items;
  }

  add(text: string, attachments: Attachment[] = []): QueuedPrompt {
    const q = { id: `q${++this.counter}`, text, attachments };
    this.items = [...this.items, q];
    return q;
  }

  /** takes a queued message out (removed by the user, or sent now); undefined when it is not queued */
  remove(id: string): QueuedPrompt | undefined {
    const q = this.items.find((i) => i.id === id);
    this.items = this.items.filter((i) => i.id !== id);
    return q;
  }

  /** the message to send after a turn that ended this way, taken out of the queue; undefined: send nothing */
  next(end: { stopReason?: string | undefined; error?: boolean }): QueuedPrompt | undefined {
    if (!sendsQueued(end)) return undefined;
    const [first] = this.items;
    return first ? this.remove(first.id) : undefined;
  }

  clear(): void {
    this.items = [];
  }
}

/** whether a turn that ended this way goes on with the queue: not after Stop, not after an error */
export function sendsQueued(end: { stopReason?: string | undefined; error?: boolean }): boolean {
  return !end.error && end.stopReason !== undefined && end.stopReason !== "cancelled";
}
