// A small hand-written stand-in for the `vscode` module: only what the extension's glue calls.
// Tests drive it through `__test` (open documents, settings, scripted input answers, recorded UI).
/* eslint-disable @typescript-eslint/no-explicit-any */
import fs from "node:fs";
import nodePath from "node:path";

export class Uri {
  private constructor(readonly scheme: string, readonly path: string, readonly query = "") {}
  static file(p: string) {
    return new Uri("file", nodePath.resolve(p));
  }
  static parse(s: string) {
    const m = /^([a-z-]+):\/\/([^?]*)\??(.*)$/.exec(s);
    return m ? new Uri(m[1]!, decodeURIComponent(m[2]!), m[3]) : Uri.file(s);
  }
  static from(c: { scheme: string; path: string; query?: string }) {
    return new Uri(c.scheme, c.path, c.query ?? "");
  }
  static joinPath(u: Uri, ...parts: string[]) {
    return new Uri(u.scheme, nodePath.join(u.path, ...parts), u.query);
  }
  get fsPath() {
    return this.path;
  }
  with(c: { scheme?: string; path?: string; query?: string }) {
    return new Uri(c.scheme ?? this.scheme, c.path ?? this.path, c.query ?? this.query);
  }
  toString() {
    return `${this.scheme}://${encodeURI(this.path)}${this.query ? `?${this.query}` : ""}`;
  }
}

export class Disposable {
  constructor(private readonly fn: () => void = () => {}) {}
  static from(...d: { dispose(): unknown }[]) {
    return new Disposable(() => d.forEach((x) => x.dispose()));
  }
  dispose() {
    this.fn();
  }
}

export class EventEmitter<T> {
  private listeners = new Set<(e: T) => void>();
  event = (l: (e: T) => void) => {
    this.listeners.add(l);
    return new Disposable(() => this.listeners.delete(l));
  };
  fire(e: T) {
    for (const l of [...this.listeners]) l(e);
  }
  dispose() {
    this.listeners.clear();
  }
}

export class Position {
  constructor(readonly line: number, readonly character: number) {}
}
export class Range {
  readonly start: Position;
  readonly end: Position;
  constructor(a: Position | number, b: Position | number, c?: number, d?: number) {
    if (typeof a === "number") {
      this.start = new Position(a, b as number);
      this.end = new Position(c!, d!);
    } else {
      this.start = a;
      this.end = b as Position;
    }
  }
}
export class Selection extends Range {}

export class WorkspaceEdit {
  readonly edits: { uri: Uri; range: Range; text: string }[] = [];
  replace(uri: Uri, range: Range, text: string) {
    this.edits.push({ uri, range, text });
  }
}

export enum DiagnosticSeverity {
  Error = 0,
  Warning = 1,
  Information = 2,
  Hint = 3,
}
export class Diagnostic {
  source?: string;
  constructor(readonly range: Range, readonly message: string, readonly severity: DiagnosticSeverity = DiagnosticSeverity.Error) {}
}
export enum ViewColumn {
  Active = -1,
  One = 1,
}

/** an open document with possibly unsaved text */
export class StubDocument {
  isDirty = false;
  saves = 0;
  undoStack: string[] = [];
  constructor(readonly uri: Uri, private text: string) {}
  getText() {
    return this.text;
  }
  setText(t: string, dirty = true) {
    this.undoStack.push(this.text);
    this.text = t;
    this.isDirty = dirty;
  }
  get lineCount() {
    return this.text.split("\n").length;
  }
  lineAt(n: number) {
    const lines = this.text.split("\n");
    return { range: new Range(n, 0, n, lines[n]!.length), text: lines[n] };
  }
  async save() {
    fs.writeFileSync(this.uri.fsPath, this.text);
    this.isDirty = false;
    this.saves++;
    return true;
  }
}

