// The wire layer against the real daemon: initialize, both phases,
// memory/select answered here, cancellation, status, schema conformance.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { CancellationToken, ResponseError } from 'vscode-jsonrpc';

import { ErrorCode, isCancelledError, Methods } from '../src/memoryClient';
import type { PhaseNotification, RecallTelemetry, SelectParams } from '../src/protocol.generated';
import { PROTOCOL_VERSION } from '../src/protocol.generated';
import { userMemoryDir } from '../src/settings';
import { DEMO_PROJECT, DEMO_ROOTS, Daemon, eventually, MANIFEST, PATIENCE_MS, sleep, startDaemon, withTimeout } from './daemon';
import { schemaValidator } from './schema';

const validate = schemaValidator();

/** Every message of `daemon` so far conforms to the schema. */
function assertConforms(daemon: Daemon) {
  for (const message of daemon.received) {
    switch (message.method) {
      case Methods.fastResult:
      case Methods.refinedResult:
        validate('PhaseNotification', message.params);
        break;
      case Methods.telemetry:
        validate('RecallTelemetry', message.params);
        break;
      case Methods.select:
        validate('SelectParams', message.params);
        break;
    }
  }
}

/** Stop `daemon`; its log must hold no traceback. */
async function stopCleanly(daemon: Daemon) {
  await daemon.stop();
  assert.doesNotMatch(daemon.stderr(), /Traceback/, daemon.stderr());
}

const DEPLOY_FREEZE = join(DEMO_PROJECT, 'deploy-freeze.md');

describe('the ranker setting', () => {
  // Every value the setting offers (package.json), and the ranker the daemon serves for it.
  const SERVED: Record<string, string> = {
    bm25f: 'bm25f',
    spec: 'spec',
    default: 'bm25f',
    indexed: 'spec',
    reference: 'spec',
  };
  const offered: string[] = MANIFEST.contributes.configuration.properties['memoryRecall.ranker'].enum.filter(
    (name: string) => name !== '',
  );

  test('offers the two rankers and the old names', () => {
    assert.deepEqual([...offered].sort(), Object.keys(SERVED).sort());
  });

  for (const name of Object.keys(SERVED)) {
    test(`${name} is served as ${SERVED[name]}`, async () => {
      const daemon = await startDaemon({ roots: DEMO_ROOTS, selector: { kind: 'none' }, watch: false, ranker: name });
      try {
        const status = await daemon.client.status();
        assert.equal(status.ranker, SERVED[name]);
        const { refined } = await daemon.client.recall('deploy freeze on friday', { initialWaitMs: PATIENCE_MS });
        const result = await refined;
        assert.equal(result?.docs[0].path, DEPLOY_FREEZE);
        assert.deepEqual(result?.docs[0].excerpt, { start: 0, end: result?.docs[0].body.length });
      } finally {
        await stopCleanly(daemon);
      }
    });
  }
});

