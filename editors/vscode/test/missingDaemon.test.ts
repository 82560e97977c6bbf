// A window where the daemon is not installed: the extension (stand-in
// VS Code, as in extension.test.ts) says so once, with the two ways out, and
// starts as soon as the setting points at a daemon.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { createFakeVscode, installFakeVscode } from './fakeVscode';
import { daemonCommand, DEMO_ROOTS, eventually, MANIFEST } from './daemon';

type Extension = typeof import('../src/extension');

describe('activation without the daemon', () => {
  const workspace = mkdtempSync(join(tmpdir(), 'memory-recall-missing-'));
  const { vscode, host } = createFakeVscode(
    {
      // As in a fresh install: the default command, and a PATH without it.
      'memoryRecall.server.env': { PATH: join(workspace, 'bin') },
      'memoryRecall.roots': DEMO_ROOTS,
      'memoryRecall.watch': false,
      'memoryRecall.selector.kind': 'none',
    },
    workspace,
  );
  const uninstall = installFakeVscode(vscode);
  const extension: Extension = require('../src/extension');
  const context = { subscriptions: [] as { dispose(): unknown }[], extension: { packageJSON: MANIFEST } };
  let api: ReturnType<Extension['activate']>;
  const errors = () => host.messages.filter((m) => m.level === 'error');

  before(() => {
    host.messageAnswers.push('Show install instructions');
    api = extension.activate(context as any);
  });
  after(async () => {
    await extension.deactivate();
    context.subscriptions.forEach((d) => d.dispose());
    uninstall();
    rmSync(workspace, { recursive: true, force: true });
  });

  test('one error names the setting and the install, with Open Settings and Show install instructions', async () => {
    // The barrier: the error's answer ("Show install instructions") has been
    // acted on, so everything the failed start set off has happened.
    await eventually('the install instructions', () =>
      host.openedDocuments.find((d) => d.uri.startsWith('memory-recall:Install')),
    );
    assert.equal(errors().length, 1, JSON.stringify(host.messages));
    const [error] = errors();
    assert.match(error.text, /"memory-recall" was not found/);
    assert.match(error.text, /pip install \. in a clone/);
    assert.match(error.text, /"memoryRecall\.server\.command"/);
    assert.deepEqual(error.buttons, ['Open Settings', 'Show install instructions']);
    assert.equal(host.statusBarItems[0].text, '$(error) Memory');
  });

  test('Show install instructions opens what works today: pip from git or a clone, no PyPI name', () => {
    const guide = host.openedDocuments.find((d) => d.uri.startsWith('memory-recall:Install'));
    assert.ok(guide, JSON.stringify(host.openedDocuments));
    assert.ok(guide.text.includes(`pip install --user "git+${MANIFEST.repository.url}"`), guide.text);
    assert.match(guide.text, /pip install --user \.\s/);
    assert.match(guide.text, /memoryRecall\.server\.command/);
    assert.doesNotMatch(guide.text, /pipx? install memory-recall/);
  });

  test('retries do not repeat it; a command the user runs does', async () => {
    await assert.rejects(api.status());
    await assert.rejects(api.recall('deploy freeze'));
    await host.runCommand('memoryRecall.showStatus');
    const status = host.openedDocuments.at(-1)!;
    assert.match(status.text, /not running: memory-recall was not found/);
    assert.match(status.text, /pip install/);
    assert.equal(errors().length, 1);

    host.messageAnswers.push('Open Settings');
    host.inputBoxAnswers.push('deploy freeze');
    await host.runCommand('memoryRecall.recall');
    assert.equal(errors().length, 2);
    const opened = await eventually('the settings to open', () =>
      host.executed.find((e) => e.command === 'workbench.action.openSettings'),
    );
    assert.deepEqual(opened.args, ['memoryRecall.server.command']);
  });

  test('pointing the setting at a daemon starts it', async () => {
    const [command, ...args] = daemonCommand();
    host.updateSettings({
      'memoryRecall.server.command': command,
      'memoryRecall.server.args': args,
      'memoryRecall.server.env': {},
    });
    // The restart waits a moment for more settings changes, then says so.
    await eventually('the restart', () => host.log.some((line) => line.includes('settings changed: restarting')));
    const status = await eventually('the daemon to be ready', async () => {
      const latest = await api.status().catch(() => undefined);
      return latest?.ready ? latest : undefined;
    });
    assert.ok(status.documents > 40, JSON.stringify(status));
    assert.equal(errors().length, 2);
  });
});
