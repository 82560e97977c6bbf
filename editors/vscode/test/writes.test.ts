// The v2 wire layer against the real daemon: remember, update (pin), forget,
// undo, list, tree, context, consolidate (dry run, then for real, then undone),
// and extraction with the host's model answering memory/complete — proposals
// paired with the model's items, nothing written with apply: false.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ResponseError } from 'vscode-jsonrpc';

import { ErrorCode, extractedItems, Methods, pairProposals, WriteLike } from '../src/memoryClient';
import type { CompleteParams, TreeNode } from '../src/protocol.generated';
import { Daemon, startDaemon } from './daemon';
import { schemaValidator } from './schema';

const validate = schemaValidator();

/** The model the host runs: answers each `extract` task with `items`. */
const extractAnswer = (items: object[]) => JSON.stringify({ memories: items });

const PNPM = {
  title: 'Use pnpm, never npm',
  description: 'This repository installs and runs scripts with pnpm only',
  type: 'feedback',
  category: 'user/tooling',
  body: 'Always use pnpm in this repository; npm breaks the lockfile.',
  updates: null,
  why: 'the user said so twice',
};
const POSTGRES = {
  title: 'Integration tests need the local Postgres',
  description: 'Start the local Postgres before running the integration tests',
  type: 'project',
  category: 'lessons/errors',
  body: 'Integration tests fail with ECONNREFUSED 5432 unless the local Postgres container is running.',
  updates: null,
  why: 'a failure and its fix',
};

const memoryFiles = (root: string) =>
  readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.md') && e.name !== 'MEMORY.md' && !relative(root, join(e.parentPath, e.name)).split('/').some((part) => part.startsWith('.')))
    .map((e) => join(e.parentPath, e.name))
    .sort();

function members(nodes: TreeNode[]): string[] {
  return nodes.flatMap((node) => [...node.members.map((m) => m.path), ...members(node.children ?? [])]);
}

