// The write-side commands of the extension in a stand-in VS Code, against the
// real daemon (and vscode-languageclient): Remember…, the Memories tree (stale
// and pinned marked; open, pin, forget from its menu), Undo Last Memory
// Change, Consolidate (dry-run preview, confirm, run, undo), the always-loaded
// context, proposals of apply:false extraction reviewed (accept / edit /
// reject) with VS Code's language model answering memory/complete, and
// Propose Project Memory.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { createFakeVscode, installFakeVscode } from './fakeVscode';
import { daemonCommand, eventually, MANIFEST, PATIENCE_MS, withTimeout } from './daemon';
import type { CategoryBranch, MemoryLeaf, MemoryTreeNode } from '../src/memoryTree';

type Extension = typeof import('../src/extension');

const memoryText = (name: string, description: string, body: string, extra = '') =>
  `---\nname: ${name}\ndescription: ${description}\ntype: project\n${extra}---\n${body}\n`;

describe('the write side in a stand-in VS Code', () => {
  const [command, ...args] = daemonCommand();
  const workspace = mkdtempSync(join(tmpdir(), 'memory-recall-vscode-writes-'));
  const root = join(workspace, '.memory');
  const state = join(workspace, '.state');
  mkdirSync(root);
  mkdirSync(state);
  mkdirSync(join(workspace, 'src'));
  writeFileSync(join(workspace, 'src', 'app.ts'), 'export {};\n');
  writeFileSync(join(workspace, 'package.json'), JSON.stringify({ name: 'shop', scripts: { test: 'vitest run' } }));
  writeFileSync(
    join(root, 'refunds.md'),
    memoryText('Refund rules', 'How refunds are computed', 'Refunds are computed in `src/pay/refund.ts` from the order total.'),
  );
  const checklist = (extra: string) =>
    memoryText('Release checklist', 'What to check before a release', `- tag the release\n- update the changelog\n${extra}`);
  writeFileSync(join(root, 'release-a.md'), checklist('- bump the version'));
  // Two versions of one checklist, a merge: they differ by words only (a channel named
  // `#releases` is a value, and two checklists that differ by a value stay two memories).
  writeFileSync(join(root, 'release-b.md'), checklist('- announce it in the releases channel'));

  const memoryFiles = () =>
    readdirSync(root, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile() && e.name.endsWith('.md') && e.name !== 'MEMORY.md')
      .map((e) => relative(root, join(e.parentPath, e.name)))
      .filter((rel) => !rel.split('/').some((part) => part.startsWith('.')))
      .sort();

  const { vscode, host } = createFakeVscode(
    {
      'memoryRecall.server.command': command,
      'memoryRecall.server.args': args,
      'memoryRecall.server.env': { MEMORY_RECALL_STATE_DIR: state },
      'memoryRecall.watch': false,
      'memoryRecall.selector.kind': 'client',
    },
    workspace,
  );
  const uninstall = installFakeVscode(vscode);
  const extension: Extension = require('../src/extension');
  const context = { subscriptions: [] as { dispose(): unknown }[], extension: { packageJSON: MANIFEST } };
  let api: ReturnType<Extension['activate']>;

  const tree = () => host.treeProviders.get('memoryRecall.memories');
  async function leaves(): Promise<MemoryLeaf[]> {
    const out: MemoryLeaf[] = [];
    const walk = async (nodes: MemoryTreeNode[]) => {
      for (const node of nodes) {
        if (node.kind === 'memory') out.push(node);
        else await walk(await tree().getChildren(node));
      }
    };
    await walk(await tree().getChildren());
    return out;
  }
  const leaf = async (title: RegExp) => (await leaves()).find((l) => title.test(l.title));

  before(() => {
    api = extension.activate(context as any);
  });
  after(async () => {
    await extension.deactivate();
    context.subscriptions.forEach((d) => d.dispose());
    uninstall();
    rmSync(workspace, { recursive: true, force: true });
    assert.ok(!host.log.some((line) => line.includes('Traceback')), host.log.join('\n'));
  });

  test('the manifest contributes every command, the view and its menus', () => {
    const commands = new Set(MANIFEST.contributes.commands.map((c: { command: string }) => c.command));
    for (const id of ['remember', 'forget', 'undo', 'consolidate', 'explain', 'showContext', 'proposeProjectMemory', 'pin', 'unpin', 'openMemory', 'refreshMemories']) {
      assert.ok(commands.has(`memoryRecall.${id}`), id);
      assert.ok(host.treeProviders.size === 1 && context.subscriptions.length > 0);
    }
    assert.equal(MANIFEST.contributes.views.explorer[0].id, 'memoryRecall.memories');
    const menu = MANIFEST.contributes.menus['view/item/context'].map((m: { command: string }) => m.command);
    for (const id of ['openMemory', 'pin', 'unpin', 'forget']) assert.ok(menu.includes(`memoryRecall.${id}`), id);
  });

  test('the Memories view: the topic tree, a stale memory marked', async () => {
    const categories: CategoryBranch[] = await withTimeout(tree().getChildren(), PATIENCE_MS, 'the tree');
    assert.ok(categories.length >= 1 && categories.every((c) => c.kind === 'category' && c.count > 0));
    const refunds = (await leaf(/^Refund rules$/))!;
    assert.match(refunds.stale ?? '', /src\/pay\/refund\.ts/);
    const item = tree().getTreeItem(refunds);
    assert.equal(item.contextValue, 'memory.stale');
    assert.match(item.description, /stale/);
    assert.equal(item.iconPath.id, 'warning');
    assert.equal(item.command.command, 'memoryRecall.openMemory');
    await host.runCommand('memoryRecall.openMemory', ...item.command.arguments);
    assert.equal(host.shownDocuments.at(-1), join(root, 'refunds.md'));
    const category = tree().getTreeItem(categories[0]);
    assert.equal(category.contextValue, 'category');
  });

  test('Memory: Remember… writes the memory; the view shows it; Undo takes it back', async () => {
    host.inputBoxAnswers.push('Integration tests need the local Postgres: run `docker compose up db` first.');
    host.messageAnswers.push(undefined);
    await host.runCommand('memoryRecall.remember');
    const message = host.messages.at(-1)!;
    assert.match(message.text, /^Memory: Remembered "Integration tests need the local Postgres.*" \(created/);
    assert.deepEqual(message.buttons, ['Open', 'Undo']);
    const written = (await leaf(/^Integration tests need the local Postgres/))!;
    assert.ok(written, JSON.stringify(await leaves()));
    assert.ok(existsSync(written.path));

    await host.runCommand('memoryRecall.undo');
    assert.match(host.messages.at(-1)!.text, /^Memory: undid the change to "Integration tests/);
    assert.ok(!existsSync(written.path));
    assert.equal(await leaf(/^Integration tests need the local Postgres/), undefined);
  });

  test('a credential is refused, and nothing is written', async () => {
    const before = memoryFiles();
    host.inputBoxAnswers.push(`The deploy token is ghp_${'Q1w2E3r4T5y6'.repeat(3)}`);
    await host.runCommand('memoryRecall.remember');
    const message = host.messages.at(-1)!;
    assert.equal(message.level, 'warning');
    assert.match(message.text, /Nothing was written \(secret: /);
    assert.ok(!message.text.includes('Q1w2E3r4'));
    assert.deepEqual(memoryFiles(), before);
  });

  test('pin and unpin from the view, forget from the view and undo it', async () => {
    const refunds = (await leaf(/^Refund rules$/))!;
    host.messageAnswers.push(undefined);
    await host.runCommand('memoryRecall.pin', refunds);
    assert.match(readFileSync(refunds.path, 'utf8'), /^pinned: true$/m);
    const pinned = (await leaf(/^Refund rules$/))!;
    assert.equal(pinned.pinned, true);
    assert.equal(tree().getTreeItem(pinned).contextValue, 'memory.pinned.stale');
    host.messageAnswers.push(undefined);
    await host.runCommand('memoryRecall.unpin', pinned);
    assert.equal((await leaf(/^Refund rules$/))!.pinned, false);

    host.messageAnswers.push(undefined);
    await host.runCommand('memoryRecall.forget', await leaf(/^Refund rules$/));
    assert.match(host.messages.at(-1)!.text, /^Memory: Forgot "Refund rules" \(archived/);
    assert.ok(!existsSync(refunds.path));
    assert.equal(await leaf(/^Refund rules$/), undefined);
    await host.runCommand('memoryRecall.undo');
    assert.ok(existsSync(refunds.path));
  });

  test('Memory: Consolidate… previews, asks, runs as one operation; Undo puts it back', async () => {
    const before = memoryFiles();
    host.messageAnswers.push('Consolidate', undefined);
    const opened = host.openedDocuments.length;
    await host.runCommand('memoryRecall.consolidate');
    const [preview, done] = host.openedDocuments.slice(opened);
    assert.match(preview.text, /^# Memory consolidation — preview \(nothing changed yet\)/);
    assert.match(preview.text, /### Merges\n\n- .*release-/);
    const confirm = host.messages.find((m) => m.text.startsWith('Memory: consolidate now?'))!;
    assert.deepEqual(confirm.buttons, ['Consolidate']);
    assert.match(confirm.text, /1 merges/);
    assert.match(done.text, /— done/);
    assert.equal(memoryFiles().length, before.length - 1);
    await host.runCommand('memoryRecall.undo');
    assert.deepEqual(memoryFiles(), before);
  });

  test('declining the consolidation changes nothing', async () => {
    const before = memoryFiles();
    host.messageAnswers.push(undefined);
    await host.runCommand('memoryRecall.consolidate');
    assert.deepEqual(memoryFiles(), before);
  });

  test('Memory: Show Always-Loaded Context, and the API context()', async () => {
    const written = await api.remember({ text: 'Answer tersely and in English.', type: 'user', scope: 'project', always: true });
    assert.deepEqual(written.operations.map((o) => o.action), ['created']);
    await host.runCommand('memoryRecall.showContext');
    const doc = host.openedDocuments.at(-1)!;
    assert.match(doc.text, /## Always-loaded memory/);
    assert.match(doc.text, /Answer tersely/);
    const context = await api.context({ budgetChars: 100 });
    assert.equal(context.truncated.length, 1);
  });

  test('extract with apply: false: VS Code’s model answers memory/complete; each proposal reviewed', async () => {
    const items = [
      { title: 'Use pnpm, never npm', description: 'Install with pnpm only', type: 'feedback', category: 'user/tooling', body: 'Always use pnpm here; npm breaks the lockfile.', updates: null, why: 'said twice' },
      { title: 'Staging runs on Fridays', description: 'The staging deploy runs every Friday', type: 'project', category: 'project/environments', body: 'Staging is redeployed every Friday at noon.', updates: null, why: 'stated' },
      { title: 'Lint before pushing', description: 'Run the linter before every push', type: 'feedback', category: 'conventions/code', body: 'Run `pnpm lint` before pushing.', updates: null, why: 'stated' },
    ];
    host.models = [{ answer: async (prompt) => (/JSON Schema/.test(prompt) ? JSON.stringify({ memories: items }) : '{"selected": []}') }];
    const before = memoryFiles();
    // Accept the first (then dismiss its note), edit the second, reject the third.
    host.messageAnswers.push('Accept', undefined, 'Edit…', undefined, 'Reject');
    host.inputBoxAnswers.push('Staging is redeployed every Friday at 13:00 (changed in May).');
    const outcome = await api.extract({
      trigger: 'sessionEnd',
      apply: false,
      transcript: [
        { role: 'user', content: 'Always use pnpm here, never npm.' },
        { role: 'user', content: 'Staging deploys on Fridays. Lint before pushing.' },
      ],
    });
    assert.deepEqual(outcome.operations.map((o) => o.action), ['proposed', 'proposed', 'proposed']);
    assert.deepEqual(memoryFiles(), before, 'nothing is written before the review');
    assert.match(host.prompts.at(-1)!, /Answer with one JSON value only/);
    const decisions = await withTimeout(outcome.reviewed!, PATIENCE_MS, 'the review');
    assert.deepEqual(decisions.map((d) => d.decision), ['accepted', 'edited', 'rejected']);
    assert.equal(host.inputBoxes.at(-1)?.value, items[1].body);
    const pnpm = readFileSync(outcome.operations[0].path, 'utf8');
    assert.match(pnpm, /^name: Use pnpm, never npm$/m);
    assert.match(pnpm, /npm breaks the lockfile/);
    assert.match(readFileSync(outcome.operations[1].path, 'utf8'), /13:00 \(changed in May\)/);
    assert.ok(!existsSync(outcome.operations[2].path));
    const proposalMessages = host.messages.filter((m) => m.text.startsWith('Memory proposal:'));
    assert.deepEqual(proposalMessages.at(-1)!.buttons, ['Accept', 'Edit…', 'Reject']);
  });

  test('a proposal that updates a named memory rewrites that file when accepted', async () => {
    const refunds = join(root, 'refunds.md');
    const item = { title: 'Refund rules', description: 'How refunds are computed', type: 'project', category: 'project/decisions', body: 'Refunds are computed in `src/app.ts` from the captured amount, not the order total.', updates: 'refunds.md', why: 'changed' };
    host.models = [{ answer: async (prompt) => (/JSON Schema/.test(prompt) ? JSON.stringify({ memories: [item] }) : '{"selected": []}') }];
    host.messageAnswers.push('Accept', undefined);
    const before = memoryFiles();
    const outcome = await api.extract({ trigger: 'codeAccepted', apply: false, diff: '- order total\n+ captured amount' });
    assert.deepEqual(outcome.operations.map((o) => [o.action, o.path]), [['proposed', refunds]]);
    assert.doesNotMatch(readFileSync(refunds, 'utf8'), /captured amount/);
    const [decision] = await withTimeout(outcome.reviewed!, PATIENCE_MS, 'the review');
    assert.equal(decision.decision, 'accepted');
    assert.deepEqual(decision.result!.operations.map((o) => [o.action, o.path]), [['updated', refunds]]);
    assert.match(readFileSync(refunds, 'utf8'), /captured amount, not the order total/);
    assert.deepEqual(memoryFiles(), before);
  });

  test('Memory: Propose Project Memory from the Workspace: reviewed, then written', async () => {
    host.messageAnswers.push('Accept', undefined);
    const before = memoryFiles();
    await host.runCommand('memoryRecall.proposeProjectMemory');
    const proposal = host.messages.filter((m) => m.text.startsWith('Memory proposal:')).at(-1)!;
    assert.match(proposal.text, /"Project stack and commands"/);
    const added = memoryFiles().filter((f) => !before.includes(f));
    assert.equal(added.length, 1);
    assert.match(readFileSync(join(root, added[0]), 'utf8'), /test: `npm test` \(package\.json scripts\)/);
  });

  test('Explain: the quick pick row has the button; the command explains a memory of the last recall', async () => {
    host.inputBoxAnswers.push('release checklist changelog');
    await withTimeout(Promise.resolve(host.runCommand('memoryRecall.recall')), PATIENCE_MS, 'the recall command');
    const pick = host.quickPicks.at(-1)!;
    const row = (pick.items as any[]).find((i) => i.doc)!;
    assert.equal(row.buttons[0].iconPath.id, 'question');
    const executed = host.executed.length;
    pick.pressItemButton(row);
    const call = await eventually('memoryRecall.explain to run', () =>
      host.executed.slice(executed).find((e) => e.command === 'memoryRecall.explain'),
    );
    assert.equal((call.args[0] as any).path, row.doc.path);
    assert.match((call.args[0] as any).token, /^recall-/);
    pick.hide();

    const messages = host.messages.length;
    host.pickChooser = (items) => items.find((i: any) => i.path === row.doc.path);
    const opened = host.openedDocuments.length;
    await host.runCommand('memoryRecall.explain');
    host.pickChooser = undefined;
    const error = host.messages.slice(messages).find((m) => m.level === 'error');
    assert.equal(error, undefined, error?.text);
    const doc = host.openedDocuments.slice(opened).at(-1)!;
    assert.match(doc.text, /^# Why: Release checklist/);
    assert.match(doc.text, /phase: delivered/);
  });

  test('the API: search, and feedback on what was delivered', async () => {
    const found = await api.search({ mode: 'shallow', query: 'release checklist' });
    assert.ok(found.docs.some((d) => d.title === 'Release checklist'));
    const { token, initial, refined } = await api.recall('release checklist changelog', { initialWaitMs: PATIENCE_MS });
    const phase = await withTimeout(refined, PATIENCE_MS, 'refined');
    const delivered = [...(initial?.docs ?? []), ...(phase?.docs ?? [])];
    assert.ok(delivered.length > 0);
    const recorded = await api.feedback({ token, used: [delivered[0].path] });
    assert.equal(recorded.recorded, 1);
  });

  test('the language-model tools: the always-loaded context and search, for VS Code agents', async () => {
    const declared = MANIFEST.contributes.languageModelTools.map((t: { name: string }) => t.name);
    assert.deepEqual([...host.tools.keys()].sort(), [...declared].sort());
    const token = new vscode.CancellationTokenSource().token;
    const context = await host.tools.get('memory_context')!.invoke({ input: {} }, token);
    assert.match(context.content[0].value, /## Always-loaded memory[\s\S]*Answer tersely/);
    const found = await host.tools.get('memory_search')!.invoke({ input: { query: 'release checklist', mode: 'shallow' } }, token);
    assert.match(found.content[0].value, /Release checklist/);
    // A model's bad arguments are not trusted: an unknown mode searches deep, a silly limit is dropped.
    const odd = await host.tools.get('memory_search')!.invoke({ input: { query: 'release checklist', mode: 'everything', limit: -3 } }, token);
    assert.match(odd.content[0].value, /Release checklist/);
  });
});