export class ThemeColor {
  constructor(readonly id: string) {}
}
export enum OverviewRulerLane {
  Left = 1,
  Center = 2,
  Right = 4,
  Full = 7,
}
export class RelativePattern {
  constructor(readonly base: { uri: Uri } | Uri, readonly pattern: string) {}
}
/** a visible text editor: the decorations set on it, by decoration type */
export class StubEditor {
  decorations = new Map<unknown, Range[]>();
  constructor(readonly document: StubDocument) {}
  setDecorations(type: unknown, ranges: Range[]) {
    this.decorations.set(type, ranges);
  }
}

const state = {
  documents: [] as StubDocument[],
  visibleEditors: [] as StubEditor[],
  visibleEditorEvents: new EventEmitter<StubEditor[]>(),
  documentChanges: new EventEmitter<{ document: StubDocument; contentChanges: unknown[] }>(),
  decorationTypes: [] as { options: any; disposed: boolean }[],
  panels: [] as any[],
  config: new Map<string, unknown>(),
  inputAnswers: [] as (string | undefined)[],
  inputPrompts: [] as any[],
  messages: [] as { level: string; text: string; items?: string[] }[],
  /** answers for the next showWarningMessage/showErrorMessage/showInformationMessage calls (the button clicked) */
  messageAnswers: [] as (string | undefined)[],
  /** names of output channels shown */
  shownOutputs: [] as string[],
  /** each show() of an output channel: its name and whether the focus stayed where it was */
  outputShows: [] as { name: string; preserveFocus: boolean | undefined }[],
  /** each showQuickPick: the items offered and the options */
  quickPicks: [] as { items: any[]; opts: any }[],
  /** choices for the next quick picks (given the items; undefined: dismissed); without one the first item is taken */
  quickPickChoices: [] as ((items: any[]) => any)[],
  terminals: [] as any[],
  commands: new Map<string, (...a: any[]) => any>(),
  executed: [] as { command: string; args: any[] }[],
  webviewProviders: new Map<string, any>(),
  /** the options each webview view provider was registered with */
  webviewProviderOptions: new Map<string, any>(),
  panelSerializers: new Map<string, any>(),
  outputs: new Map<string, string[]>(),
  /** the names of output channels used after they were disposed ("Channel has been closed") */
  closedChannelUses: [] as string[],
  diagnostics: new Map<string, Map<string, Diagnostic[]>>(),
  appliedEdits: [] as WorkspaceEdit[],
  folderEvents: new EventEmitter<{ added: any[]; removed: any[] }>(),
  shownDocuments: [] as any[],
  /** each workspace.findFiles: the glob, the exclude and the most files asked for */
  findFiles: [] as { pattern: string; exclude: unknown; max: number }[],
  /** commands this window does not have (executeCommand rejects, as VS Code does) */
  missingCommands: new Set<string>(),
};

export const __test = {
  state,
  openDocument(path: string, text: string) {
    const d = new StubDocument(Uri.file(path), text);
    state.documents.push(d);
    return d;
  },
  setConfig(key: string, value: unknown) {
    state.config.set(key, value);
  },
  /** shows a document in a visible editor (onDidChangeVisibleTextEditors fires) */
  showEditor(doc: StubDocument) {
    const e = new StubEditor(doc);
    state.visibleEditors.push(e);
    state.visibleEditorEvents.fire(state.visibleEditors);
    return e;
  },
  reset() {
    state.documents.length = 0;
    state.visibleEditors.length = 0;
    state.decorationTypes.length = 0;
    state.panels.length = 0;
    state.config.clear();
    state.inputAnswers.length = 0;
    state.inputPrompts.length = 0;
    state.messages.length = 0;
    state.messageAnswers.length = 0;
    state.shownOutputs.length = 0;
    state.outputShows.length = 0;
    state.quickPicks.length = 0;
    state.quickPickChoices.length = 0;
    state.shownDocuments.length = 0;
    window.activeTextEditor = undefined;
    state.terminals.length = 0;
    state.commands.clear();
    state.executed.length = 0;
    state.webviewProviders.clear();
    state.webviewProviderOptions.clear();
    state.panelSerializers.clear();
    state.outputs.clear();
    state.closedChannelUses.length = 0;
    state.diagnostics.clear();
    state.appliedEdits.length = 0;
    workspace.workspaceFolders = undefined;
    state.missingCommands.clear();
    env.remoteName = undefined;
    env.clipboard.text = "";
    state.findFiles.length = 0;
  },
};