describe('writing, organising and extracting over the wire', () => {
  const workspace = mkdtempSync(join(tmpdir(), 'memory-recall-writes-'));
  const root = join(workspace, '.memory');
  const state = join(workspace, 'state');
  let daemon: Daemon;
  const completions: CompleteParams[] = [];
  let answer: (params: CompleteParams) => string = () => extractAnswer([]);
  const writes: { method: string; result: WriteLike }[] = [];

  before(async () => {
    mkdirSync(root);
    mkdirSync(state);
    // Two duplicates with the same title, written by hand (remember would merge them at once).
    const text = (extra: string) =>
      `---\nname: Release checklist\ndescription: What to check before a release\ntype: project\n---\n- tag the release\n- update the changelog\n${extra}`;
    writeFileSync(join(root, 'release-checklist-a.md'), text('- bump the version\n'));
    // Words only: a channel named `#releases` is a value, and checklists that differ by a
    // value stay two memories.
    writeFileSync(join(root, 'release-checklist-b.md'), text('- announce it in the releases channel\n'));
    writeFileSync(join(workspace, 'package.json'), JSON.stringify({ name: 'shop', scripts: { test: 'vitest run', lint: 'eslint .' } }));
    daemon = await startDaemon(
      {
        roots: [{ path: root, scope: 'project' }],
        watch: false,
        selector: { kind: 'client' },
        capabilities: { complete: true },
      },
      {
        complete: async (params) => {
          completions.push(params);
          return { content: answer(params) };
        },
        env: { MEMORY_RECALL_STATE_DIR: state },
        rootUri: `file://${workspace}`,
      },
    );
    daemon.client.onWrite((result, method) => writes.push({ method, result }));
  });
  after(async () => {
    await daemon.stop();
    assert.doesNotMatch(daemon.stderr(), /Traceback/, daemon.stderr());
    rmSync(workspace, { recursive: true, force: true });
  });

  test('remember writes a memory; list and tree show it; update pins it', async () => {
    const result = await daemon.client.remember({ text: 'The payments service deploys with Helm chart v3.2 from the release branch.' });
    validate('WriteResult', result);
    assert.deepEqual(result.operations.map((o) => o.action), ['created']);
    const path = result.operations[0].path;
    assert.ok(existsSync(path), path);
    assert.equal(writes.at(-1)?.method, 'memory/remember');

    const listed = await daemon.client.list();
    validate('ListResult', listed);
    const memory = listed.memories.find((m) => m.path === path)!;
    assert.equal(memory.pinned, false);

    const tree = await daemon.client.tree();
    validate('TreeResult', tree);
    assert.equal(tree.categories.length, 5);
    assert.ok(members(tree.categories).includes(path));

    const pinned = await daemon.client.update({ path, ifMatch: memory.contentHash, pinned: true });
    assert.deepEqual(pinned.operations.map((o) => o.action), ['updated']);
    assert.match(readFileSync(path, 'utf8'), /^pinned: true$/m);
    assert.equal((await daemon.client.list()).memories.find((m) => m.path === path)?.pinned, true);
    // The host's contentHash is stale now: the daemon refuses, nothing written.
    await assert.rejects(
      daemon.client.update({ path, ifMatch: memory.contentHash, pinned: false }),
      (e: unknown) => e instanceof ResponseError && e.code === ErrorCode.requestFailed && /changed on disk/.test(e.message),
    );
  });

  test('a credential is refused and never echoed', async () => {
    const token = `ghp_${'A1b2C3d4E5f6'.repeat(3)}`;
    const result = await daemon.client.remember({ text: `The CI token is ${token}` });
    assert.deepEqual(result.operations, []);
    assert.deepEqual(result.skipped.map((s) => s.reason), ['secret']);
    assert.ok(!JSON.stringify(result).includes(token));
  });

  test('forget archives; undo brings it back', async () => {
    const created = await daemon.client.remember({ text: 'Staging dashboards live at grafana.internal under the Shop folder.' });
    const path = created.operations[0].path;
    const forgotten = await daemon.client.forget({ path, reason: 'moved' });
    assert.deepEqual(forgotten.operations.map((o) => o.action), ['archived']);
    assert.ok(!existsSync(path));
    const undone = await daemon.client.undo({ operation: forgotten.operations[0].operation });
    assert.ok(existsSync(path));
    assert.match(undone.operations[0].reason ?? '', /undoes/);
    await assert.rejects(
      daemon.client.undo({ operation: 'op-no-such-operation' }),
      (e: unknown) => e instanceof ResponseError && e.code === ErrorCode.invalidParams,
    );
  });

  test('context holds the always-loaded memories', async () => {
    await daemon.client.remember({ text: 'Answer tersely, in English, without summaries at the end.', type: 'user', scope: 'project', always: true });
    const context = await daemon.client.context();
    validate('ContextResult', context);
    assert.match(context.prompt, /^## Always-loaded memory/);
    assert.equal(context.docs.length, 1);
    const tight = await daemon.client.context({ budgetChars: 100 });
    assert.equal(tight.docs.length, 0);
    assert.equal(tight.truncated.length, 1);
  });

  test('consolidate: the dry run changes nothing; the run is one undoable operation', async () => {
    const before = memoryFiles(root);
    const dry = await daemon.client.consolidate({ dryRun: true });
    validate('ConsolidateResult', dry);
    assert.equal(dry.dryRun, true);
    assert.deepEqual(memoryFiles(root), before);
    const planned = dry.reports.flatMap((r) => r.merges);
    assert.equal(planned.length, 1, JSON.stringify(dry.reports));
    const writesBefore = writes.length;

    const run = await daemon.client.consolidate({});
    assert.equal(run.dryRun, false);
    const operation = run.reports[0].operation!;
    assert.ok(operation);
    assert.equal(memoryFiles(root).length, before.length - 1);
    assert.equal(writes.length, writesBefore + 1);
    await daemon.client.undo({ operation });
    assert.deepEqual(memoryFiles(root), before);
  });

  test('extract with apply: false proposes the model items and writes nothing', async () => {
    answer = () => extractAnswer([PNPM, POSTGRES]);
    const before = memoryFiles(root);
    const outcome = await daemon.client.extract({
      trigger: 'sessionEnd',
      apply: false,
      transcript: [
        { role: 'user', content: 'Always use pnpm here, never npm.' },
        { role: 'assistant', content: 'Tests fail with ECONNREFUSED 5432.' },
        { role: 'user', content: 'Start postgres first.' },
      ],
    });
    const { proposals: _, ...wire } = outcome;
    validate('ExtractResult', wire);
    assert.equal(completions.at(-1)?.task, 'extract');
    validate('CompleteParams', completions.at(-1));
    assert.deepEqual(outcome.operations.map((o) => o.action), ['proposed', 'proposed']);
    assert.deepEqual(outcome.proposals.map((p) => p.item?.body), [PNPM.body, POSTGRES.body]);
    assert.deepEqual(memoryFiles(root), before);

    // Accepting one as the model wrote it is a remember of its text.
    const accepted = await daemon.client.remember({
      text: outcome.proposals[0].item!.body,
      title: PNPM.title,
      description: PNPM.description,
      type: 'feedback',
      category: PNPM.category,
    });
    assert.deepEqual(accepted.operations.map((o) => o.action), ['created']);
    assert.equal(accepted.operations[0].path, outcome.operations[0].path);
  });

  test('extract with apply: true writes through the gate', async () => {
    answer = () => extractAnswer([POSTGRES, { ...PNPM, title: 'CI token', body: `The CI token is ghp_${'Z9y8X7w6V5u4'.repeat(3)}` }]);
    const outcome = await daemon.client.extract({ trigger: 'explicit', transcript: [{ role: 'user', content: 'Remember the postgres thing.' }] });
    assert.deepEqual(outcome.operations.map((o) => o.action), ['created']);
    assert.deepEqual(outcome.skipped.map((s) => s.reason), ['secret']);
    assert.deepEqual(outcome.proposals, []);
    assert.equal(writes.at(-1)?.method, Methods.extract);
  });

  test('a model that declines is the result failure; nothing is written', async () => {
    answer = () => {
      throw new Error('no chat model available');
    };
    const before = memoryFiles(root);
    const outcome = await daemon.client.extract({ trigger: 'explicit', transcript: [{ role: 'user', content: 'Use pnpm.' }], apply: false });
    assert.match(outcome.failure ?? '', /no chat model available/);
    assert.deepEqual(outcome.operations, []);
    assert.deepEqual(memoryFiles(root), before);
  });

  test('search: shallow, deep, explore and get', async () => {
    const shallow = await daemon.client.search({ mode: 'shallow', query: 'release checklist' });
    validate('SearchResult', shallow);
    assert.ok(shallow.docs.some((d) => d.title === 'Release checklist'), JSON.stringify(shallow.docs.map((d) => d.title)));
    assert.ok(shallow.docs.every((d) => d.body === null));
    const deep = await daemon.client.search({ mode: 'deep', query: 'announce releases', limit: 3 });
    assert.ok(deep.docs.length >= 1 && deep.docs.length <= 3);
    assert.match(deep.prompt, /release/i);
    const explore = await daemon.client.search({ mode: 'explore', category: 'lessons' });
    assert.ok(explore.subtree?.slug.startsWith('lessons'));
    const path = shallow.docs.find((d) => d.title === 'Release checklist')!.path;
    const got = await daemon.client.search({ mode: 'get', path });
    assert.deepEqual(got.docs.map((d) => d.source), ['path']);
    assert.match(got.docs[0].body ?? '', /tag the release/);
    await assert.rejects(
      daemon.client.search({ mode: 'nearby' as 'get', query: 'x' }),
      (e: unknown) => e instanceof ResponseError && e.code === ErrorCode.invalidParams && /mode/.test(e.message),
    );
  });

  test('explain and feedback on a delivered memory', async () => {
    const recall = daemon.client.start('release checklist tag changelog');
    const result = (await recall.result)!;
    const delivered = [...(result.fast?.docs ?? []), ...(result.refined?.docs ?? [])];
    assert.ok(delivered.length > 0, JSON.stringify(result));
    const explained = await daemon.client.explain({ token: recall.token, path: delivered[0].path });
    validate('ExplainResult', explained);
    assert.equal(explained.found, true);
    assert.equal(explained.path, delivered[0].path);
    assert.ok(explained.phases.some((p) => p.delivered), JSON.stringify(explained.phases));
    const feedback = await daemon.client.feedback({ token: recall.token, used: [delivered[0].path], ignored: [join(root, 'no-such.md')] });
    validate('FeedbackResult', feedback);
    assert.equal(feedback.recorded, 1);
    assert.deepEqual(feedback.unknown, [join(root, 'no-such.md')]);
  });

  test('projectInit proposes the stack memory without a model', async () => {
    const count = completions.length;
    const outcome = await daemon.client.extract({ trigger: 'projectInit', apply: false });
    assert.deepEqual(outcome.operations.map((o) => o.action), ['proposed']);
    assert.equal(outcome.proposals.length, 1);
    assert.equal(outcome.proposals[0].item, undefined);
    assert.equal(completions.length, count);
    assert.ok(!existsSync(outcome.operations[0].path));
  });
});

describe('pairing proposals with the model items', () => {
  const op = (title: string, action: 'proposed' | 'created' = 'proposed') => ({ operation: 'op-1', action, path: `/m/${title}.md`, scope: 'project' as const, title });

  test('by title, whitespace and case aside, each item once', () => {
    const items = extractedItems(extractAnswer([PNPM, { ...PNPM, body: 'second' }]));
    const pairs = pairProposals(
      { operations: [op('use  pnpm, NEVER npm'), op('Use pnpm, never npm'), op('Other'), op('x', 'created')], skipped: [] },
      items,
    );
    assert.deepEqual(pairs.map((p) => p.item?.body), [PNPM.body, 'second', undefined]);
  });

  test('an answer that is not the schema pairs nothing', () => {
    assert.deepEqual(extractedItems('not json'), []);
    assert.deepEqual(extractedItems('{"memories": [{"title": 3}]}'), []);
    assert.equal(extractedItems('Sure! {"memories": [' + JSON.stringify(PNPM) + ']}').length, 1);
  });
});
