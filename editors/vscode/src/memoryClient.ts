// The wire layer: the protocol (v1 recall, v2 writes, organisation and
// extraction) over any JSON-RPC connection, with the 100 ms initial wait. It
// does not import `vscode`, so node tests drive it against the real daemon
// through vscode-jsonrpc; the extension hands it a LanguageClient, which has
// the same three methods.
import {
  CancellationToken,
  CancellationTokenSource,
  Disposable,
  ResponseError,
} from 'vscode-jsonrpc';

import type {
  CompleteParams,
  CompleteResult,
  ConsolidateParams,
  ConsolidateResult,
  ContextParams,
  ContextResult,
  ExplainParams,
  ExplainResult,
  ExtractParams,
  ExtractResult,
  FeedbackParams,
  FeedbackResult,
  ForgetParams,
  ListParams,
  ListResult,
  PhaseNotification,
  RecallParams,
  RecallResult,
  RecallTelemetry,
  SelectParams,
  SelectResult,
  RememberParams,
  SearchParams,
  SearchResult,
  StatusResult,
  TreeParams,
  TreeResult,
  UndoParams,
  UpdateParams,
  WriteResult,
} from './protocol.generated';
import { PROTOCOL_METHODS } from './protocol.generated';

/** Method names; each is checked against the schema's `x-methods` at compile time. */
export const Methods = {
  recall: 'memory/recall',
  status: 'memory/status',
  fastResult: 'memory/fastResult',
  refinedResult: 'memory/refinedResult',
  telemetry: 'telemetry/event',
  select: 'memory/select',
  remember: 'memory/remember',
  update: 'memory/update',
  forget: 'memory/forget',
  undo: 'memory/undo',
  list: 'memory/list',
  tree: 'memory/tree',
  context: 'memory/context',
  consolidate: 'memory/consolidate',
  search: 'memory/search',
  explain: 'memory/explain',
  feedback: 'memory/feedback',
  extract: 'memory/extract',
  complete: 'memory/complete',
} as const satisfies {
  recall: keyof typeof PROTOCOL_METHODS.requests;
  status: keyof typeof PROTOCOL_METHODS.requests;
  fastResult: keyof typeof PROTOCOL_METHODS.notifications;
  refinedResult: keyof typeof PROTOCOL_METHODS.notifications;
  telemetry: keyof typeof PROTOCOL_METHODS.notifications;
  select: keyof typeof PROTOCOL_METHODS.serverRequests;
  remember: keyof typeof PROTOCOL_METHODS.requests;
  update: keyof typeof PROTOCOL_METHODS.requests;
  forget: keyof typeof PROTOCOL_METHODS.requests;
  undo: keyof typeof PROTOCOL_METHODS.requests;
  list: keyof typeof PROTOCOL_METHODS.requests;
  tree: keyof typeof PROTOCOL_METHODS.requests;
  context: keyof typeof PROTOCOL_METHODS.requests;
  consolidate: keyof typeof PROTOCOL_METHODS.requests;
  search: keyof typeof PROTOCOL_METHODS.requests;
  explain: keyof typeof PROTOCOL_METHODS.requests;
  feedback: keyof typeof PROTOCOL_METHODS.requests;
  extract: keyof typeof PROTOCOL_METHODS.requests;
  complete: keyof typeof PROTOCOL_METHODS.serverRequests;
};

/** JSON-RPC / LSP error codes the client sees or sends. */
export const ErrorCode = {
  invalidParams: -32602,
  serverNotInitialized: -32002,
  requestCancelled: -32800,
  requestFailed: -32803,
} as const;

/** The host's budget before it must build the first prompt of a turn (docs/recall.md). */
export const DEFAULT_INITIAL_WAIT_MS = 100;

/**
 * The part of a JSON-RPC connection the client needs. vscode-jsonrpc's
 * MessageConnection and vscode-languageclient's LanguageClient both fit.
 */
export interface RpcConnection {
  sendRequest<R>(method: string, params: unknown, token?: CancellationToken): Promise<R>;
  onNotification(method: string, handler: (params: any) => void): Disposable;
  onRequest(method: string, handler: (params: any, token: CancellationToken) => unknown): Disposable;
}