export const workspace = {
  workspaceFolders: undefined as any[] | undefined,
  get textDocuments() {
    return state.documents;
  },
  fs: {
    async readFile(u: Uri) {
      return new Uint8Array(fs.readFileSync(u.fsPath));
    },
    async writeFile(u: Uri, data: Uint8Array) {
      fs.mkdirSync(nodePath.dirname(u.fsPath), { recursive: true });
      fs.writeFileSync(u.fsPath, data);
    },
    async createDirectory(u: Uri) {
      fs.mkdirSync(u.fsPath, { recursive: true });
    },
    async stat(u: Uri) {
      return fs.statSync(u.fsPath);
    },
    async delete(u: Uri) {
      fs.rmSync(u.fsPath);
    },
  },
  async applyEdit(edit: WorkspaceEdit) {
    state.appliedEdits.push(edit);
    for (const e of edit.edits) {
      const d = state.documents.find((x) => x.uri.toString() === e.uri.toString());
      if (!d) return false;
      d.setText(e.text);
    }
    return true;
  },
  getConfiguration(section?: string) {
    return {
      get<T>(key: string, dflt?: T): T | undefined {
        const full = section ? `${section}.${key}` : key;
        return (state.config.has(full) ? state.config.get(full) : dflt) as T | undefined;
      },
    };
  },
  onDidChangeWorkspaceFolders: state.folderEvents.event,
  onDidChangeTextDocument: state.documentChanges.event,
  /** every file under the pattern's base (no glob matching: the stub's callers want all; the glob is recorded) */
  async findFiles(p: RelativePattern, exclude?: unknown, max = Infinity) {
    state.findFiles.push({ pattern: p.pattern, exclude, max });
    const base = "uri" in p.base ? p.base.uri.fsPath : p.base.fsPath;
    const out: Uri[] = [];
    const walk = (d: string) => {
      for (const e of fs.readdirSync(d, { withFileTypes: true })) {
        const full = nodePath.join(d, e.name);
        if (e.isDirectory()) walk(full);
        else if (out.length < max) out.push(Uri.file(full));
      }
    };
    walk(base);
    return out;
  },
  getWorkspaceFolder(u: Uri) {
    return workspace.workspaceFolders?.find((f) => u.fsPath.startsWith(f.uri.fsPath));
  },
  async openTextDocument(u: Uri) {
    return state.documents.find((d) => d.uri.toString() === u.toString()) ?? new StubDocument(u, fs.readFileSync(u.fsPath, "utf8"));
  },
  registerTextDocumentContentProvider(_scheme: string, _p: unknown) {
    return new Disposable();
  },
};

function outputChannel(name: string) {
  const lines: string[] = [];
  state.outputs.set(name, lines);
  let closed = false;
  // as VS Code's channel: any use after dispose throws (and the extension host logs the error)
  const open = () => {
    if (!closed) return;
    state.closedChannelUses.push(name);
    throw new Error("Channel has been closed");
  };
  return {
    name,
    append: (s: string) => (open(), lines.push(s)),
    appendLine: (s: string) => (open(), lines.push(s + "\n")),
    replace: (s: string) => (open(), lines.splice(0, lines.length, s)),
    show: (preserveFocus?: boolean) => {
      open();
      state.shownOutputs.push(name);
      state.outputShows.push({ name, preserveFocus });
    },
    hide: () => open(),
    clear: () => (open(), (lines.length = 0)),
    dispose: () => {
      closed = true;
    },
  };
}

