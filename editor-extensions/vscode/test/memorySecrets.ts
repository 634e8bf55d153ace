// An in-memory vscode.SecretStorage for tests that store API keys.
import * as vscode from "vscode";

export class MemorySecrets {
  readonly map = new Map<string, string>();
  async get(k: string) {
    return this.map.get(k);
  }
  async store(k: string, v: string) {
    this.map.set(k, v);
  }
  async delete(k: string) {
    this.map.delete(k);
  }
  onDidChange = new vscode.EventEmitter<unknown>().event;
}
