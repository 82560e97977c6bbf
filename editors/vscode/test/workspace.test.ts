// A multi-root workspace in the stand-in VS Code (see extension.test.ts):
// every folder's .memory is a project root, and adding a folder restarts the
// daemon with it.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { createFakeVscode, installFakeVscode } from './fakeVscode';
import { daemonCommand, eventually, MANIFEST, PATIENCE_MS, withTimeout } from './daemon';
import { userMemoryDir } from '../src/settings';

type Extension = typeof import('../src/extension');

/** A workspace folder with one memory in its .memory. */
function folderWithMemory(parent: string, name: string, title: string, description: string): string {
  const folder = join(parent, name);
  mkdirSync(join(folder, '.memory'), { recursive: true });
  writeFileSync(
    join(folder, '.memory', `${name}.md`),
    `---\nname: ${title}\ndescription: ${description}\ntype: project\n---\n${description}.\n`,
  );
  return folder;
}

describe('a multi-root workspace', () => {
  const [command, ...args] = daemonCommand();
  const parent = mkdtempSync(join(tmpdir(), 'memory-recall-multiroot-'));
  const api = folderWithMemory(parent, 'api', 'Payment retries', 'payment webhooks retry three times');
  const web = folderWithMemory(parent, 'web', 'Storybook ports', 'storybook runs on port 6006');
  const docs = folderWithMemory(parent, 'docs', 'Glossary owner', 'the glossary is owned by the docs team');
  const { vscode, host } = createFakeVscode(
    {
      'memoryRecall.server.command': command,
      'memoryRecall.server.args': args,
      'memoryRecall.watch': false,
      'memoryRecall.selector.kind': 'none',
    },
    [api, web],
  );
  const uninstall = installFakeVscode(vscode);
  const extension: Extension = require('../src/extension');
  const context = { subscriptions: [] as { dispose(): unknown }[], extension: { packageJSON: MANIFEST } };
  let memory: ReturnType<Extension['activate']>;

  before(() => {
    memory = extension.activate(context as any);
  });
  after(async () => {
    await extension.deactivate();
    context.subscriptions.forEach((d) => d.dispose());
    uninstall();
    rmSync(parent, { recursive: true, force: true });
  });

  test("every folder's .memory is a project root, and the user memory stays", async () => {
    const status = await withTimeout(memory.status(), PATIENCE_MS, 'status');
    assert.deepEqual(
      status.roots.map((r) => [r.scope, r.path]),
      [
        ['project', join(api, '.memory')],
        ['project', join(web, '.memory')],
        ['user', userMemoryDir()],
      ],
    );
    const { initial } = await memory.recall('storybook port', { initialWaitMs: PATIENCE_MS });
    assert.equal(initial?.docs[0]?.title, 'Storybook ports');
  });

  test('adding a folder restarts the daemon with its .memory too', async () => {
    host.setWorkspaceFolders([api, web, docs]);
    const roots = await eventually("the daemon to serve the new folder's .memory", async () => {
      const paths = (await memory.status().catch(() => undefined))?.roots.map((r) => r.path);
      return paths?.includes(join(docs, '.memory')) ? paths : undefined;
    });
    assert.ok(roots.includes(join(docs, '.memory')), JSON.stringify(roots));
    assert.ok(host.log.some((line) => line.includes('workspace folders changed: restarting')));
    const { initial } = await memory.recall('who owns the glossary', { initialWaitMs: PATIENCE_MS });
    assert.equal(initial?.docs[0]?.title, 'Glossary owner');
  });
});
