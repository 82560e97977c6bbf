// The VS Code side: starts the daemon through vscode-languageclient, the
// commands, the status bar, `memory/select` through the Language Model API,
// and the API other extensions (agents) call. Everything about the wire is
// in memoryClient.ts; what the user sees is shaped in present.ts.
import * as vscode from 'vscode';
import { LanguageClient, LanguageClientOptions, ServerOptions, State } from 'vscode-languageclient/node';

import {
  DEFAULT_INITIAL_WAIT_MS,
  errorMessage,
  InitialRecall,
  MemoryClient,
  RecallInitialOptions,
} from './memoryClient';
import { parseSelection, selectPrompt } from './modelSelect';
import { recallRows, recallSummary, statusBar, statusReport } from './present';
import type { MemoryDoc, SelectParams, SelectResult, StatusResult } from './protocol.generated';
import { PROTOCOL_VERSION } from './protocol.generated';
import { daemonLaunch, readSettings, SECTION, Settings } from './settings';

/** What `vscode.extensions.getExtension('memory-recall.memory-recall').exports` offers. */
export interface MemoryRecallApi {
  readonly protocolVersion: number;
  /**
   * Recall memories for `query`: resolves after the initial wait (100 ms by
   * default, counted from this call, daemon start-up included) with the first
   * phase that arrived (`initial`, or null, and `initialReason`) and promises
   * of the refined phase and of the response. Rejects only when the daemon
   * cannot be started.
   */
  recall(query: string, options?: RecallInitialOptions): Promise<InitialRecall>;
  /** `memory/status` of the running daemon. */
  status(): Promise<StatusResult>;
}

const STATUS_URI = vscode.Uri.parse('memory-recall:Memory%20Status');
// The daemon has no status notification: the status bar asks after each
// recall, after a markdown file is saved, created or deleted here, when the
// window gets focus, and every 30 s (for changes made elsewhere).
const STATUS_REFRESH_MS = 30_000;
const REFRESH_AFTER_CHANGE_MS = 500; // the daemon's watcher reacts within ~100 ms

/** The daemon of this window: one LanguageClient and its MemoryClient, replaced on restart. */
class Daemon implements vscode.Disposable {
  private languageClient: LanguageClient | undefined;
  private memory: MemoryClient | undefined;
  private starting: Promise<MemoryClient> | undefined;
  private readonly statusItem = vscode.window.createStatusBarItem('memoryRecall.status', vscode.StatusBarAlignment.Right, 100);
  private lastStatus: StatusResult | undefined;
  private refreshTimer: NodeJS.Timeout | undefined;
  private refreshSoonTimer: NodeJS.Timeout | undefined;
  private settings: Settings | undefined;

  constructor(readonly log: vscode.LogOutputChannel) {
    this.statusItem.name = 'Memory Recall';
    this.statusItem.command = 'memoryRecall.showStatus';
    this.showState('starting');
    this.statusItem.show();
  }

  /** The running client, starting the daemon when needed. */
  client(): Promise<MemoryClient> {
    if (this.languageClient?.state === State.Stopped) {
      // vscode-languageclient gave up restarting a crashing daemon: start afresh.
      this.memory?.dispose();
      this.languageClient = this.memory = this.starting = undefined;
    }
    if (!this.starting) {
      const starting = this.start();
      this.starting = starting;
      starting.catch(() => {
        if (this.starting === starting) this.starting = undefined; // try again next time
      });
    }
    return this.starting;
  }

