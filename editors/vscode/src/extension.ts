// The VS Code side: starts the daemon through vscode-languageclient, the
// commands, the status bar, `memory/select` through the Language Model API,
// and the API other extensions (agents) call. Everything about the wire is
// in memoryClient.ts; what the user sees is shaped in present.ts.
import * as vscode from 'vscode';
import { LanguageClient, LanguageClientOptions, ServerOptions, State } from 'vscode-languageclient/node';

import {
  DEFAULT_INITIAL_WAIT_MS,
  errorMessage,
  ExtractOutcome,
  InitialRecall,
  MemoryClient,
  OperationHistory,
  RecallInitialOptions,
} from './memoryClient';
import { COMMAND_SETTING, findExecutable, installGuide, missingDaemonMessage, startFailedMessage } from './install';
import { registerMemoryTools } from './lmTools';
import { completionMessages, parseSelection, selectPrompt } from './modelSelect';
import { explainReport, recallRows, recallSummary, statusBar, statusReport } from './present';
import type {
  CompleteParams,
  CompleteResult,
  ContextParams,
  ContextResult,
  ExplainParams,
  ExplainResult,
  ExtractParams,
  FeedbackParams,
  FeedbackResult,
  MemoryDoc,
  RememberParams,
  SearchParams,
  SearchResult,
  SelectParams,
  SelectResult,
  StatusResult,
  WriteResult,
} from './protocol.generated';
import { PROTOCOL_VERSION } from './protocol.generated';
import { daemonLaunch, readSettings, SECTION, Settings } from './settings';
import {
  consolidateCommand,
  contextCommand,
  forgetCommand,
  MemoryTreeProvider,
  pinCommand,
  rememberCommand,
  ReviewDecision,
  reviewProposals,
  undoLast,
  WriteHost,
} from './writeCommands';

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
  /** `memory/remember`: write a memory now (the quality gate and conflict detection apply). */
  remember(params: RememberParams): Promise<WriteResult>;
  /**
   * `memory/extract`. With `apply: false` (or scope `team`) nothing is
   * written: each proposal is shown to the user for review (accept / edit /
   * reject) unless `review: false`; `reviewed` resolves with the decisions.
   * The host's model (VS Code's language model) answers the daemon's
   * `memory/complete`, so the proposals carry the model's text.
   */
  extract(params: ExtractParams, options?: { review?: boolean }): Promise<ExtractOutcome & { reviewed?: Promise<ReviewDecision[]> }>;
  /** `memory/context`: the always-loaded memories as one prompt block. */
  context(params?: ContextParams): Promise<ContextResult>;
  /** `memory/search`: `shallow` (titles, descriptions), `deep` (bodies + network), `explore` (a topic subtree), `get` (by path). */
  search(params: SearchParams): Promise<SearchResult>;
  /** `memory/explain`: why a memory was or was not delivered by the recall `token` (a phase's `token`), or for a `query`. */
  explain(params: ExplainParams): Promise<ExplainResult>;
  /** `memory/feedback`: which delivered memories the model used (`token` of the recall); feeds retention and co-use links. */
  feedback(params: FeedbackParams): Promise<FeedbackResult>;
}

const EXPLAIN_URI = vscode.Uri.parse('memory-recall:Why%20this%20memory.md');

/** The memories the last recall of this window delivered, for Explain. */
interface LastRecall {
  token: string;
  docs: MemoryDoc[];
}

const STATUS_URI = vscode.Uri.parse('memory-recall:Memory%20Status');
// `.md`, so that VS Code shows it as markdown.
const INSTALL_URI = vscode.Uri.parse('memory-recall:Install%20memory-recall.md');
const OPEN_SETTINGS = 'Open Settings';
const SHOW_INSTALL = 'Show install instructions';