/**
 * Answers `memory/select` (selector kind `client`): choose at most
 * `params.limit` paths from `params.candidates`. Throw (or reject) to decline;
 * the daemon then falls back to its lexical top 5.
 */
export type SelectHandler = (params: SelectParams, token: CancellationToken) => Promise<SelectResult>;

/**
 * Answers `memory/complete` (protocol v2, when the host advertised
 * `capabilities.complete`): the model's text for one judgement task
 * (`extract`, `reconcile`, `consolidate`). Throw to decline.
 */
export type CompleteHandler = (params: CompleteParams, token: CancellationToken) => Promise<CompleteResult>;

/** What the model proposed for one item of an extraction (the `extract` task's JSON). */
export interface ExtractedItem {
  title: string;
  description: string;
  type: string;
  category?: string | null;
  body: string;
  updates?: string | null;
  why?: string;
}

/** A `proposed` operation of `memory/extract {apply: false}`, with the model's text when the host saw it. */
export interface Proposal {
  operation: WriteResult['operations'][number];
  /** The item the model answered through `memory/complete`; undefined for projectInit or an http model. */
  item?: ExtractedItem;
}

/** What every write answers (a consolidation's `operations` may be absent when it did nothing). */
export type WriteLike = Pick<WriteResult, 'skipped'> & { operations?: WriteResult['operations'] } | ConsolidateResult;

/** `memory/extract`'s result, and each proposal paired with its text. */
export interface ExtractOutcome extends ExtractResult {
  proposals: Proposal[];
}

export interface RecallOptions {
  recentTools?: string[];
  excludePaths?: string[];
  /** Most documents in the refined phase (1–5). */
  limit?: number;
  /** Cancels the recall: the daemon answers -32800 and sends nothing more. */
  token?: CancellationToken;
}

export interface RecallInitialOptions extends RecallOptions {
  /** How long `recall` waits for the first phase (default 100 ms). */
  initialWaitMs?: number;
}

/** One recall in flight. Every promise settles; only `result` ever rejects. */
export interface RecallSession {
  /** The client-chosen token echoed in this recall's notifications. */
  readonly token: string;
  /** The fast phase, or null when there was none (no selector, no match, cancelled, failed). */
  readonly fast: Promise<PhaseNotification | null>;
  /** The refined phase, or null when the recall was cancelled or failed. */
  readonly refined: Promise<PhaseNotification | null>;
  /** The response, or null when cancelled; rejects with the error when the request failed. */
  readonly result: Promise<RecallResult | null>;
  /** Resolves once the recall is over (answered, failed or cancelled). */
  readonly done: Promise<void>;
  cancel(): void;
}

/** What ended the initial wait (`initial_reason` in the Python client). */
export type InitialReason = 'fast' | 'refined' | 'timeout' | 'cancelled' | 'failed';

/** What an agent gets after the initial wait (the Python client's RecallHandle). */
export interface InitialRecall {
  /** The client-chosen token of this recall (memory/explain and memory/feedback take it). */
  token: string;
  /**
   * The first of the fast result and the refined result to arrive within the
   * initial wait; null when neither did (or the recall ended without one).
   * When it is the refined phase, `refined` resolves to the same object.
   */
  initial: PhaseNotification | null;
  initialReason: InitialReason;
  /** The refined phase, or null when the recall was cancelled or failed. */
  refined: Promise<PhaseNotification | null>;
  /** The fast phase if there is one; settles no later than `refined`. */
  fast: Promise<PhaseNotification | null>;
  /** The response, or null when cancelled; rejects with the error when the request failed. */
  result: Promise<RecallResult | null>;
  cancel(): void;
}

class Deferred<T> {
  readonly promise: Promise<T>;
  resolve!: (value: T) => void;
  reject!: (reason: unknown) => void;
  constructor() {
    this.promise = new Promise<T>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    // A rejection nobody awaits (e.g. `fast` of a failed recall) is not an error here.
    this.promise.catch(() => undefined);
  }
}

class Session implements RecallSession {
  readonly fastPhase = new Deferred<PhaseNotification | null>();
  readonly refinedPhase = new Deferred<PhaseNotification | null>();
  readonly response = new Deferred<RecallResult | null>();
  readonly source = new CancellationTokenSource();
  cancelled = false;
  /** The refined phase (or the outcome) has been delivered. */
  settled = false;

