// The vscode-free pieces of the write side: the Memories tree's shape and
// marks, the undo history, memory/complete's messages for a chat API without
// a system role, and the consolidation and write summaries.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { OperationHistory } from '../src/memoryClient';
import { memoryItem, memoryTree, staleReasons } from '../src/memoryTree';
import { completionMessages } from '../src/modelSelect';
import { consolidationCounts, consolidationReport, explainReport, writeSummary } from '../src/present';
import type { ConsolidateResult, ExplainResult, ListedMemory, TreeResult } from '../src/protocol.generated';
import { schemaValidator } from './schema';

const validate = schemaValidator();

const listed = (path: string, extra: Partial<ListedMemory> = {}): ListedMemory => ({
  path, relativePath: path.slice(3), scope: 'project', type: 'project', title: path, description: '', category: null,
  pinned: false, always: false, created: null, updated: null, expires: null, contentHash: 'h', mtimeMs: 0,
  stats: { writes: 0, delivered: 0, lastDeliveredMs: null, createdMs: null, updatedMs: null }, ...extra,
});
const member = (path: string, title: string) => ({ path, relativePath: path.slice(3), scope: 'project' as const, title, source: 'inferred' as const });

describe('the Memories tree', () => {
  const tree: TreeResult = {
    total: 3,
    categories: [
      { slug: 'user', label: 'User preferences', count: 0, members: [], children: [{ slug: 'user/tooling', label: 'Tooling', count: 0, members: [], children: [] }] },
      {
        slug: 'lessons', label: 'Lessons learned', count: 3, members: [member('/m/z.md', 'Zebra')],
        children: [
          { slug: 'lessons/errors', label: 'Errors and fixes', count: 2, members: [member('/m/b.md', 'Beta'), member('/m/a.md', 'Alpha')], children: [] },
          { slug: 'lessons/incidents', label: 'Incidents', count: 0, members: [], children: [] },
        ],
      },
    ],
  };
  const dryRun: ConsolidateResult = {
    dryRun: true,
    reports: [{ root: '/m', scope: 'project', capacity: 300, before: 3, after: 3, operation: null, merges: [], supersessions: [], archived: [], pairsJudged: 0, elapsedMs: {},
      notices: [{ path: '/m/a.md', kind: 'stale', reason: 'cites src/x.ts, which no longer exists' }, { path: '/m/b.md', kind: 'protected', reason: 'pinned' }] }],
  };

  test('empty categories are left out; subcategories first, members by title', () => {
    const list = { memories: [listed('/m/a.md'), listed('/m/b.md', { pinned: true, expires: '2020-01-01' }), listed('/m/z.md')] };
    const [lessons, ...rest] = memoryTree(tree, list, staleReasons(list.memories, dryRun, '2025-06-01'));
    assert.equal(rest.length, 0);
    assert.equal(lessons.label, 'Lessons learned');
    const [errors, zebra] = lessons.children;
    assert.equal(errors.kind, 'category');
    assert.equal(zebra.kind === 'memory' && zebra.title, 'Zebra');
    const [alpha, beta] = errors.kind === 'category' ? errors.children : [];
    assert.equal(alpha.kind === 'memory' && alpha.stale, 'cites src/x.ts, which no longer exists');
    assert.equal(beta.kind === 'memory' && beta.stale, 'expired on 2020-01-01');
    assert.ok(beta.kind === 'memory' && beta.pinned);
  });

  test('marks in the description and the context value that picks the menu', () => {
    const base = { kind: 'memory' as const, path: '/m/a.md', relativePath: 'a.md', scope: 'team' as const, title: 'A', category: 'x', pinned: false, always: false };
    assert.deepEqual(
      [memoryItem(base), memoryItem({ ...base, pinned: true }), memoryItem({ ...base, stale: 'gone' }), memoryItem({ ...base, pinned: true, always: true, stale: 'gone' })].map((i) => [i.contextValue, i.description, i.icon]),
      [
        ['memory', 'team', 'note'],
        ['memory.pinned', 'team · pinned', 'pinned'],
        ['memory.stale', 'team · stale', 'warning'],
        ['memory.pinned.stale', 'team · pinned · always loaded · stale', 'warning'],
      ],
    );
    assert.match(memoryItem({ ...base, stale: 'cites gone.ts' }).tooltip, /May be outdated: cites gone\.ts/);
  });
});

describe('the undo history', () => {
  const op = (operation: string, action: any, title = operation) => ({ operation, action, path: `/m/${title}.md`, scope: 'project' as const, title });
  test('newest first; undos, proposals and unchanged answers are not recorded', () => {
    const history = new OperationHistory(3);
    history.record({ operations: [op('op-1', 'created')], skipped: [] }, 'memory/remember');
    history.record({ operations: [op('op-2', 'merged'), op('op-2', 'archived', 'other')], skipped: [] }, 'memory/consolidate');
    history.record({ operations: [op('op-3', 'proposed'), op('op-4', 'unchanged')], skipped: [] }, 'memory/extract');
    history.record({ operations: [op('op-5', 'updated')], skipped: [] }, 'memory/undo');
    assert.equal(history.size, 2);
    assert.equal(history.peek()?.operation, 'op-2');
    history.drop('op-2');
    assert.equal(history.peek()?.operation, 'op-1');
    for (const id of ['a', 'b', 'c', 'd']) history.record({ operations: [op(id, 'created')], skipped: [] }, 'memory/remember');
    assert.equal(history.size, 3);
  });
});