  private async start(): Promise<MemoryClient> {
    const settings = readSettings((key, fallback) => vscode.workspace.getConfiguration(SECTION).get(key, fallback));
    this.settings = settings;
    const folder = vscode.workspace.workspaceFolders?.[0];
    const launch = daemonLaunch(settings, { workspaceFolder: folder?.uri.fsPath });
    for (const problem of launch.problems) {
      this.log.warn(problem);
      void vscode.window.showWarningMessage(`Memory Recall: ${problem}`);
    }
    // No `transport`: with TransportKind.stdio the client would append
    // `--stdio` to the arguments, which `memory-recall serve` rejects.
    const serverOptions: ServerOptions = {
      command: launch.command,
      args: launch.args,
      options: { cwd: folder?.uri.fsPath, env: { ...process.env, ...launch.env } },
    };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [], // a memory daemon, not a language server: no documents are synced
      outputChannel: this.log,
      initializationOptions: launch.initializationOptions,
      connectionOptions: { maxRestartCount: 3 },
    };
    const languageClient = new LanguageClient('memoryRecall', 'Memory Recall', serverOptions, clientOptions);
    // MemoryClient registers its handlers before start(); LanguageClient installs them on connect.
    const memory = new MemoryClient(languageClient, {
      select: (params, token) => this.selectWithModel(params, token),
    });
    memory.onTelemetry(() => void this.refreshStatus());
    languageClient.onDidChangeState((event) => {
      if (event.newState === State.Stopped) this.showState('stopped');
      if (event.newState === State.Running) void this.refreshStatus();
    });
    this.languageClient = languageClient;
    this.memory = memory;
    this.log.info(`starting ${launch.command} ${launch.args.join(' ')}`);
    try {
      await languageClient.start();
    } catch (error) {
      this.showState('stopped');
      memory.dispose();
      this.languageClient = this.memory = undefined;
      void vscode.window
        .showErrorMessage(
          `Memory Recall could not start \`${launch.command}\`: ${errorMessage(error)}. ` +
            'Install it (see the extension README) or set memoryRecall.server.command.',
          'Open Settings',
        )
        .then((choice) => {
          if (choice) void vscode.commands.executeCommand('workbench.action.openSettings', 'memoryRecall.server');
        });
      throw error;
    }
    this.refreshTimer = setInterval(() => void this.refreshStatus(), STATUS_REFRESH_MS);
    void this.refreshStatus();
    return memory;
  }

  async stop(): Promise<void> {
    // Let a start in flight finish first, or its daemon would outlive us.
    const starting = this.starting;
    this.starting = undefined;
    await starting?.catch(() => undefined);
    const languageClient = this.languageClient;
    this.memory?.dispose();
    clearInterval(this.refreshTimer);
    clearTimeout(this.refreshSoonTimer);
    this.languageClient = this.memory = undefined;
    this.lastStatus = undefined;
    if (languageClient?.needsStop()) {
      await languageClient.stop(2000).catch((error) => this.log.warn(`stopping: ${errorMessage(error)}`));
    }
  }

  async restart(): Promise<void> {
    this.log.info('settings changed: restarting the daemon');
    await this.stop();
    this.showState('starting');
    await this.client();
  }

  /** Refresh the status bar shortly, once the daemon's watcher has seen a change. */
  refreshSoon(): void {
    clearTimeout(this.refreshSoonTimer);
    this.refreshSoonTimer = setTimeout(() => void this.refreshStatus(), REFRESH_AFTER_CHANGE_MS);
  }

  /** Fetch `memory/status` into the status bar; polls while the first index is building. */
  async refreshStatus(): Promise<StatusResult | undefined> {
    if (!this.memory || this.languageClient?.state !== State.Running) {
      return undefined;
    }
    try {
      this.lastStatus = await this.memory.status();
    } catch (error) {
      this.log.warn(`memory/status failed: ${errorMessage(error)}`);
      return undefined;
    }
    this.showState('running');
    if (!this.lastStatus.ready) {
      setTimeout(() => void this.refreshStatus(), 500);
    }
    return this.lastStatus;
  }

  private showState(state: 'starting' | 'running' | 'stopped') {
    const { text, tooltip } = statusBar(state === 'running' ? this.lastStatus : undefined, state);
    this.statusItem.text = text;
    this.statusItem.tooltip = tooltip;
  }

  /** `memory/select` through the Language Model API; throwing makes the daemon fall back. */
  private async selectWithModel(params: SelectParams, token: vscode.CancellationToken): Promise<SelectResult> {
    if (!vscode.lm) {
      throw new Error('this VS Code has no Language Model API');
    }
    const selector: vscode.LanguageModelChatSelector = {};
    if (this.settings?.['languageModel.vendor']) selector.vendor = this.settings['languageModel.vendor'];
    if (this.settings?.['languageModel.family']) selector.family = this.settings['languageModel.family'];
    const [model] = await vscode.lm.selectChatModels(selector);
    if (!model) {
      throw new Error('no chat model available');
    }
    const response = await model.sendRequest(
      [vscode.LanguageModelChatMessage.User(selectPrompt(params))],
      { justification: 'Memory Recall asks a model which of your memory notes fit the request.' },
      token,
    );
    let answer = '';
    for await (const chunk of response.text) {
      answer += chunk;
    }
    return { selected: parseSelection(answer, params) };
  }

  dispose(): void {
    void this.stop();
    this.statusItem.dispose();
  }
}