  constructor(
    readonly token: string,
    private readonly forget: (token: string) => void,
  ) {}

  get fast() {
    return this.fastPhase.promise;
  }
  get refined() {
    return this.refinedPhase.promise;
  }
  get result() {
    return this.response.promise;
  }
  get done(): Promise<void> {
    return this.response.promise.then(
      () => undefined,
      () => undefined,
    );
  }

  cancel(): void {
    if (this.cancelled || this.settled) {
      return; // nothing left to cancel
    }
    this.cancelled = true;
    // Nothing more is delivered for this recall, even a notification that
    // crossed the cancel on the wire.
    this.forget(this.token);
    this.fastPhase.resolve(null);
    this.refinedPhase.resolve(null);
    this.source.cancel();
  }

  phase(note: PhaseNotification): void {
    if (note.phase === 'fast') {
      this.fastPhase.resolve(note);
    } else {
      this.settled = true;
      this.fastPhase.resolve(null); // a refined phase ends any wait for a fast one
      this.refinedPhase.resolve(note);
    }
  }

  answered(result: RecallResult): void {
    this.settled = true;
    this.forget(this.token);
    // The notifications precede the response on the wire; these only matter
    // when a notification was lost.
    this.fastPhase.resolve(null);
    this.refinedPhase.resolve(
      result.refined ? { ...result.refined, requestId: result.requestId, token: result.token } : null,
    );
    this.response.resolve(result);
  }

  failed(error: unknown): void {
    this.settled = true;
    this.forget(this.token);
    if (this.cancelled || isCancelledError(error)) {
      this.fastPhase.resolve(null);
      this.refinedPhase.resolve(null);
      this.response.resolve(null);
      return;
    }
    this.fastPhase.resolve(null);
    this.refinedPhase.resolve(null);
    this.response.reject(error);
  }
}

export function isCancelledError(error: unknown): boolean {
  return error instanceof ResponseError && error.code === ErrorCode.requestCancelled;
}

let sessionCounter = 0;

/** A protocol client on top of an RPC connection. */
export class MemoryClient implements Disposable {
  private readonly sessions = new Map<string, Session>();
  private readonly disposables: Disposable[] = [];
  private readonly phaseListeners = new Set<(note: PhaseNotification) => void>();
  private readonly telemetryListeners = new Set<(event: RecallTelemetry) => void>();
  private readonly writeListeners = new Set<(result: WriteLike, method: string) => void>();
  private readonly extractAnswerListeners = new Set<(content: string) => void>();
  /** Extractions run one at a time, so that a model answer belongs to the call it came in. */
  private extractQueue: Promise<unknown> = Promise.resolve();
  private readonly tokenPrefix = `recall-${process.pid}-${Date.now().toString(36)}-`;

  constructor(
    private readonly connection: RpcConnection,
    options: { select?: SelectHandler; complete?: CompleteHandler } = {},
  ) {
    const onPhase = (note: PhaseNotification) => {
      for (const listener of this.phaseListeners) {
        listener(note);
      }
      if (typeof note?.token === 'string') {
        this.sessions.get(note.token)?.phase(note);
      }
    };
    this.disposables.push(
      connection.onNotification(Methods.fastResult, onPhase),
      connection.onNotification(Methods.refinedResult, onPhase),
      connection.onNotification(Methods.telemetry, (event: RecallTelemetry) => {
        if (event?.event !== 'memory/recall') {
          return;
        }
        for (const listener of this.telemetryListeners) {
          listener(event);
        }
      }),
      connection.onRequest(Methods.select, (params: SelectParams, token) =>
        answerSelect(options.select, params, token),
      ),
      connection.onRequest(Methods.complete, async (params: CompleteParams, token) => {
        const result = await answerComplete(options.complete, params, token);
        if (params?.task === 'extract') {
          for (const listener of this.extractAnswerListeners) listener(result.content);
        }
        return result;
      }),
    );
  }

  /** Called with every phase notification, whichever recall it belongs to. */
  onPhase(listener: (note: PhaseNotification) => void): Disposable {
    this.phaseListeners.add(listener);
    return { dispose: () => this.phaseListeners.delete(listener) };
  }

