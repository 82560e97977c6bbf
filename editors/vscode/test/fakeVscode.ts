// A stand-in for the `vscode` module, just enough to activate the extension
// in node: VS Code itself cannot be downloaded here. The extension's own
// calls (commands, quick pick, status bar, settings, language models) are
// implemented and recorded for assertions; everything else that
// vscode-languageclient touches is a permissive stub. The daemon and
// vscode-languageclient are the real ones.
import Module from 'node:module';
import { CancellationTokenSource } from 'vscode-jsonrpc';

type Listener<T> = (event: T) => unknown;

export class EventEmitter<T> {
  private listeners = new Set<Listener<T>>();
  event = (listener: Listener<T>) => {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  };
  fire(event: T) {
    for (const listener of [...this.listeners]) listener(event);
  }
  dispose() {
    this.listeners.clear();
  }
}

class Disposable {
  static from(...items: { dispose(): unknown }[]) {
    return new Disposable(() => items.forEach((i) => i.dispose()));
  }
  constructor(private readonly callback: () => unknown) {}
  dispose() {
    this.callback();
  }
}

class Uri {
  private constructor(
    readonly scheme: string,
    readonly path: string,
  ) {}
  static file(path: string) {
    return new Uri('file', path);
  }
  static parse(value: string) {
    const colon = value.indexOf(':');
    return new Uri(value.slice(0, colon), decodeURIComponent(value.slice(colon + 1).replace(/^\/\//, '')));
  }
  get fsPath() {
    return this.path;
  }
  toString() {
    return this.scheme === 'file' ? `file://${this.path}` : `${this.scheme}:${this.path}`;
  }
  with() {
    return this;
  }
  toJSON() {
    return { scheme: this.scheme, path: this.path };
  }
}

/** Anything not implemented: callable, constructible, every property another stub, calls return disposables. */
function stub(name: string): any {
  const target = function () {} as any;
  return new Proxy(target, {
    get(_t, prop) {
      if (prop === 'dispose') return () => undefined;
      if (prop === 'then') return undefined; // not a thenable
      if (prop === Symbol.iterator) return [][Symbol.iterator].bind([]);
      if (prop === Symbol.toPrimitive) return () => `<stub ${name}>`;
      if (prop === 'prototype') return target.prototype;
      return stub(`${name}.${String(prop)}`);
    },
    apply() {
      return stub(`${name}()`);
    },
    construct() {
      return stub(`new ${name}`);
    },
  });
}

/** A module namespace whose missing members are stubs. */
function withStubs<T extends object>(name: string, members: T): T {
  return new Proxy(members, {
    get(target, prop) {
      if (prop in target) return (target as any)[prop];
      if (typeof prop === 'symbol' || prop === 'then' || prop === '__esModule') return undefined;
      return stub(`${name}.${prop}`);
    },
  });
}

export class FakeQuickPick<T extends { label: string }> {
  title = '';
  placeholder = '';
  busy = false;
  matchOnDescription = false;
  matchOnDetail = false;
  selectedItems: T[] = [];
  visible = false;
  /** Every `items` assignment, in order. */
  readonly snapshots: T[][] = [];
  private _items: T[] = [];
  private readonly accepted = new EventEmitter<void>();
  private readonly hidden = new EventEmitter<void>();
  private readonly itemButton = new EventEmitter<{ button: unknown; item: T }>();
  readonly onDidAccept = this.accepted.event;
  readonly onDidHide = this.hidden.event;
  readonly onDidTriggerItemButton = this.itemButton.event;
  /** The user presses the first button of `item`'s row. */
  pressItemButton(item: T & { buttons?: unknown[] }) {
    this.itemButton.fire({ button: item.buttons?.[0], item });
  }
  get items() {
    return this._items;
  }
  set items(items: T[]) {
    this._items = items;
    this.snapshots.push(items);
  }
  show() {
    this.visible = true;
  }
  /** The user picks `item` and presses Enter. */
  choose(item: T) {
    this.selectedItems = [item];
    this.accepted.fire();
  }
  /** Closed by the extension or by the user (Escape). */
  hide() {
    if (this.visible) {
      this.visible = false;
      this.hidden.fire();
    }
  }
  dispose() {}
}

export interface FakeModel {
  answer: (prompt: string) => Promise<string>;
}

/** The fake `vscode` module and the handles a test drives it with. */
export function createFakeVscode(initialSettings: Record<string, unknown>, workspaceFolder?: string | string[]) {
  const settings = { ...initialSettings };
  const configurationChanged = new EventEmitter<{ affectsConfiguration(section: string): boolean }>();
  const foldersChanged = new EventEmitter<unknown>();
  const toFolders = (paths: string[]) =>
    paths.length ? paths.map((path, index) => ({ uri: Uri.file(path), name: path.split('/').at(-1), index })) : undefined;
  let workspaceFolders = toFolders(workspaceFolder === undefined ? [] : [workspaceFolder].flat());
  const commandHandlers = new Map<string, (...args: any[]) => unknown>();
  const contentProviders = new Map<string, { provideTextDocumentContent(uri: Uri): string }>();
  const host = {
    settings,
    inputBoxAnswers: [] as (string | undefined)[],
    /** The options of every input box shown. */
    inputBoxes: [] as { value?: string; title?: string }[],
    /** Which item showQuickPick returns (default: the first). */
    pickChooser: undefined as ((items: any[]) => any) | undefined,
    treeProviders: new Map<string, any>(),
    /** Language-model tools registered with vscode.lm.registerTool. */
    tools: new Map<string, { invoke(options: { input: unknown }, token: unknown): Promise<any> }>(),
    quickPicks: [] as FakeQuickPick<any>[],
    shownDocuments: [] as string[],
    openedDocuments: [] as { uri: string; text: string }[],
    messages: [] as { level: string; text: string; buttons: string[] }[],
    /** The button the user presses on the next notifications (undefined: dismissed). */
    messageAnswers: [] as (string | undefined)[],
    executed: [] as { command: string; args: unknown[] }[],
    statusBarItems: [] as { text: string; tooltip: string; command: string }[],
    models: [] as FakeModel[],
    prompts: [] as string[],
    log: [] as string[],
    /** Change settings the way the Settings editor would. */
    updateSettings(changes: Record<string, unknown>) {
      Object.assign(settings, changes);
      configurationChanged.fire({
        affectsConfiguration: (section: string) => Object.keys(changes).some((k) => k === section || k.startsWith(`${section}.`)),
      });
    },
    /** Add or remove workspace folders, as the Explorer would. */
    setWorkspaceFolders(paths: string[]) {
      const before = workspaceFolders ?? [];
      workspaceFolders = toFolders(paths);
      const after = workspaceFolders ?? [];
      const missingFrom = (list: typeof after) => (f: (typeof after)[number]) => !list.some((g) => g.uri.fsPath === f.uri.fsPath);
      foldersChanged.fire({ added: after.filter(missingFrom(before)), removed: before.filter(missingFrom(after)) });
    },
    /** The commands the extension registered. */
    registeredCommands() {
      return [...commandHandlers.keys()];
    },
    async runCommand(command: string, ...args: unknown[]) {
      return commandHandlers.get(command)!(...args);
    },
  };

  const message =
    (level: string) =>
    async (text: string, ...buttons: unknown[]) => {
      host.messages.push({ level, text, buttons: buttons.filter((b): b is string => typeof b === 'string') });
      return host.messageAnswers.shift();
    };
  const logChannel = (name: string) =>
    withStubs('LogOutputChannel', {
      name,
      logLevel: 3,
      onDidChangeLogLevel: new EventEmitter<number>().event,
      ...Object.fromEntries(
        ['trace', 'debug', 'info', 'warn', 'error', 'append', 'appendLine', 'replace'].map((level) => [
          level,
          (text: unknown) => host.log.push(`[${level}] ${String(text)}`),
        ]),
      ),
      clear() {},
      show() {},
      hide() {},
      dispose() {},
    });

  const vscode = withStubs('vscode', {
    // So that TypeScript's `import * as` uses this object as it is, stubs included.
    __esModule: true,
    version: '1.91.0',
    EventEmitter,
    Disposable,
    Uri,
    CancellationTokenSource,
    CancellationError: class CancellationError extends Error {},
    StatusBarAlignment: { Left: 1, Right: 2 },
    TreeItemCollapsibleState: { None: 0, Collapsed: 1, Expanded: 2 },
    TreeItem: class TreeItem {
      description?: string;
      tooltip?: string;
      contextValue?: string;
      iconPath?: unknown;
      resourceUri?: Uri;
      id?: string;
      command?: { command: string; title: string; arguments?: unknown[] };
      constructor(
        readonly label: string,
        readonly collapsibleState: number,
      ) {}
    },
    ThemeIcon: class ThemeIcon {
      constructor(readonly id: string) {}
    },
    QuickPickItemKind: { Separator: -1, Default: 0 },
    LogLevel: { Off: 0, Trace: 1, Debug: 2, Info: 3, Warning: 4, Error: 5 },
    env: withStubs('env', { language: 'en', appName: 'Fake Code', machineId: 'test', sessionId: 'test' }),
    workspace: withStubs('workspace', {
      get workspaceFolders() {
        return workspaceFolders;
      },
      onDidChangeWorkspaceFolders: foldersChanged.event,
      textDocuments: [],
      notebookDocuments: [],
      getConfiguration(section?: string) {
        const prefix = section ? `${section}.` : '';
        return withStubs('WorkspaceConfiguration', {
          get: (key: string, fallback?: unknown) => (`${prefix}${key}` in settings ? settings[`${prefix}${key}`] : fallback),
          has: (key: string) => `${prefix}${key}` in settings,
        });
      },
      onDidChangeConfiguration: configurationChanged.event,
      registerTextDocumentContentProvider(scheme: string, provider: any) {
        contentProviders.set(scheme, provider);
        return new Disposable(() => contentProviders.delete(scheme));
      },
      async openTextDocument(uri: Uri) {
        const text = contentProviders.get(uri.scheme)?.provideTextDocumentContent(uri) ?? '';
        host.openedDocuments.push({ uri: uri.toString(), text });
        return { uri, getText: () => text };
      },
    }),
    window: withStubs('window', {
      activeTextEditor: undefined,
      visibleTextEditors: [],
      tabGroups: withStubs('tabGroups', { all: [] }),
      createOutputChannel: (name: string) => logChannel(name),
      createStatusBarItem() {
        const item = { text: '', tooltip: '', command: '', name: '', show() {}, hide() {}, dispose() {} };
        host.statusBarItems.push(item);
        return item;
      },
      createQuickPick() {
        const pick = new FakeQuickPick();
        host.quickPicks.push(pick);
        return pick;
      },
      async showInputBox(options: { value?: string; title?: string } = {}) {
        host.inputBoxes.push(options);
        return host.inputBoxAnswers.shift();
      },
      async showQuickPick(items: any[]) {
        return host.pickChooser ? host.pickChooser(items) : items[0];
      },
      registerTreeDataProvider(id: string, provider: any) {
        host.treeProviders.set(id, provider);
        return new Disposable(() => host.treeProviders.delete(id));
      },
      async showTextDocument(target: any) {
        host.shownDocuments.push(target instanceof Uri ? target.fsPath : target.uri.toString());
        return {};
      },
      showInformationMessage: message('info'),
      showWarningMessage: message('warning'),
      showErrorMessage: message('error'),
    }),
    commands: withStubs('commands', {
      registerCommand(command: string, handler: (...args: any[]) => unknown) {
        commandHandlers.set(command, handler);
        return new Disposable(() => commandHandlers.delete(command));
      },
      async executeCommand(command: string, ...args: unknown[]) {
        host.executed.push({ command, args });
        return commandHandlers.get(command)?.(...args);
      },
    }),
    LanguageModelTextPart: class LanguageModelTextPart {
      constructor(readonly value: string) {}
    },
    LanguageModelToolResult: class LanguageModelToolResult {
      constructor(readonly content: { value: string }[]) {}
    },
    lm: {
      registerTool(name: string, tool: { invoke(options: { input: unknown }, token: unknown): Promise<any> }) {
        host.tools.set(name, tool);
        return new Disposable(() => host.tools.delete(name));
      },
      async selectChatModels() {
        return host.models.map((model) => ({
          async sendRequest(messages: { content: string }[]) {
            host.prompts.push(messages[0].content);
            const text = await model.answer(messages[0].content);
            return {
              text: (async function* () {
                yield text;
              })(),
            };
          },
        }));
      },
    },
    LanguageModelChatMessage: {
      User: (content: string) => ({ role: 1, content }),
      Assistant: (content: string) => ({ role: 2, content }),
    },
  });

  return { vscode, host };
}

/** Make `require('vscode')` return `fake` (for the extension and vscode-languageclient). */
export function installFakeVscode(fake: object): () => void {
  const loader = Module as unknown as { _load: (request: string, ...rest: unknown[]) => unknown };
  const original = loader._load;
  loader._load = function (request: string, ...rest: unknown[]) {
    return request === 'vscode' ? fake : original.call(this, request, ...rest);
  };
  return () => {
    loader._load = original;
  };
}
