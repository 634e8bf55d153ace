// Messages between the extension host and the chat webview. No `vscode` import.
import type { ChatState } from "./chatState.js";
import type { SessionInfo, TerminalExitStatus } from "@agentclientprotocol/sdk/unstable";
import type { Attachment } from "./attachments.js";
import type { PersistedChat } from "./chatPersist.js";

export interface FolderView {
  uri: string;
  name: string;
}

export interface ViewModel {
  folders: FolderView[];
  currentFolder?: string | undefined;
  running: boolean;
  supportsSessionList: boolean;
  sessions: SessionInfo[];
  chat: ChatState;
  terminals: { id: string; command: string; output: string; truncated: boolean; exitStatus: TerminalExitStatus | null; released?: boolean }[];
  /** messages typed during the turn, sent when it ends (attachments by name) */
  queue: { id: string; text: string; attachments: string[] }[];
  /** an editor tab's chat (no folder picker) rather than the side bar's */
  inTab: boolean;
  error?: string | undefined;
}

export type FromWebview =
  | { type: "ready" }
  | { type: "send"; text: string; attachments?: Attachment[] }
  | { type: "unqueue"; id: string; edit?: boolean }
  | { type: "sendQueued"; id: string }
  | { type: "pickFile" }
  | { type: "openSessionInTab"; sessionId: string }
  | { type: "stop" }
  | { type: "newChat" }
  | { type: "permission"; requestId: string; optionId?: string }
  | { type: "setMode"; modeId: string }
  | { type: "setConfig"; configId: string; value: string | boolean }
  | { type: "listSessions" }
  | { type: "loadSession"; sessionId: string }
  | { type: "selectFolder"; uri: string }
  | { type: "openLocation"; path: string; line?: number | null }
  | { type: "openDiff"; toolCallId: string; index: number }
  | { type: "showTerminal"; terminalId: string }
  | { type: "showLog" }
  | { type: "copyText"; text: string }
  | { type: "openChangeDiff"; itemId: string; path: string }
  | { type: "undoTurn"; itemId: string }
  /** a user message: take it back and put its text in the input (_session/rewind) */
  | { type: "editResend"; itemId: string }
  /** a user message: put back the files the agent changed from it on, after a confirmation */
  | { type: "restoreFiles"; itemId: string };

export type ToWebview =
  | { type: "state"; model: ViewModel }
  | { type: "focusInput" }
  | { type: "restoreInput"; text: string; attachments?: Attachment[] }
  | { type: "attach"; attachment: Attachment }
  /** to keep as the webview's state: VS Code hands it back after a window reload */
  | { type: "persist"; state: PersistedChat };