/** The daemon could not be started; the user has been told (once). */
class DaemonUnavailable extends Error {}
// The daemon has no status notification: the status bar asks after each
// recall, after a markdown file is saved, created or deleted here, when the
// window gets focus, and every 30 s (for changes made elsewhere).
const STATUS_REFRESH_MS = 30_000;
const REFRESH_AFTER_CHANGE_MS = 500; // the daemon's watcher reacts within ~100 ms

const currentSettings = () => readSettings((key, fallback) => vscode.workspace.getConfiguration(SECTION).get(key, fallback));

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
  /** What the last start failure told the user, so that retries do not repeat it. */
  private reported: string | undefined;
  /** The daemon command that was not found at the last start, if it was not. */
  missingCommand: string | undefined;
  /** This window's memory changes, for Undo (kept across daemon restarts). */
  readonly history = new OperationHistory();
  /** Called after every write (the tree view refreshes). */
  onChanged: () => void = () => undefined;
  /** The last recall that delivered something (the Recall command's or an agent's). */
  lastRecall: LastRecall | undefined;
  /** Queries by recall token (the phases do not repeat the query), the last few. */
  readonly queries = new Map<string, string>();
  noteQuery(token: string, query: string): void {
    this.queries.set(token, query);
    for (const key of this.queries.keys()) {
      if (this.queries.size <= 20) break;
      this.queries.delete(key);
    }
  }

  constructor(
    readonly log: vscode.LogOutputChannel,
    private readonly repositoryUrl: string | undefined,
  ) {
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
    const settings = currentSettings();
    this.settings = settings;
    const folders = (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file').map((f) => f.uri.fsPath);
    const launch = daemonLaunch(settings, { workspaceFolder: folders[0], workspaceFolders: folders });
    for (const problem of launch.problems) {
      this.log.warn(problem);
      void vscode.window.showWarningMessage(`Memory Recall: ${problem}`);
    }
    const env = { ...process.env, ...launch.env };
    // Checked before vscode-languageclient spawns it: its own "couldn't create
    // connection" notification cannot be turned off, and says nothing useful.
    if (!findExecutable(launch.command, env)) {
      this.showState('stopped');
      this.missingCommand = launch.command;
      this.reportFailure(missingDaemonMessage(launch.command));
      throw new DaemonUnavailable(`${launch.command} was not found (set ${COMMAND_SETTING})`);
    }
    // No `transport`: with TransportKind.stdio the client would append
    // `--stdio` to the arguments, which `memory-recall serve` rejects.
    const serverOptions: ServerOptions = {
      command: launch.command,
      args: launch.args,
      options: { cwd: folders[0], env },
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
      complete: (params, token) => this.completeWithModel(params, token),
    });
    memory.onPhase((note) => {
      if (typeof note.token !== 'string' || !note.docs.length) return;
      const same = this.lastRecall?.token === note.token;
      const docs = same ? [...this.lastRecall!.docs, ...note.docs.filter((d) => !this.lastRecall!.docs.some((k) => k.path === d.path))] : note.docs;
      this.lastRecall = { token: note.token, docs };
    });
    memory.onWrite((result, method) => {
      this.history.record(result, method);
      this.onChanged();
      this.refreshSoon();
    });
    memory.onTelemetry(() => void this.refreshStatus());
    languageClient.onDidChangeState((event) => {
      if (event.newState === State.Stopped) this.showState('stopped');
      if (event.newState === State.Running) void this.refreshStatus();
    });
    this.languageClient = languageClient;
    this.memory = memory;
    this.log.info(`starting ${launch.command} ${launch.args.join(' ')} (roots: ${
      launch.initializationOptions.roots?.map((r) => r.path).join(', ') ?? "the daemon's defaults"
    })`);
    try {
      await languageClient.start();
    } catch (error) {
      this.showState('stopped');
      memory.dispose();
      this.languageClient = this.memory = undefined;
      this.reportFailure(startFailedMessage(launch.command, errorMessage(error)));
      throw new DaemonUnavailable(errorMessage(error));
    }
    this.reported = this.missingCommand = undefined; // a later failure is news again
    this.refreshTimer = setInterval(() => void this.refreshStatus(), STATUS_REFRESH_MS);
    void this.refreshStatus();
    return memory;
  }

  /**
   * Tell the user why the daemon is not running, with the two ways out. Shown
   * once per distinct failure: the retries behind every recall and status
   * refresh only log. `again` (an explicit command by the user) shows it anyway.
   */
  reportFailure(message: string | undefined = this.reported, again = false): void {
    if (!message || (message === this.reported && !again)) {
      return;
    }
    this.reported = message;
    this.log.error(message);
    void vscode.window.showErrorMessage(message, OPEN_SETTINGS, SHOW_INSTALL).then((choice) => {
      if (choice === OPEN_SETTINGS) {
        void vscode.commands.executeCommand('workbench.action.openSettings', COMMAND_SETTING);
      } else if (choice === SHOW_INSTALL) {
        void vscode.commands.executeCommand('memoryRecall.showInstallInstructions');
      }
    });
  }

  /** The install instructions, for the command actually configured. */
  installGuide(): string[] {
    return installGuide(this.missingCommand ?? currentSettings()['server.command'], this.repositoryUrl);
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

  async restart(why: string): Promise<void> {
    this.log.info(`${why}: restarting the daemon`);
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

  /** The configured chat model of the Language Model API; throws when there is none. */
  private async chatModel(): Promise<vscode.LanguageModelChat> {
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
    return model;
  }

  private async ask(messages: vscode.LanguageModelChatMessage[], justification: string, token: vscode.CancellationToken): Promise<string> {
    const model = await this.chatModel();
    const response = await model.sendRequest(messages, { justification }, token);
    let answer = '';
    for await (const chunk of response.text) {
      answer += chunk;
    }
    return answer;
  }

  /** `memory/select` through the Language Model API; throwing makes the daemon fall back. */
  private async selectWithModel(params: SelectParams, token: vscode.CancellationToken): Promise<SelectResult> {
    const answer = await this.ask(
      [vscode.LanguageModelChatMessage.User(selectPrompt(params))],
      'Memory Recall asks a model which of your memory notes fit the request.',
      token,
    );
    return { selected: parseSelection(answer, params) };
  }

  /**
   * `memory/complete` through the Language Model API. Its chat messages have
   * no system role: the system text leads the first user message. The daemon
   * validates the answer against `responseSchema` itself.
   */
  private async completeWithModel(params: CompleteParams, token: vscode.CancellationToken): Promise<CompleteResult> {
    const answer = await this.ask(
      completionMessages(params).map((m) =>
        m.role === 'assistant' ? vscode.LanguageModelChatMessage.Assistant(m.content) : vscode.LanguageModelChatMessage.User(m.content),
      ),
      `Memory Recall asks a model to ${params.task === 'extract' ? 'propose memories from your session' : `${params.task} memory notes`}.`,
      token,
    );
    return { content: answer };
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
  daemon.noteQuery(session.token, query);
  let fast: Awaited<typeof session.fast> = null;
  const explainButton: vscode.QuickInputButton = { iconPath: new vscode.ThemeIcon('question'), tooltip: 'Why was this memory delivered?' };
  const show = (refined: Awaited<typeof session.refined>) => {
    pick.items = recallRows(fast, refined).map((row): Item =>
      row.kind === 'separator'
        ? { label: row.label, kind: vscode.QuickPickItemKind.Separator }
        : { label: row.label, description: row.description, detail: row.detail, doc: row.doc, buttons: [explainButton] },
    );
  };
  pick.onDidTriggerItemButton(async (event) => {
    const doc = event.item.doc;
    if (!doc) return;
    await vscode.commands.executeCommand('memoryRecall.explain', { token: session.token, path: doc.path });
  });
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

/**
 * Memory: Explain — why a memory was delivered (or not): a memory of the last
 * recall, picked, or the `{token, path}` / `{query, path}` given.
 */
async function explainCommand(daemon: Daemon, show: (uri: vscode.Uri, lines: string[]) => Promise<void>, arg?: Partial<ExplainParams>): Promise<void> {
  const memory = await daemon.client();
  let params: ExplainParams | undefined = arg?.path && (arg.token !== undefined || arg.query !== undefined) ? (arg as ExplainParams) : undefined;
  if (!params) {
    const last = daemon.lastRecall;
    if (!last) {
      void vscode.window.showInformationMessage('Memory: nothing delivered in this window yet to explain; run Memory: Recall… first.');
      return;
    }
    type Item = vscode.QuickPickItem & { path: string };
    const chosen = await vscode.window.showQuickPick<Item>(
      last.docs.map((doc) => ({ label: doc.title, description: `${doc.scope} · ${doc.relativePath}`, path: doc.path })),
      { title: `Memory: Explain — delivered for ${JSON.stringify(daemon.queries.get(last.token) ?? last.token)}` },
    );
    if (!chosen) return;
    params = { token: last.token, path: chosen.path };
  }
  await show(EXPLAIN_URI, explainReport(await memory.explain(params)));
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
  const repository = context.extension?.packageJSON?.repository;
  const daemon = (running = new Daemon(log, typeof repository === 'string' ? repository : repository?.url));
  const lastQuery = { value: '' };

  const documents = new Map<string, string>(); // memory-recall: URI → text
  const documentChanged = new vscode.EventEmitter<vscode.Uri>();
  const showDocument = async (uri: vscode.Uri, lines: string[]) => {
    documents.set(uri.toString(), lines.join('\n') + '\n');
    documentChanged.fire(uri);
    const document = await vscode.workspace.openTextDocument(uri);
    await vscode.window.showTextDocument(document, { preview: true });
  };
  // A command the user ran: a daemon that cannot start is worth telling again.
  const userCommand = (run: () => Promise<unknown>) => () =>
    run().catch((error) => {
      if (error instanceof DaemonUnavailable) daemon.reportFailure(undefined, true);
      else void vscode.window.showErrorMessage(`Memory: ${errorMessage(error)}`);
    });
  const writeHost: WriteHost = {
    client: () => daemon.client(),
    history: daemon.history,
    showDocument,
    log,
    changed: () => tree.refresh(),
  };
  const tree = new MemoryTreeProvider(writeHost);
  daemon.onChanged = () => tree.refresh();
  let restartTimer: NodeJS.Timeout | undefined;
  const restartSoon = (why: string) => {
    clearTimeout(restartTimer); // one restart for a burst of edits to settings.json
    restartTimer = setTimeout(() => daemon.restart(why).catch((error) => log.error(errorMessage(error))), 300);
  };

  context.subscriptions.push(
    log,
    daemon,
    documentChanged,
    vscode.workspace.registerTextDocumentContentProvider('memory-recall', {
      onDidChange: documentChanged.event,
      provideTextDocumentContent: (uri) => documents.get(uri.toString()) ?? '',
    }),
    vscode.commands.registerCommand('memoryRecall.recall', userCommand(() => recallCommand(daemon, lastQuery))),
    vscode.commands.registerCommand('memoryRecall.openFolder', userCommand(() => openFolderCommand(daemon))),
    vscode.commands.registerCommand('memoryRecall.showStatus', async () => {
      let lines: string[];
      try {
        await daemon.client();
        const status = await daemon.refreshStatus();
        lines = status ? statusReport(status) : ['The memory daemon is not running.'];
      } catch (error) {
        lines = [`The memory daemon is not running: ${errorMessage(error)}`, ''];
        if (daemon.missingCommand) lines.push(...daemon.installGuide());
      }
      await showDocument(STATUS_URI, lines);
    }),
    vscode.commands.registerCommand('memoryRecall.showInstallInstructions', () => showDocument(INSTALL_URI, daemon.installGuide())),
    vscode.commands.registerCommand('memoryRecall.restart', userCommand(() => daemon.restart('restart requested'))),
    vscode.window.registerTreeDataProvider('memoryRecall.memories', tree),
    vscode.commands.registerCommand('memoryRecall.remember', userCommand(() => rememberCommand(writeHost))),
    vscode.commands.registerCommand('memoryRecall.forget', (arg?: unknown) => userCommand(() => forgetCommand(writeHost, arg as any))()),
    vscode.commands.registerCommand('memoryRecall.undo', userCommand(() => undoLast(writeHost))),
    vscode.commands.registerCommand('memoryRecall.consolidate', userCommand(() => consolidateCommand(writeHost))),
    vscode.commands.registerCommand('memoryRecall.showContext', userCommand(() => contextCommand(writeHost))),
    vscode.commands.registerCommand('memoryRecall.pin', (arg?: unknown) => userCommand(() => pinCommand(writeHost, arg as any, true))()),
    vscode.commands.registerCommand('memoryRecall.unpin', (arg?: unknown) => userCommand(() => pinCommand(writeHost, arg as any, false))()),
    vscode.commands.registerCommand('memoryRecall.refreshMemories', () => tree.refresh()),
    vscode.commands.registerCommand('memoryRecall.explain', (arg?: Partial<ExplainParams>) =>
      userCommand(() => explainCommand(daemon, showDocument, arg))(),
    ),
    vscode.commands.registerCommand('memoryRecall.openMemory', (arg?: { path?: string }) =>
      arg?.path ? vscode.window.showTextDocument(vscode.Uri.file(arg.path), { preview: true }) : undefined,
    ),
    vscode.commands.registerCommand(
      'memoryRecall.proposeProjectMemory',
      userCommand(async () => {
        const params: ExtractParams = { trigger: 'projectInit', apply: false };
        const outcome = await (await daemon.client()).extract(params);
        if (!outcome.proposals.length) {
          void vscode.window.showInformationMessage(`Memory: nothing to propose${outcome.skipped.length ? ` (${outcome.skipped.map((s) => s.message).join('; ')})` : ''}.`);
          return;
        }
        await reviewProposals(writeHost, params, outcome);
      }),
    ),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (event.affectsConfiguration(SECTION)) restartSoon('settings changed');
    }),
    // Every folder's .memory is a project root: a new daemon for the new set
    // (its index is built again; a recall meanwhile waits for it).
    vscode.workspace.onDidChangeWorkspaceFolders(() => restartSoon('workspace folders changed')),
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

  context.subscriptions.push(...registerMemoryTools(() => daemon.client()));

  daemon.client().catch((error) => log.error(`start failed: ${errorMessage(error)}`));

  return {
    protocolVersion: PROTOCOL_VERSION,
    async recall(query, options = {}) {
      const started = Date.now();
      const memory = await daemon.client();
      const budget = options.initialWaitMs ?? DEFAULT_INITIAL_WAIT_MS;
      const recalled = await memory.recall(query, { ...options, initialWaitMs: Math.max(0, budget - (Date.now() - started)) });
      daemon.noteQuery(recalled.token, query);
      return recalled;
    },
    async search(params) {
      return (await daemon.client()).search(params);
    },
    async explain(params) {
      return (await daemon.client()).explain(params);
    },
    async feedback(params) {
      return (await daemon.client()).feedback(params);
    },
    async status() {
      return (await daemon.client()).status();
    },
    async remember(params) {
      return (await daemon.client()).remember(params);
    },
    async extract(params, options = {}) {
      const outcome = await (await daemon.client()).extract(params);
      if (options.review === false || !outcome.proposals.length) {
        return outcome;
      }
      const reviewed = reviewProposals(writeHost, params, outcome);
      reviewed.catch((error) => log.error(`reviewing proposals: ${errorMessage(error)}`));
      return { ...outcome, reviewed };
    },
    async context(params = {}) {
      return (await daemon.client()).context(params);
    },
  };
}

export function deactivate(): Promise<void> | undefined {
  // Shut the daemon down politely (shutdown + exit) before VS Code goes.
  return running?.stop();
}
