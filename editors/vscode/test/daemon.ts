// Starts the real Python daemon and connects a MemoryClient to it over
// vscode-jsonrpc, as the extension's LanguageClient would.
import { ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import {
  createMessageConnection,
  MessageConnection,
  StreamMessageReader,
  StreamMessageWriter,
} from 'vscode-jsonrpc/node';

import { CompleteHandler, MemoryClient, SelectHandler } from '../src/memoryClient';
import type { InitializationOptions } from '../src/protocol.generated';

export const REPO_ROOT = resolve(__dirname, '..', '..', '..', '..');
export const EXTENSION_DIR = join(REPO_ROOT, 'editors', 'vscode');
/** The extension's package.json, as VS Code hands it over in `context.extension.packageJSON`. */
export const MANIFEST = JSON.parse(readFileSync(join(EXTENSION_DIR, 'package.json'), 'utf8'));
export const DEMO_PROJECT = join(REPO_ROOT, 'fixtures', 'demo-memory', 'project');
export const DEMO_USER = join(REPO_ROOT, 'fixtures', 'demo-memory', 'user');
export const DEMO_ROOTS = [
  { path: DEMO_PROJECT, scope: 'project' as const },
  { path: DEMO_USER, scope: 'user' as const },
];

/**
 * The daemon command: $MEMORY_RECALL_SERVER (a JSON array, set by
 * tests/editors), else the repository's virtualenv.
 */
export function daemonCommand(): string[] {
  const fromEnv = process.env.MEMORY_RECALL_SERVER;
  if (fromEnv) {
    return JSON.parse(fromEnv) as string[];
  }
  const venvPython = join(REPO_ROOT, '.venv', 'bin', 'python');
  if (existsSync(venvPython)) {
    return [venvPython, '-m', 'memory_recall.server', 'serve'];
  }
  return ['memory-recall', 'serve'];
}

export interface Daemon {
  connection: MessageConnection;
  client: MemoryClient;
  initializeResult: any;
  stderr: () => string;
  /** Every message the daemon has sent, in order, as parsed JSON-RPC. */
  received: any[];
  stop(): Promise<void>;
}

export async function startDaemon(
  initializationOptions: InitializationOptions,
  options: { select?: SelectHandler; complete?: CompleteHandler; env?: Record<string, string>; rootUri?: string } = {},
): Promise<Daemon> {
  const [command, ...args] = daemonCommand();
  const child: ChildProcessWithoutNullStreams = spawn(command, args, {
    cwd: REPO_ROOT,
    stdio: 'pipe',
    env: { ...process.env, PYTHONUNBUFFERED: '1', ...options.env },
  });
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const connection = createMessageConnection(
    new StreamMessageReader(child.stdout),
    new StreamMessageWriter(child.stdin),
  );
  const client = new MemoryClient(connection, options);
  // A second reader on the same stdout sees every message too.
  const received: any[] = [];
  new StreamMessageReader(child.stdout).listen((message) => received.push(message));
  connection.listen();
  const initializeResult = await withTimeout(
    connection.sendRequest('initialize', {
      processId: process.pid,
      rootUri: options.rootUri ?? null,
      capabilities: {},
      initializationOptions,
    }),
    START_PATIENCE_MS,
    'the daemon to answer initialize',
  ).catch((error) => {
    child.kill('SIGKILL'); // a daemon left running would keep the test file from ending
    connection.dispose();
    throw new Error(`${error.message}\n${stderr}`);
  });
  await connection.sendNotification('initialized', {});
  return {
    connection,
    client,
    initializeResult,
    stderr: () => stderr,
    received,
    async stop() {
      client.dispose();
      try {
        await withTimeout(connection.sendRequest('shutdown'), PATIENCE_MS, 'shutdown');
        await connection.sendNotification('exit');
      } catch {
        child.kill();
      }
      await withTimeout(exited, PATIENCE_MS, 'daemon exit').catch(() => child.kill('SIGKILL'));
      connection.dispose();
    },
  };
}

/**
 * The bound of every wait for something that must happen. Generous on purpose:
 * a correct extension passes however slow a loaded machine is; only a hang (or
 * a regression) waits this long, and then fails saying what it waited for.
 * No test asserts how fast anything is (docs/editor-tests.md).
 */
export const PATIENCE_MS = 60_000;
/** A daemon start (Python imports, the first index) is the slowest thing waited for. */
export const START_PATIENCE_MS = 120_000;

export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

export const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));

/** Poll `probe` (sync or async) until it gives a truthy value; at most `ms`. */
export async function eventually<T>(
  what: string,
  probe: () => T | undefined | null | false | Promise<T | undefined | null | false>,
  ms = PATIENCE_MS,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(20);
  }
}