export const window = {
  activeTextEditor: undefined as any,
  createOutputChannel: outputChannel,
  async showInputBox(opts: any) {
    state.inputPrompts.push(opts);
    return state.inputAnswers.shift();
  },
  async showQuickPick(items: any[], opts: any) {
    state.inputPrompts.push(opts);
    state.quickPicks.push({ items, opts });
    const choose = state.quickPickChoices.shift();
    if (choose) return choose(items);
    return state.inputAnswers.shift() ?? items[0];
  },
  async showWarningMessage(text: string, ...items: string[]) {
    state.messages.push({ level: "warning", text, items });
    return state.messageAnswers.shift();
  },
  async showErrorMessage(text: string, ...items: string[]) {
    state.messages.push({ level: "error", text, items });
    return state.messageAnswers.shift();
  },
  async showInformationMessage(text: string, ...items: string[]) {
    state.messages.push({ level: "info", text, items });
    return state.messageAnswers.shift();
  },
  createTerminal(opts: any) {
    const t = { ...opts, shown: 0, show() { t.shown++; }, dispose() {} };
    state.terminals.push(t);
    return t;
  },
  registerWebviewViewProvider(id: string, p: any, options?: any) {
    state.webviewProviders.set(id, p);
    state.webviewProviderOptions.set(id, options);
    return new Disposable(() => state.webviewProviders.delete(id));
  },
  registerWebviewPanelSerializer(viewType: string, s: any) {
    state.panelSerializers.set(viewType, s);
    return new Disposable(() => state.panelSerializers.delete(viewType));
  },
  onDidChangeActiveTextEditor: new EventEmitter<any>().event,
  get visibleTextEditors() {
    return state.visibleEditors;
  },
  onDidChangeVisibleTextEditors: state.visibleEditorEvents.event,
  createTextEditorDecorationType(options: any) {
    const t = { options, disposed: false, dispose() { t.disposed = true; } };
    state.decorationTypes.push(t);
    return t;
  },
  createWebviewPanel(viewType: string, title: string, column: unknown, options: any) {
    const disposeEvents = new EventEmitter<void>();
    let receive: ((m: unknown) => void) | undefined;
    let panelTitle = title;
    const panel = {
      // as in VS Code, a disposed panel's title can be neither read nor set
      get title() {
        if (panel.disposed) throw new Error("Webview is disposed");
        return panelTitle;
      },
      set title(t: string) {
        if (panel.disposed) throw new Error("Webview is disposed");
        panelTitle = t;
      },
      viewType, column, options, posted: [] as any[], revealed: 0, reveals: [] as { column: unknown; preserveFocus: boolean | undefined }[], disposed: false, iconPath: undefined as unknown,
      webview: {
        options: {} as any, html: "", cspSource: "vscode-webview://csp",
        onDidReceiveMessage: (fn: (m: unknown) => void) => { receive = fn; return new Disposable(); },
        postMessage: async (m: unknown) => { panel.posted.push(m); return true; },
        asWebviewUri: (u: Uri) => Uri.from({ scheme: "vscode-resource", path: u.path }),
      },
      /** a message from the panel's webview */
      send: (m: unknown) => receive!(m),
      onDidDispose: disposeEvents.event,
      reveal(column?: unknown, preserveFocus?: boolean) { panel.revealed++; panel.reveals.push({ column, preserveFocus }); },
      dispose() { if (panel.disposed) return; panel.disposed = true; disposeEvents.fire(); },
    };
    state.panels.push(panel);
    return panel;
  },
  async showTextDocument(doc: any, opts?: any) {
    state.shownDocuments.push({ doc, opts });
  },
};

export const commands = {
  registerCommand(id: string, fn: (...a: any[]) => any) {
    state.commands.set(id, fn);
    return new Disposable(() => state.commands.delete(id));
  },
  async executeCommand(command: string, ...args: any[]) {
    if (state.missingCommands.has(command)) throw new Error(`command '${command}' not found`);
    state.executed.push({ command, args });
    const fn = state.commands.get(command);
    return fn?.(...args);
  },
};

export const languages = {
  createDiagnosticCollection(name: string) {
    const m = new Map<string, Diagnostic[]>();
    state.diagnostics.set(name, m);
    return {
      name,
      set: (u: Uri, d: Diagnostic[]) => m.set(u.fsPath, d),
      clear: () => m.clear(),
      dispose: () => {},
    };
  },
};

export const env = {
  openExternal: async () => true,
  remoteName: undefined as string | undefined,
  clipboard: {
    text: "",
    async writeText(t: string) {
      env.clipboard.text = t;
    },
  },
};
