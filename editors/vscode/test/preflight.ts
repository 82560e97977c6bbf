// Run by `npm test` before the test files: without a daemon every suite would
// fail on its own with ENOENT. Checks the daemon command once and, when it
// cannot run, says how to get one and exits 1.
import { spawnSync } from 'node:child_process';

import { daemonCommand } from './daemon';

const [command, ...args] = daemonCommand();
const probe = spawnSync(command, [...args, '--help'], { encoding: 'utf8', timeout: 60_000 });
if (probe.error || probe.status !== 0) {
  const why = probe.error ? probe.error.message : `exited ${probe.status}: ${(probe.stderr || probe.stdout).trim().split('\n').slice(-3).join('\n')}`;
  process.stderr.write(
    [
      `The VS Code tests run against the memory-recall daemon, and it cannot run here:`,
      `  ${[command, ...args].join(' ')}: ${why}`,
      '',
      'Get one of these:',
      '  - from the repository root, `make test` (it makes .venv and runs these tests with its daemon);',
      '  - or `make lint` once (it makes .venv), then `npm test` here again;',
      '  - or set MEMORY_RECALL_SERVER to the daemon command as a JSON array, e.g.',
      `    MEMORY_RECALL_SERVER='["/path/to/python", "-m", "memory_recall.server", "serve"]' npm test`,
      '',
    ].join('\n'),
  );
  process.exit(1);
}
