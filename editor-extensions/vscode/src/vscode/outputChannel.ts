// An output channel that ignores writes once disposed. On a window reload VS Code calls
// deactivate() and, without waiting for it, disposes the extension's subscriptions (the channels
// among them); the servers that deactivate() stops then log their exit and last stderr to a closed
// channel, which throws "Channel has been closed" into the extension host's log every time.
import * as vscode from "vscode";

export function createOutputChannel(name: string): vscode.OutputChannel {
  const channel = vscode.window.createOutputChannel(name);
  let open = true;
  const ifOpen = (write: () => void) => {
    if (open) write();
  };
  return {
    name: channel.name,
    append: (value: string) => ifOpen(() => channel.append(value)),
    appendLine: (value: string) => ifOpen(() => channel.appendLine(value)),
    replace: (value: string) => ifOpen(() => channel.replace(value)),
    clear: () => ifOpen(() => channel.clear()),
    show: (columnOrPreserveFocus?: vscode.ViewColumn | boolean, preserveFocus?: boolean) => ifOpen(() => channel.show(columnOrPreserveFocus as vscode.ViewColumn, preserveFocus)),
    hide: () => ifOpen(() => channel.hide()),
    dispose: () => {
      open = false;
      channel.dispose();
    },
  };
}