async function recallCommand(daemon: Daemon, lastQuery: { value: string }): Promise<void> {
  const query = await vscode.window.showInputBox({
    title: 'Memory: Recall',
    prompt: 'What are you about to work on?',
    placeHolder: 'e.g. deploy on friday, flaky integration tests',
    value: lastQuery.value,
  });
  if (!query?.trim()) {
    return;
  }
  lastQuery.value = query;
  const memory = await daemon.client();

  type Item = vscode.QuickPickItem & { doc?: MemoryDoc };
  const pick = vscode.window.createQuickPick<Item>();
  pick.title = `Memory: ${query}`;
  pick.placeholder = 'Recalling…';
  pick.matchOnDescription = true;
  pick.matchOnDetail = true;
  pick.busy = true;
  const session = memory.start(query);
  let fast: Awaited<typeof session.fast> = null;
  const show = (refined: Awaited<typeof session.refined>) => {
    pick.items = recallRows(fast, refined).map((row): Item =>
      row.kind === 'separator'
        ? { label: row.label, kind: vscode.QuickPickItemKind.Separator }
        : { label: row.label, description: row.description, detail: row.detail, doc: row.doc },
    );
  };
  pick.onDidAccept(async () => {
    const doc = pick.selectedItems[0]?.doc;
    if (doc) {
      pick.hide();
      await vscode.window.showTextDocument(vscode.Uri.file(doc.path), { preview: true });
    }
  });
  pick.onDidHide(() => {
    session.cancel(); // closing the picker abandons a model call still running
    pick.dispose();
  });
  pick.show();
  void session.fast.then((phase) => {
    fast = phase;
    if (phase) {
      show(null);
      pick.placeholder = 'Recalling… (the model is choosing more)';
    }
  });
  const refined = await session.refined;
  if (refined) {
    show(refined);
    pick.placeholder = recallSummary(fast, refined);
  } else {
    await session.result.catch((error) => (pick.placeholder = `Recall failed: ${errorMessage(error)}`));
  }
  pick.busy = false;
}

async function openFolderCommand(daemon: Daemon): Promise<void> {
  const memory = await daemon.client();
  const status = await memory.status();
  type Item = vscode.QuickPickItem & { path: string; exists: boolean };
  const items: Item[] = status.roots.map((root) => ({
    label: root.scope === 'user' ? '$(account) User memory' : '$(repo) Project memory',
    description: root.path,
    detail: root.exists ? `${root.documents} memories` : 'does not exist yet',
    path: root.path,
    exists: root.exists,
  }));
  const chosen = items.length === 1 ? items[0] : await vscode.window.showQuickPick(items, { title: 'Memory: Open Memory Folder' });
  if (!chosen) {
    return;
  }
  const uri = vscode.Uri.file(chosen.path);
  if (!chosen.exists) {
    const create = await vscode.window.showInformationMessage(`${chosen.path} does not exist. Create it?`, 'Create');
    if (!create) {
      return;
    }
    await vscode.workspace.fs.createDirectory(uri);
  }
  await vscode.commands.executeCommand('vscode.openFolder', uri, { forceNewWindow: true });
}