  /** Called with the terminal `telemetry/event` of every recall. */
  onTelemetry(listener: (event: RecallTelemetry) => void): Disposable {
    this.telemetryListeners.add(listener);
    return { dispose: () => this.telemetryListeners.delete(listener) };
  }

  /** Start a recall; its phases arrive as the promises of the session. */
  start(query: string, options: RecallOptions = {}): RecallSession {
    const token = `${this.tokenPrefix}${++sessionCounter}`;
    const session = new Session(token, (t) => this.sessions.delete(t));
    this.sessions.set(token, session);
    if (options.token) {
      if (options.token.isCancellationRequested) {
        session.cancel();
      } else {
        const link = options.token.onCancellationRequested(() => session.cancel());
        void session.done.then(() => link.dispose());
      }
    }
    const params: RecallParams = { query, token };
    if (options.recentTools?.length) {
      params.recentTools = options.recentTools;
    }
    if (options.excludePaths?.length) {
      params.excludePaths = options.excludePaths;
    }
    if (options.limit !== undefined) {
      params.limit = options.limit;
    }
    request<RecallResult>(this.connection, Methods.recall, params, session.source.token).then(
      (result) => session.answered(result),
      (error) => session.failed(error),
    );
    return session;
  }

  /**
   * Recall with the initial wait: resolves, never later than `initialWaitMs`
   * (100 ms), with the first of the fast result, the refined result and the
   * end of the recall, plus promises of what follows. Never rejects: a failed
   * request shows as `initialReason: 'failed'` and a rejected `result`.
   */
  async recall(query: string, options: RecallInitialOptions = {}): Promise<InitialRecall> {
    const session = this.start(query, options);
    const waitMs = options.initialWaitMs ?? DEFAULT_INITIAL_WAIT_MS;
    let timer: NodeJS.Timeout | undefined;
    type First = [PhaseNotification | null, InitialReason];
    const timeout = new Promise<First>((resolve) => {
      timer = setTimeout(() => resolve([null, 'timeout']), waitMs);
    });
    const ended = session.result.then(
      (): First => [null, 'cancelled'], // answered without a phase notification: cancelled
      (): First => [null, 'failed'],
    );
    const phase = (note: PhaseNotification | null): First | Promise<First> =>
      note ? [note, note.phase] : ended;
    try {
      const [initial, initialReason] = await Promise.race([
        session.fast.then((fast) => (fast ? phase(fast) : session.refined.then(phase))),
        session.refined.then(phase),
        timeout,
      ]);
      return {
        token: session.token,
        initial,
        initialReason,
        refined: session.refined,
        fast: session.fast,
        result: session.result,
        cancel: () => session.cancel(),
      };
    } finally {
      clearTimeout(timer);
    }
  }

  /** Called with the result of every write this client makes (remember, forget, undo, consolidate…). */
  onWrite(listener: (result: WriteLike, method: string) => void): Disposable {
    this.writeListeners.add(listener);
    return { dispose: () => this.writeListeners.delete(listener) };
  }

  private async write<R extends WriteLike>(method: string, params: object, token?: CancellationToken): Promise<R> {
    const result = await request<R>(this.connection, method, params, token);
    for (const listener of this.writeListeners) listener(result, method);
    return result;
  }

  /** `memory/remember`: the user's explicit "remember this". */
  remember(params: RememberParams, token?: CancellationToken): Promise<WriteResult> {
    return this.write(Methods.remember, params, token);
  }

  /** `memory/update`: edit one memory (only the given fields). */
  update(params: UpdateParams, token?: CancellationToken): Promise<WriteResult> {
    return this.write(Methods.update, params, token);
  }

  /** `memory/forget`: archive a memory (`hard: true` deletes it). */
  forget(params: ForgetParams, token?: CancellationToken): Promise<WriteResult> {
    return this.write(Methods.forget, params, token);
  }

  /** `memory/undo`: put back every file one operation touched. */
  undo(params: UndoParams, token?: CancellationToken): Promise<WriteResult> {
    return this.write(Methods.undo, params, token);
  }