describe('selector kind none', () => {
  let daemon: Daemon;
  before(async () => {
    daemon = await startDaemon({ roots: DEMO_ROOTS, selector: { kind: 'none' }, watch: false });
  });
  after(() => stopCleanly(daemon));

  test('initialize advertises protocol v1', () => {
    assert.equal(daemon.initializeResult.capabilities.experimental.memory.protocolVersion, PROTOCOL_VERSION);
  });

  test('no fast phase: the initial result is the refined one', async () => {
    const { initial, initialReason, refined, fast } = await daemon.client.recall('deploy freeze on friday', {
      initialWaitMs: PATIENCE_MS,
    });
    assert.ok(initial, 'a refined result within the wait');
    assert.equal(initialReason, 'refined');
    assert.equal(initial.phase, 'refined');
    assert.equal(initial.strategy, 'heuristic');
    assert.equal(initial.status, 'delivered');
    assert.equal(initial.docs[0].path, DEPLOY_FREEZE);
    assert.equal(initial.docs[0].relativePath, 'deploy-freeze.md');
    assert.match(initial.prompt, /^## Relevant memory/);
    assert.equal(await refined, initial);
    assert.equal(await fast, null);
  });

  test('excludePaths and limit are honoured', async () => {
    const session = daemon.client.start('deploy freeze on friday', { excludePaths: [DEPLOY_FREEZE], limit: 1 });
    const result = await withTimeout(session.result, PATIENCE_MS, 'recall');
    assert.ok(result);
    assert.equal(result.fast, null);
    assert.ok(result.refined);
    assert.equal(result.refined.docs.length, 1);
    assert.notEqual(result.refined.docs[0].path, DEPLOY_FREEZE);
    validate('RecallResult', result);
  });

  test('a query with nothing relevant still ends with a refined phase', async () => {
    const session = daemon.client.start('zzqx wvvy');
    const refined = await withTimeout(session.refined, PATIENCE_MS, 'refined');
    assert.ok(refined);
    assert.equal(refined.status, 'no_relevant_results');
    assert.equal(refined.strategy, 'none');
    assert.deepEqual(refined.docs, []);
  });

  test('invalid params: the wait ends "failed", the result rejects with -32602', async () => {
    // The error ends the initial wait: had the wait run out instead, the reason would be 'timeout'.
    const handle = await daemon.client.recall('x'.repeat(40_000), { initialWaitMs: PATIENCE_MS });
    assert.equal(handle.initial, null);
    assert.equal(handle.initialReason, 'failed');
    assert.equal(await handle.refined, null);
    await assert.rejects(handle.result, (error: unknown) => {
      assert.ok(error instanceof ResponseError);
      assert.equal(error.code, ErrorCode.invalidParams);
      assert.match(error.message, /query/);
      return true;
    });
  });

  test('status reports roots, counts and the watcher', async () => {
    const status = await daemon.client.status();
    validate('StatusResult', status);
    assert.equal(status.protocolVersion, PROTOCOL_VERSION);
    assert.equal(status.ready, true);
    assert.deepEqual(
      status.roots.map((r) => [r.path, r.scope, r.exists]),
      DEMO_ROOTS.map((r) => [r.path, r.scope, true]),
    );
    assert.ok(status.documents > 40, `${status.documents} documents`);
    assert.equal(status.documents, status.roots[0].documents + status.roots[1].documents);
    assert.ok(status.skipped.some((s) => s.path.endsWith('broken.md')));
    assert.equal(status.watcher.state, 'off');
    assert.equal(status.selector, 'none');
  });

  test('every message conforms to the schema', () => assertConforms(daemon));
});

describe('selector kind client', () => {
  let daemon: Daemon;
  const selectCalls: SelectParams[] = [];
  let answer: (params: SelectParams, token: CancellationToken) => Promise<{ selected: string[] }>;
  const telemetry: RecallTelemetry[] = [];
  const phases: PhaseNotification[] = [];

  before(async () => {
    daemon = await startDaemon(
      // The longest model wait the protocol allows: the test's model is never the slow part.
      { roots: DEMO_ROOTS, selector: { kind: 'client', timeoutMs: 30_000 }, watch: false },
      {
        select: (params, token) => {
          selectCalls.push(params);
          return answer(params, token);
        },
      },
    );
    daemon.client.onTelemetry((event) => telemetry.push(event));
    daemon.client.onPhase((note) => phases.push(note));
  });
  after(() => stopCleanly(daemon));

  test('fast result first, then the model choice minus the fast documents', async () => {
    let fastDocs: string[] = [];
    answer = async (params) => {
      await sleep(300); // a model round trip
      // Choose both fast documents plus two others: the fast ones must be dropped.
      const others = params.candidates.map((c) => c.path).filter((p) => !fastDocs.includes(p));
      return { selected: [...fastDocs, ...others.slice(0, 2)] };
    };
    // A long wait: the fast phase comes first by protocol, not by timing.
    const { initial, initialReason, refined } = await daemon.client.recall('deploy freeze on friday', {
      recentTools: ['mcp__github__create_issue'],
      initialWaitMs: PATIENCE_MS,
    });
    assert.ok(initial, `the fast result first (the wait ended: ${initialReason})`);
    assert.equal(initialReason, 'fast');
    assert.equal(initial.phase, 'fast');
    assert.equal(initial.strategy, 'heuristic');
    assert.ok(initial.docs.length >= 1 && initial.docs.length <= 2);
    assert.equal(initial.docs[0].path, DEPLOY_FREEZE);
    fastDocs = initial.docs.map((d) => d.path);

    const final = await withTimeout(refined, PATIENCE_MS, 'refined');
    assert.ok(final);
    assert.equal(final.phase, 'refined');
    assert.equal(final.strategy, 'model');
    assert.equal(final.status, 'delivered');
    assert.equal(final.docs.length, 2);
    assert.ok(final.docs.every((d) => !fastDocs.includes(d.path)), 'no fast document repeated');
    assert.ok(final.elapsedMs >= 300, 'the refined phase waited for the model (which takes 300 ms)');

    const params = selectCalls.at(-1)!;
    assert.equal(params.query, 'deploy freeze on friday');
    assert.equal(params.limit, 5);
    assert.deepEqual(params.recentTools, ['mcp__github__create_issue']);
    assert.ok(params.candidates.some((c) => c.path === DEPLOY_FREEZE));
  });

  test('a declined selection falls back to the lexical top 5', async () => {
    answer = async () => {
      throw new Error('no chat model available');
    };
    const session = daemon.client.start('deploy freeze on friday');
    const refined = await withTimeout(session.refined, PATIENCE_MS, 'refined');
    assert.ok(refined);
    assert.equal(refined.strategy, 'heuristic');
    assert.match(refined.failure ?? '', /no chat model available/);
    const fast = await session.fast;
    assert.ok(fast);
    assert.ok(refined.docs.every((d) => !fast.docs.some((f) => f.path === d.path)));
  });

  test('cancellation: -32800, the selection is cancelled, nothing more is sent', async () => {
    let selectAsked!: () => void;
    const selectWasAsked = new Promise<void>((done) => (selectAsked = done));
    let selectCancelled!: () => void;
    const selectWasCancelled = new Promise<void>((done) => (selectCancelled = done));
    answer = (_params, token) =>
      new Promise((_, reject) => {
        selectAsked();
        token.onCancellationRequested(() => {
          selectCancelled();
          reject(new Error('cancelled'));
        });
      });
    const session = daemon.client.start('deploy freeze on friday');
    const fast = await withTimeout(session.fast, PATIENCE_MS, 'fast');
    assert.ok(fast, 'the fast phase arrives before the model answers');
    const before = phases.length;
    // Cancelled while the model is asked: the fast result can arrive before the daemon
    // has sent memory/select, and a recall cancelled then never asks (nothing to cancel).
    await withTimeout(selectWasAsked, PATIENCE_MS, 'memory/select');

    session.cancel();
    assert.equal(await session.result, null);
    assert.equal(await session.refined, null);
    await withTimeout(selectWasCancelled, PATIENCE_MS, 'memory/select to be cancelled');
    const event = await eventually('the cancelled telemetry event', () => telemetry.find((t) => t.token === session.token));
    assert.equal(event.outcome, 'cancelled');

    // The barrier: a whole recall sent after the cancellation. The daemon reads
    // its input in order, so once this recall has ended, whatever the cancelled
    // one could still send has been sent.
    answer = async (params) => ({ selected: [params.candidates[0].path] });
    const after = daemon.client.start('deploy freeze on friday');
    assert.ok(await withTimeout(after.result, PATIENCE_MS, 'the recall after the cancellation'));
    const late = phases.slice(before).filter((p) => p.token === session.token);
    assert.deepEqual(late, [], 'no notification after the cancellation');
  });

  test('the initial wait ends at initialWaitMs; a cancel ends it too', async () => {
    answer = async () => (await sleep(100), { selected: [] });
    // A question the fast phase is silent on: the first answer is the refined phase,
    // 100 ms away, so the wait of 0 ends first however slow the machine (a fast result
    // can beat a timer of 0 when the process is descheduled).
    const late = await daemon.client.recall('zyxqv plorbix quuxan', { initialWaitMs: 0 });
    assert.equal(late.initial, null);
    assert.equal(late.initialReason, 'timeout');
    assert.equal((await late.refined)?.status, 'no_relevant_results');

    const { CancellationTokenSource } = await import('vscode-jsonrpc');
    const source = new CancellationTokenSource();
    source.cancel();
    const cancelled = await daemon.client.recall('deploy freeze on friday', { token: source.token, initialWaitMs: PATIENCE_MS });
    assert.equal(cancelled.initial, null);
    assert.equal(cancelled.initialReason, 'cancelled');
    assert.equal(await cancelled.result, null);
  });

  test('a cancelled request answers -32800 on the wire', async () => {
    answer = () => new Promise(() => undefined); // a model that never answers
    const { CancellationTokenSource } = await import('vscode-jsonrpc');
    const source = new CancellationTokenSource();
    const asked = selectCalls.length;
    const pending = daemon.connection.sendRequest(Methods.recall, { query: 'deploy freeze', token: 'raw' }, source.token);
    // Cancelled while the daemon waits for the model: memory/select has arrived.
    await eventually('memory/select', () => selectCalls.length > asked);
    source.cancel();
    await assert.rejects(withTimeout(pending, PATIENCE_MS, 'cancelled recall'), (error: unknown) => {
      assert.ok(isCancelledError(error), String(error));
      return true;
    });
  });

  test('every message conforms to the schema', () => assertConforms(daemon));
});

describe('watching', () => {
  let daemon: Daemon;
  let dir: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'memory-recall-vscode-'));
    daemon = await startDaemon({ roots: [{ path: dir, scope: 'project' }], watch: true });
  });
  after(async () => {
    await stopCleanly(daemon);
    rmSync(dir, { recursive: true, force: true });
  });

  test('a new memory file is indexed and recalled', async () => {
    let status = await daemon.client.status();
    assert.equal(status.documents, 0);
    writeFileSync(
      join(dir, 'kiwi.md'),
      '---\nname: Kiwi release train\ndescription: the kiwi train leaves on Thursdays\ntype: project\n---\nBoard it.\n',
    );
    status = await eventually('the watcher to index kiwi.md', async () => {
      const latest = await daemon.client.status();
      return latest.documents === 1 ? latest : undefined;
    });
    assert.equal(status.documents, 1);
    assert.ok(['watching', 'polling'].includes(status.watcher.state), status.watcher.state);
    const { initial } = await daemon.client.recall('kiwi train', { initialWaitMs: PATIENCE_MS });
    assert.equal(initial?.docs[0]?.title, 'Kiwi release train');
  });
});

describe('default roots', () => {
  test("the extension's user memory directory is the daemon's", async () => {
    // No workspace and no roots: the daemon's defaults are just the user root.
    const daemon = await startDaemon({ selector: { kind: 'none' }, watch: false });
    try {
      const status = await withTimeout(daemon.client.status(), PATIENCE_MS, 'status');
      assert.deepEqual(status.roots.map((r) => [r.scope, r.path]), [['user', userMemoryDir()]]);
    } finally {
      await stopCleanly(daemon);
    }
  });
});