const isMarkdown = (uri: vscode.Uri) => uri.path.toLowerCase().endsWith('.md');

let running: Daemon | undefined;

export function activate(context: vscode.ExtensionContext): MemoryRecallApi {
  const log = vscode.window.createOutputChannel('Memory Recall', { log: true });
  const daemon = (running = new Daemon(log));
  const lastQuery = { value: '' };

  let statusText = '';
  const statusChanged = new vscode.EventEmitter<vscode.Uri>();
  let restartTimer: NodeJS.Timeout | undefined;
  const restartSoon = () => {
    clearTimeout(restartTimer); // one restart for a burst of edits to settings.json
    restartTimer = setTimeout(() => daemon.restart().catch((error) => log.error(errorMessage(error))), 300);
  };

  context.subscriptions.push(
    log,
    daemon,
    statusChanged,
    vscode.workspace.registerTextDocumentContentProvider('memory-recall', {
      onDidChange: statusChanged.event,
      provideTextDocumentContent: () => statusText,
    }),
    vscode.commands.registerCommand('memoryRecall.recall', () =>
      recallCommand(daemon, lastQuery).catch((error) => vscode.window.showErrorMessage(`Memory: ${errorMessage(error)}`)),
    ),
    vscode.commands.registerCommand('memoryRecall.openFolder', () =>
      openFolderCommand(daemon).catch((error) => vscode.window.showErrorMessage(`Memory: ${errorMessage(error)}`)),
    ),
    vscode.commands.registerCommand('memoryRecall.showStatus', async () => {
      try {
        await daemon.client();
        const status = await daemon.refreshStatus();
        statusText = status ? statusReport(status).join('\n') + '\n' : 'The memory daemon is not running.\n';
      } catch (error) {
        statusText = `The memory daemon is not running: ${errorMessage(error)}\n`;
      }
      statusChanged.fire(STATUS_URI);
      const document = await vscode.workspace.openTextDocument(STATUS_URI);
      await vscode.window.showTextDocument(document, { preview: true });
    }),
    vscode.commands.registerCommand('memoryRecall.restart', () => daemon.restart()),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (event.affectsConfiguration(SECTION)) restartSoon();
    }),
    // The default project root is <first workspace folder>/.memory.
    vscode.workspace.onDidChangeWorkspaceFolders(() => restartSoon()),
    vscode.workspace.onDidSaveTextDocument((document) => {
      if (isMarkdown(document.uri)) daemon.refreshSoon();
    }),
    vscode.workspace.onDidCreateFiles((event) => {
      if (event.files.some(isMarkdown)) daemon.refreshSoon();
    }),
    vscode.workspace.onDidDeleteFiles(() => daemon.refreshSoon()),
    vscode.window.onDidChangeWindowState((state) => {
      if (state.focused) daemon.refreshSoon();
    }),
  );

  daemon.client().catch((error) => log.error(`start failed: ${errorMessage(error)}`));

  return {
    protocolVersion: PROTOCOL_VERSION,
    async recall(query, options = {}) {
      const started = Date.now();
      const memory = await daemon.client();
      const budget = options.initialWaitMs ?? DEFAULT_INITIAL_WAIT_MS;
      return memory.recall(query, { ...options, initialWaitMs: Math.max(0, budget - (Date.now() - started)) });
    },
    async status() {
      return (await daemon.client()).status();
    },
  };
}

export function deactivate(): Promise<void> | undefined {
  // Shut the daemon down politely (shutdown + exit) before VS Code goes.
  return running?.stop();
}