  /** `memory/consolidate`; with `dryRun: true` only the reports. */
  consolidate(params: ConsolidateParams = {}, token?: CancellationToken): Promise<ConsolidateResult> {
    if (params.dryRun) {
      return request<ConsolidateResult>(this.connection, Methods.consolidate, params, token);
    }
    return this.write<ConsolidateResult>(Methods.consolidate, params, token);
  }

  /** `memory/list`: memories with their flags and statistics, every page joined (the
   * daemon answers 500 at a time; `nextCursor` names the next page). */
  async list(params: ListParams = {}, token?: CancellationToken): Promise<ListResult> {
    const memories: ListResult['memories'] = [];
    let cursor = params.cursor ?? undefined;
    for (;;) {
      const page = await request<ListResult>(this.connection, Methods.list, { ...params, cursor }, token);
      memories.push(...page.memories);
      if (!page.nextCursor) {
        return { memories };
      }
      cursor = page.nextCursor;
    }
  }

  /** `memory/tree`: the topic tree with its members. */
  tree(params: TreeParams = {}, token?: CancellationToken): Promise<TreeResult> {
    return request<TreeResult>(this.connection, Methods.tree, params, token);
  }

  /** `memory/context`: the always-loaded block. */
  context(params: ContextParams = {}, token?: CancellationToken): Promise<ContextResult> {
    return request<ContextResult>(this.connection, Methods.context, params, token);
  }

  /**
   * `memory/extract`. Each `proposed` operation (apply: false, or team scope)
   * comes with the item the model answered through this client's
   * `memory/complete`, matched by title, so that a host can show it for
   * review and write it as it is or edited. Extractions are serialised.
   */
  extract(params: ExtractParams, token?: CancellationToken): Promise<ExtractOutcome> {
    const run = async (): Promise<ExtractOutcome> => {
      const answers: string[] = [];
      const listener = (content: string) => answers.push(content);
      this.extractAnswerListeners.add(listener);
      let result: ExtractResult;
      try {
        result =
          params.apply === false || params.scope === 'team'
            ? await request<ExtractResult>(this.connection, Methods.extract, params, token)
            : await this.write<ExtractResult>(Methods.extract, params, token);
      } finally {
        this.extractAnswerListeners.delete(listener);
      }
      return { ...result, proposals: pairProposals(result, answers.flatMap(extractedItems)) };
    };
    const next = this.extractQueue.then(run, run);
    this.extractQueue = next.catch(() => undefined);
    return next;
  }

  /** `memory/search`: the agent's memory tool (`shallow`, `deep`, `explore`, `get`). */
  search(params: SearchParams, token?: CancellationToken): Promise<SearchResult> {
    return request<SearchResult>(this.connection, Methods.search, params, token);
  }

  /** `memory/explain`: why a memory was (or was not) delivered by the recall `token`, or for `query`. */
  explain(params: ExplainParams, token?: CancellationToken): Promise<ExplainResult> {
    return request<ExplainResult>(this.connection, Methods.explain, params, token);
  }

  /**
   * `memory/feedback`: which delivered memories the model used. Sent as a
   * request (docs/network.md allows the notification; with an id the daemon answers
   * what it recorded, and unknown paths).
   */
  feedback(params: FeedbackParams, token?: CancellationToken): Promise<FeedbackResult> {
    return request<FeedbackResult>(this.connection, Methods.feedback, params, token);
  }

  /** `memory/status`: roots, counts, skipped files, watcher state. */
  status(token?: CancellationToken): Promise<StatusResult> {
    return request<StatusResult>(this.connection, Methods.status, {}, token);
  }

  dispose(): void {
    for (const session of [...this.sessions.values()]) {
      session.cancel();
    }
    for (const disposable of this.disposables.splice(0)) {
      disposable.dispose();
    }
  }
}

/**
 * sendRequest without a trailing `undefined`: vscode-languageclient forwards
 * its arguments as they are, and vscode-jsonrpc turns `(params, undefined)`
 * into the positional params `[params, null]`.
 */
function request<R>(connection: RpcConnection, method: string, params: object, token?: CancellationToken): Promise<R> {
  return token ? connection.sendRequest<R>(method, params, token) : connection.sendRequest<R>(method, params);
}