describe("memory/complete's messages", () => {
  test('system text leads the next user turn; the schema request ends the last', () => {
    const messages = completionMessages({
      task: 'extract', maxTokens: 100, responseSchema: { type: 'object' },
      messages: [{ role: 'system', content: 'You curate.' }, { role: 'user', content: 'Transcript.' }, { role: 'assistant', content: 'Ok.' }, { role: 'user', content: 'Go.' }],
    });
    assert.deepEqual(messages.map((m) => m.role), ['user', 'assistant', 'user']);
    assert.equal(messages[0].content, 'You curate.\n\nTranscript.');
    assert.match(messages[2].content, /^Go\.\n\nAnswer with one JSON value only, no prose, that satisfies this JSON Schema:\n\{"type":"object"\}$/);
  });
  test('a conversation ending with the model gets the request as a new user turn', () => {
    const messages = completionMessages({ task: 'reconcile', maxTokens: 1, responseSchema: {}, messages: [{ role: 'system', content: 'S' }, { role: 'user', content: 'U' }, { role: 'assistant', content: 'A' }] });
    assert.deepEqual(messages.map((m) => m.role), ['user', 'assistant', 'user']);
    assert.match(messages[2].content, /^Answer with one JSON value only/);
    assert.deepEqual(completionMessages({ task: 'consolidate', maxTokens: 1, responseSchema: {}, messages: [{ role: 'system', content: 'S' }] }).map((m) => m.content.split('\n')[0]), ['S']);
  });
});

describe('write and consolidation summaries', () => {
  test('what was written, or why nothing was', () => {
    assert.deepEqual(writeSummary({ operations: [{ operation: 'o', action: 'created', path: '/m/a.md', scope: 'project', title: 'A', reason: null }], skipped: [] }, 'Remembered'), { text: 'Remembered "A" (created).', ok: true });
    assert.deepEqual(writeSummary({ operations: [], skipped: [{ reason: 'size', message: 'empty' }] }, 'Remembered'), { text: 'Nothing was written (size: empty).', ok: false });
  });
  test('a dry run report lists the plan, the counts add up', () => {
    const result: ConsolidateResult = {
      dryRun: true,
      reports: [{ root: '/m', scope: 'project', capacity: 2, before: 3, after: 2, operation: null, pairsJudged: 3, elapsedMs: {},
        merges: [{ into: '/m/a.md', mergedFrom: ['/m/b.md'], addedLines: 1 }], supersessions: [],
        archived: [{ path: '/m/b.md', cause: 'merged', reason: 'merged into a.md' }], notices: [] }],
    };
    assert.deepEqual(consolidationCounts(result), { merges: 1, archived: 1, supersessions: 0, notices: 0 });
    const text = consolidationReport(result).join('\n');
    assert.match(text, /preview \(nothing changed yet\)/);
    assert.match(text, /- \/m\/b\.md → \/m\/a\.md \(1 new lines\)/);
    assert.match(text, /### Archived \(restorable\)\n\n- \/m\/b\.md — merged: merged into a\.md/);
  });
});

describe('the explanation document', () => {
  const explained: ExplainResult = {
    path: '/m/deploy.md', relativePath: 'deploy.md', title: 'Deploy freeze', found: true, query: 'deploy friday', ranker: 'bm25f',
    tokens: ['deploy', 'friday'], rank: 1, ranked: 4, score: 4313, candidate: true, excluded: false, noise: false,
    parts: [{ field: 'title', term: 'deploy', value: 3000 }, { field: 'description', term: 'friday', value: 1313 }],
    silence: { coverage: 0.9, threshold: 0.5, silenced: false }, network: null, stale: { reason: 'expired on 2020-01-01' },
    phases: [{ phase: 'fast', delivered: true, rank: 1, reason: 'top 2 of the ranker' }],
    summary: 'Delivered in the fast phase, first.',
  };
  test('the verdict, the phases, the score parts', () => {
    validate('ExplainResult', explained);
    const text = explainReport(explained).join('\n');
    assert.match(text, /^# Why: Deploy freeze\n\nDelivered in the fast phase, first\./);
    assert.match(text, /- rank: 1 of 4, score 4313/);
    assert.match(text, /- fast phase: delivered \(#1\) — top 2 of the ranker/);
    assert.match(text, /- silence rule: covers 90% of the query \(threshold 50%\)/);
    assert.match(text, /- stale: expired on 2020-01-01/);
    assert.match(text, /\| title \| deploy \| 3000 \|/);
  });
  test('a path the daemon does not serve says so', () => {
    assert.match(explainReport({ ...explained, found: false, title: null }).join('\n'), /No memory the daemon serves has the path \/m\/deploy\.md/);
  });
});
