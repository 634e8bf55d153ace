// Files and images attached to a message (`@` in the input, pasted images) and the ACP content
// blocks they become: a file as an embedded `resource` (its text) when the agent takes embedded
// context, else as a `resource_link`; an image as an `image` block when the agent takes images.
// No `vscode` import.
import type * as acp from "@agentclientprotocol/sdk/unstable";

export type Attachment =
  | { kind: "file"; id: string; path: string; name: string }
  | { kind: "image"; id: string; name: string; mimeType: string; data: string };

/** a file attachment with its text, read when the message is sent (undefined: not readable as text) */
export type ResolvedAttachment = Exclude<Attachment, { kind: "file" }> | (Extract<Attachment, { kind: "file" }> & { text?: string | undefined });

/** files larger than this go as a link even when the agent takes embedded context */
export const MAX_EMBEDDED_CHARS = 200_000;

/** whether the character just typed before `caret` is an `@` that starts a word (not an e-mail address) */
export function atTyped(text: string, caret: number): boolean {
  if (text[caret - 1] !== "@") return false;
  return caret === 1 || /\s/.test(text[caret - 2]!);
}

/** `file:///...` for an absolute path (POSIX or Windows) */
export function fileUri(path: string): string {
  const p = path.replace(/\\/g, "/");
  const abs = p.startsWith("/") ? p : `/${p}`;
  return `file://${abs.split("/").map(encodeURIComponent).join("/").replace(/^\/([A-Za-z])%3A/, "/$1:")}`;
}

/** `data:image/png;base64,...` -> its type and base64 data; undefined for anything else */
export function imageFromDataUrl(url: string): { mimeType: string; data: string } | undefined {
  const m = /^data:(image\/[\w.+-]+);base64,([A-Za-z0-9+/=]+)$/.exec(url);
  return m ? { mimeType: m[1]!, data: m[2]! } : undefined;
}

export interface PromptBlocks {
  blocks: acp.ContentBlock[];
  /** names of attachments the agent cannot take (left out) */
  dropped: string[];
}

/** The prompt for a message: its text, then one block per attachment, as the agent's capabilities allow. */
export function promptBlocks(text: string, attachments: readonly ResolvedAttachment[], caps: acp.PromptCapabilities | undefined): PromptBlocks {
  const blocks: acp.ContentBlock[] = [];
  const dropped: string[] = [];
  if (text) blocks.push({ type: "text", text });
  for (const a of attachments) {
    if (a.kind === "image") {
      if (caps?.image) blocks.push({ type: "image", mimeType: a.mimeType, data: a.data });
      else dropped.push(a.name);
      continue;
    }
    const uri = fileUri(a.path);
    if (caps?.embeddedContext && a.text !== undefined && a.text.length <= MAX_EMBEDDED_CHARS) blocks.push({ type: "resource", resource: { uri, text: a.text } });
    else blocks.push({ type: "resource_link", uri, name: a.name });
  }
  return { blocks, dropped };
}
