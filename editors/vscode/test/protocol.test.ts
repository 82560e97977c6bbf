// The TypeScript protocol types are generated from the daemon's JSON Schema:
// a protocol change the extension did not follow fails here.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { test } from 'node:test';

import { SCHEMA_PATH } from './schema';

const EXTENSION_DIR = resolve(__dirname, '..', '..');
const GENERATED = join(EXTENSION_DIR, 'src', 'protocol.generated.ts');

/** Types rendered by scripts/gen-protocol.mjs from the schema at `schemaPath`. */
function render(schemaPath: string): string {
  const script = `import(${JSON.stringify(join(EXTENSION_DIR, 'scripts', 'gen-protocol.mjs'))})
    .then((m) => m.render(${JSON.stringify(schemaPath)}))
    .then((text) => process.stdout.write(text))`;
  return execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
}

test('src/protocol.generated.ts matches protocol/schema (run `npm run gen:protocol`)', () => {
  assert.equal(readFileSync(GENERATED, 'utf8'), render(SCHEMA_PATH));
});

test('a schema change changes the generated types', () => {
  const schema = JSON.parse(readFileSync(SCHEMA_PATH, 'utf8'));
  schema.$defs.MemoryDoc.properties.pinned = { type: 'boolean' };
  schema.$defs.MemoryDoc.required.push('pinned');
  const dir = mkdtempSync(join(tmpdir(), 'memory-recall-schema-'));
  try {
    const changed = join(dir, 'protocol.schema.json');
    writeFileSync(changed, JSON.stringify(schema));
    const text = render(changed);
    assert.notEqual(text, readFileSync(GENERATED, 'utf8'));
    assert.match(text, /pinned: boolean;/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
