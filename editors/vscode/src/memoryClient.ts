// The wire layer: protocol v1 over any JSON-RPC connection, with the 100 ms
// initial wait. It does not import `vscode`, so node tests drive it against
// the real daemon through vscode-jsonrpc; the extension hands it a
// LanguageClient, which has the same three methods.
import {
  CancellationToken,
  CancellationTokenSource,
  Disposable,
  ResponseError,
} from 'vscode-jsonrpc';

import type {
  PhaseNotification,
  RecallParams,
  RecallResult,
  RecallTelemetry,
  SelectParams,
  SelectResult,
  StatusResult,
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
} as const satisfies {
  recall: keyof typeof PROTOCOL_METHODS.requests;
  status: keyof typeof PROTOCOL_METHODS.requests;
  fastResult: keyof typeof PROTOCOL_METHODS.notifications;
  refinedResult: keyof typeof PROTOCOL_METHODS.notifications;
  telemetry: keyof typeof PROTOCOL_METHODS.notifications;
  select: keyof typeof PROTOCOL_METHODS.serverRequests;
};

/** JSON-RPC / LSP error codes the client sees or sends. */
export const ErrorCode = {
  invalidParams: -32602,
  serverNotInitialized: -32002,
  requestCancelled: -32800,
  requestFailed: -32803,
} as const;

/** The host's budget before it must build the first prompt of a turn (SPEC §4). */
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

/** A protocol v1 client on top of an RPC connection. */
export class MemoryClient implements Disposable {
  private readonly sessions = new Map<string, Session>();
  private readonly disposables: Disposable[] = [];
  private readonly phaseListeners = new Set<(note: PhaseNotification) => void>();
  private readonly telemetryListeners = new Set<(event: RecallTelemetry) => void>();
  private readonly tokenPrefix = `recall-${process.pid}-${Date.now().toString(36)}-`;

  constructor(
    private readonly connection: RpcConnection,
    options: { select?: SelectHandler } = {},
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

export function errorMessage(error: unknown): string {
  if (error instanceof Error) {
    return error.message || error.name;
  }
  return String(error);
}
