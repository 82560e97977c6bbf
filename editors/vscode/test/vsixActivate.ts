// Activate an unpacked .vsix the way VS Code does after installing it: its own
// package.json and its own bundled out/extension.js (not the sources), in the
// stand-in `vscode`, against the real daemon. Every contributed command must
// be registered, every contributed view must have a provider, every
// language-model tool must be registered, and the daemon must answer.
//
//   node out/vsix/activate.js <unpacked vsix folder>   (run by tests/editors)
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { createFakeVscode, installFakeVscode } from '../test/fakeVscode';
import { daemonCommand, withTimeout } from '../test/daemon';

async function main(unpacked: string): Promise<void> {
  const manifest = JSON.parse(readFileSync(join(unpacked, 'extension', 'package.json'), 'utf8'));
  const workspace = mkdtempSync(join(tmpdir(), 'memory-recall-vsix-'));
  const [command, ...args] = daemonCommand();
  const { vscode, host } = createFakeVscode(
    {
      'memoryRecall.server.command': command,
      'memoryRecall.server.args': args,
      'memoryRecall.server.env': { MEMORY_RECALL_STATE_DIR: join(workspace, 'state') },
      'memoryRecall.roots': [{ path: join(workspace, '.memory'), scope: 'project' }],
      'memoryRecall.watch': false,
      'memoryRecall.selector.kind': 'none',
    },
    workspace,
  );
  const uninstall = installFakeVscode(vscode);
  const problems: string[] = [];
  try {
    const extension = require(join(unpacked, 'extension', manifest.main));
    const context = { subscriptions: [] as { dispose(): unknown }[], extension: { packageJSON: manifest } };
    const api = extension.activate(context);
    const status: { protocolVersion: number } = await withTimeout(api.status(), 30_000, 'memory/status of the installed extension');
    const registered = new Set(host.registeredCommands());
    const contributed: string[] = manifest.contributes.commands.map((c: { command: string }) => c.command);
    for (const id of contributed) if (!registered.has(id)) problems.push(`command ${id} is contributed but not registered`);
    for (const id of registered) if (!contributed.includes(id)) problems.push(`command ${id} is registered but not in package.json`);
    const views: string[] = Object.values(manifest.contributes.views ?? {}).flatMap((group: any) => group.map((v: { id: string }) => v.id));
    for (const id of views) if (!host.treeProviders.has(id)) problems.push(`view ${id} has no provider`);
    for (const tool of manifest.contributes.languageModelTools ?? []) {
      if (!host.tools.has(tool.name)) problems.push(`language-model tool ${tool.name} is not registered`);
    }
    const written = await api.remember({ text: 'The installed extension writes memories.' });
    if (written.operations[0]?.action !== 'created') problems.push(`remember through the installed extension: ${JSON.stringify(written)}`);
    await extension.deactivate();
    context.subscriptions.forEach((d) => d.dispose());
    if (host.log.some((line) => line.includes('Traceback'))) problems.push(`traceback in the log:\n${host.log.join('\n')}`);
    console.log(`vsix activated: protocol v${status.protocolVersion}, ${contributed.length} commands, ${views.length} views, ${(manifest.contributes.languageModelTools ?? []).length} tools`);
  } finally {
    uninstall();
    rmSync(workspace, { recursive: true, force: true });
  }
  if (problems.length) {
    console.error(problems.join('\n'));
    process.exit(1);
  }
}

main(process.argv[2]).then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