async function answerSelect(
  select: SelectHandler | undefined,
  params: SelectParams,
  token: CancellationToken,
): Promise<SelectResult> {
  if (!select) {
    throw new ResponseError(ErrorCode.requestFailed, 'this client has no model to select memories');
  }
  let result: SelectResult;
  try {
    result = await select(params, token);
  } catch (error) {
    if (error instanceof ResponseError) {
      throw error;
    }
    throw new ResponseError(ErrorCode.requestFailed, errorMessage(error));
  }
  if (!result || !Array.isArray(result.selected) || !result.selected.every((p) => typeof p === 'string')) {
    throw new ResponseError(ErrorCode.requestFailed, 'the selector returned no {selected: [path…]}');
  }
  return { selected: result.selected };
}

async function answerComplete(
  complete: CompleteHandler | undefined,
  params: CompleteParams,
  token: CancellationToken,
): Promise<CompleteResult> {
  if (!complete) {
    throw new ResponseError(ErrorCode.requestFailed, 'this client has no model to complete with');
  }
  let result: CompleteResult;
  try {
    result = await complete(params, token);
  } catch (error) {
    if (error instanceof ResponseError) {
      throw error;
    }
    throw new ResponseError(ErrorCode.requestFailed, errorMessage(error));
  }
  if (!result || typeof result.content !== 'string') {
    throw new ResponseError(ErrorCode.requestFailed, 'the model returned no {content: text}');
  }
  return { content: result.content };
}

/** The items of an `extract` answer (`{"memories": [...]}`); what is not that shape is left out. */
export function extractedItems(content: string): ExtractedItem[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(content);
  } catch {
    const start = content.indexOf('{');
    const end = content.lastIndexOf('}');
    try {
      parsed = start >= 0 && end > start ? JSON.parse(content.slice(start, end + 1)) : undefined;
    } catch {
      parsed = undefined;
    }
  }
  const memories = (parsed as { memories?: unknown } | undefined)?.memories;
  if (!Array.isArray(memories)) {
    return [];
  }
  return memories.filter(
    (m): m is ExtractedItem =>
      !!m && typeof m === 'object' && typeof m.title === 'string' && typeof m.body === 'string',
  );
}

const normalTitle = (title: string) => title.normalize('NFC').replace(/\s+/g, ' ').trim().toLowerCase();

/** Pair each proposed operation with the model's item of the same title (each item used once). */
export function pairProposals(result: WriteResult, items: ExtractedItem[]): Proposal[] {
  const free = [...items];
  return result.operations
    .filter((operation) => operation.action === 'proposed')
    .map((operation) => {
      const at = free.findIndex((item) => normalTitle(item.title) === normalTitle(operation.title));
      const item = at >= 0 ? free.splice(at, 1)[0] : undefined;
      return item ? { operation, item } : { operation };
    });
}

export function errorMessage(error: unknown): string {
  if (error instanceof Error) {
    return error.message || error.name;
  }
  return String(error);
}

/**
 * The operations this window's writes made, newest last, for "Undo last
 * memory change". Undos themselves are not recorded, so undoing again walks
 * further back; proposals and `unchanged` answers changed nothing to undo.
 */
export class OperationHistory {
  private readonly operations: { operation: string; title: string }[] = [];

  constructor(private readonly capacity = 100) {}

  record(result: WriteLike, method: string): void {
    if (method === Methods.undo) {
      return;
    }
    for (const op of result.operations ?? []) {
      if (op.action === 'proposed' || op.action === 'unchanged') continue;
      if (this.operations.some((known) => known.operation === op.operation)) continue;
      this.operations.push({ operation: op.operation, title: op.title });
    }
    this.operations.splice(0, Math.max(0, this.operations.length - this.capacity));
  }

  /** The newest operation not yet undone, or undefined. */
  peek(): { operation: string; title: string } | undefined {
    return this.operations.at(-1);
  }

  /** Forget the newest (it has been undone, or cannot be). */
  drop(operation: string): void {
    const at = this.operations.findIndex((known) => known.operation === operation);
    if (at >= 0) this.operations.splice(at, 1);
  }

  get size(): number {
    return this.operations.length;
  }
}
