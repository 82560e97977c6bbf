// The extension activated in node with a stand-in `vscode` module (VS Code
// cannot be downloaded here), the real vscode-languageclient and the real
// daemon: commands, quick pick phases, status bar, the language-model
// selector, the exported API, restart on settings change.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { createFakeVscode, installFakeVscode } from './fakeVscode';
import { daemonCommand, DEMO_PROJECT, DEMO_ROOTS, eventually, MANIFEST, PATIENCE_MS, sleep, withTimeout } from './daemon';
import { PROTOCOL_VERSION } from '../src/protocol.generated';

type Extension = typeof import('../src/extension');

const DEPLOY_FREEZE = join(DEMO_PROJECT, 'deploy-freeze.md');

describe('the extension in a stand-in VS Code', () => {
  const [command, ...args] = daemonCommand();
  const workspace = mkdtempSync(join(tmpdir(), 'memory-recall-workspace-'));
  const { vscode, host } = createFakeVscode(
    {
      'memoryRecall.server.command': command,
      'memoryRecall.server.args': args,
      'memoryRecall.roots': DEMO_ROOTS,
      'memoryRecall.watch': false,
      'memoryRecall.selector.kind': 'client',
    },
    workspace,
  );
  const uninstall = installFakeVscode(vscode);
  // Loaded only now, so that its `require('vscode')` gets the stand-in.
  const extension: Extension = require('../src/extension');
  const context = { subscriptions: [] as { dispose(): unknown }[], extension: { packageJSON: MANIFEST } };
  let api: ReturnType<Extension['activate']>;

  before(() => {
    api = extension.activate(context as any);
  });
  after(async () => {
    await extension.deactivate();
    context.subscriptions.forEach((d) => d.dispose());
    uninstall();
    rmSync(workspace, { recursive: true, force: true });
    // The daemon's stderr is in the output channel: no traceback.
    assert.ok(!host.log.some((line) => line.includes('Traceback')), host.log.join('\n'));
  });

  test('the status bar shows the document count once the daemon is up', async () => {
    const item = host.statusBarItems[0];
    const text = await eventually('the count in the status bar', () => /^\$\([a-z-]+\) \d+$/.test(item.text) && item.text);
    assert.ok(Number(text.split(' ')[1]) > 40, text);
    // memoryRecall.watch is off in this test
    assert.equal(text.split(' ')[0], '$(circle-slash)');
    assert.match(item.tooltip, /^Memory Recall: \d+ memories, watcher off\. Click for status\.$/);
    assert.equal(item.command, 'memoryRecall.showStatus');
  });

  test('Memory: Recall… shows the fast result, then the model choice; choosing opens the file', async () => {
    host.models = [
      {
        answer: async (prompt) => {
          await sleep(250);
          const fresh = prompt.split('\n').find((line) => /^\d+\. .*release\//.test(line));
          return `{"selected": [${fresh ? parseInt(fresh) : 3}]}`;
        },
      },
    ];
    host.inputBoxAnswers.push('deploy freeze on friday');
    await withTimeout(Promise.resolve(host.runCommand('memoryRecall.recall')), PATIENCE_MS, 'the recall command');
    const pick = host.quickPicks.at(-1)!;
    const labels = pick.snapshots.map((items) => items.map((i: any) => i.label));
    assert.match(labels[0][0], /^fast · \d+ ms$/);
    assert.equal(labels[0][1], 'Deploy freeze before release');
    const final = pick.items as any[];
    assert.ok(final.some((i) => /^chosen by the model/.test(i.label)), JSON.stringify(labels));
    const memoryItems = final.filter((i) => i.doc);
    assert.ok(memoryItems.length >= 2);
    assert.match(memoryItems[0].description, /^project · project · /);
    assert.equal(memoryItems[0].detail, 'No deploys on Friday after 15:00; release branch cut every second Tuesday');
    assert.match(pick.placeholder, /memories — choose one to open/);
    assert.equal(pick.busy, false);
    assert.match(host.prompts.at(-1)!, /Request: deploy freeze on friday/);

    pick.choose(memoryItems[0]);
    await eventually('the memory to open', () => host.shownDocuments.length > 0);
    assert.equal(host.shownDocuments.at(-1), DEPLOY_FREEZE);
    assert.equal(pick.visible, false);
  });

  test('the exported API: the fast phase first, the refined one later', async () => {
    host.models = [{ answer: async () => (await sleep(200), '{"selected": [4]}') }];
    // The fast phase comes first by protocol, not by timing: the wait is long.
    const { initial, initialReason, refined } = await api.recall('deploy freeze on friday', { initialWaitMs: PATIENCE_MS });
    assert.equal(initial?.phase, 'fast');
    assert.equal(initialReason, 'fast');
    const phase = await withTimeout(refined, PATIENCE_MS, 'refined');
    assert.equal(phase?.strategy, 'model');
    assert.equal(api.protocolVersion, PROTOCOL_VERSION);
  });

  test('without a chat model the daemon falls back and says why', async () => {
    host.models = [];
    const { refined } = await api.recall('deploy freeze on friday');
    const phase = await withTimeout(refined, PATIENCE_MS, 'refined');
    assert.equal(phase?.strategy, 'heuristic');
    assert.match(phase?.failure ?? '', /no chat model available/);
  });

  test('closing the quick pick cancels the recall', async () => {
    let release!: () => void;
    host.models = [{ answer: () => new Promise((done) => (release = () => done('{"selected": []}'))) }];
    host.inputBoxAnswers.push('deploy freeze on friday');
    const running = host.runCommand('memoryRecall.recall');
    const pick = await eventually('the fast result in a new quick pick', () => {
      const last = host.quickPicks.at(-1);
      return last && last.visible && last.snapshots.length > 0 ? last : undefined;
    });
    pick.hide();
    await withTimeout(Promise.resolve(running), PATIENCE_MS, 'the command to end');
    release();
    const status = await eventually('the recall counted cancelled', async () => {
      const latest = await api.status();
      return latest.recall.cancelled ? latest : undefined;
    });
    assert.equal(status.recall.cancelled, 1, JSON.stringify(status.recall));
    assert.equal(status.recall.active, 0, JSON.stringify(status.recall));
  });

  test('Memory: Show Status opens a status document', async () => {
    await host.runCommand('memoryRecall.showStatus');
    const doc = host.openedDocuments.at(-1)!;
    assert.match(doc.uri, /^memory-recall:/);
    assert.match(doc.text, /\d+ memories, index built in/);
    assert.ok(doc.text.includes(DEMO_PROJECT));
  });

  test('Memory: Open Memory Folder opens the chosen root in a new window', async () => {
    await host.runCommand('memoryRecall.openFolder');
    const opened = host.executed.find((e) => e.command === 'vscode.openFolder');
    assert.ok(opened, JSON.stringify(host.executed));
    assert.equal((opened.args[0] as any).fsPath, DEMO_PROJECT);
  });

  test('a settings change restarts the daemon with the new options', async () => {
    const before = await api.status();
    assert.equal(before.selector, 'client');
    host.updateSettings({ 'memoryRecall.selector.kind': 'none' });
    await eventually('the restart', () => host.log.some((line) => line.includes('restarting')));
    const status = await withTimeout(api.status(), PATIENCE_MS, 'status after restart');
    assert.equal(status.selector, 'none');
    const { initial } = await api.recall('deploy freeze on friday', { initialWaitMs: PATIENCE_MS });
    assert.equal(initial?.phase, 'refined');
    assert.deepEqual(host.messages.filter((m) => m.level === 'error'), []);
  });

  test('a daemon command that does not exist: one actionable error, the status bar says so', async () => {
    const before = host.messages.length;
    host.updateSettings({ 'memoryRecall.server.command': join(workspace, 'no-such-memory-recall') });
    const error = await eventually('the error message', () =>
      host.messages.slice(before).find((m) => m.level === 'error'),
    );
    assert.match(error.text, /no-such-memory-recall.*was not found.*pip install \..*memoryRecall\.server\.command/s);
    assert.deepEqual(error.buttons, ['Open Settings', 'Show install instructions']);
    assert.equal(host.statusBarItems[0].text, '$(error) Memory');
    // Retries (an agent's recall, the status bar) do not repeat it, and
    // vscode-languageclient never got to show its own. No sleep: a start that
    // fails reports before it rejects, so once both retries have rejected,
    // whatever they would have shown is shown.
    await assert.rejects(api.status());
    await assert.rejects(api.recall('deploy freeze'));
    assert.deepEqual(
      host.messages.slice(before).filter((m) => m.level === 'error').map((m) => m.text),
      [error.text],
    );
  });
});
