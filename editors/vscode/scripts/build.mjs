// Bundle the extension (out/extension.js) and, with --tests, the node tests
// (out/test/*.test.js) and the check that a daemon is there (out/preflight/).
// Type checking is tsc's job (`npm run typecheck`); esbuild only strips
// types, so this takes milliseconds.
import { build } from 'esbuild';
import { readdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const production = process.argv.includes('--production');
const common = {
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node18',
  logLevel: 'warning',
  absWorkingDir: root,
};

await build({
  ...common,
  entryPoints: ['src/extension.ts'],
  outfile: 'out/extension.js',
  external: ['vscode'],
  minify: production,
  sourcemap: !production,
});

if (process.argv.includes('--tests')) {
  rmSync(join(root, 'out', 'test'), { recursive: true, force: true });
  // Outside out/test/ (node --test would take it for a test file), at the same
  // depth, so that test/daemon.ts finds the repository from it.
  await build({ ...common, entryPoints: ['test/preflight.ts'], outfile: 'out/preflight/preflight.js', packages: 'external' });
  // Run by tests/editors on an unpacked .vsix: its own bundle activated as VS Code would.
  await build({ ...common, entryPoints: ['test/vsixActivate.ts'], outfile: 'out/vsix/activate.js', packages: 'external' });
  await build({
    ...common,
    entryPoints: readdirSync(join(root, 'test'))
      .filter((name) => name.endsWith('.test.ts'))
      .map((name) => `test/${name}`),
    outdir: 'out/test',
    packages: 'external',
    sourcemap: 'inline',
  });
}
