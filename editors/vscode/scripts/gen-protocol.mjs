// Generate src/protocol.generated.ts from the daemon's JSON Schema.
//
//   node scripts/gen-protocol.mjs          rewrite the checked-in types
//   node scripts/gen-protocol.mjs --check  exit 1 when they have drifted
//
// The schema (protocol/schema/protocol.schema.json) is itself generated from
// the daemon's pydantic models, so a protocol change the extension did not
// follow fails `--check` (run by the test suite).
import { compile } from 'json-schema-to-typescript';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const extensionDir = join(here, '..');
export const SCHEMA_PATH = join(extensionDir, '..', '..', 'protocol', 'schema', 'protocol.schema.json');
export const OUTPUT_PATH = join(extensionDir, 'src', 'protocol.generated.ts');

/** The TypeScript source for the schema at `schemaPath`. */
export async function render(schemaPath = SCHEMA_PATH) {
  const schema = JSON.parse(readFileSync(schemaPath, 'utf8'));
  const defs = structuredClone(schema.$defs);
  // pydantic titles every property ("Mtimems"); json-schema-to-typescript would
  // turn each into its own type alias. Keep the model names only.
  for (const def of Object.values(defs)) {
    for (const prop of Object.values(def.properties ?? {})) {
      delete prop.title;
    }
  }
  // The schema is a bag of $defs; give it a root that names every model so
  // each one becomes an exported interface.
  const root = {
    title: 'ProtocolModels',
    type: 'object',
    additionalProperties: false,
    properties: Object.fromEntries(Object.keys(defs).map((name) => [name, { $ref: `#/$defs/${name}` }])),
    $defs: defs,
  };
  const body = await compile(root, 'ProtocolModels', {
    bannerComment: '',
    additionalProperties: false,
    format: true,
    style: { singleQuote: true, printWidth: 100 },
  });
  const methods = JSON.stringify(schema['x-methods'], null, 2).replace(/"/g, "'");
  return [
    `// Generated from ${relative(extensionDir, schemaPath).split('\\').join('/')} by scripts/gen-protocol.mjs.`,
    '// Do not edit: run `npm run gen:protocol` after `python -m memory_recall.protocol.schema_gen`.',
    '',
    `export const PROTOCOL_VERSION = ${schema['x-protocolVersion']};`,
    '',
    `export const PROTOCOL_METHODS = ${methods} as const;`,
    '',
    body.trimEnd(),
    '',
  ].join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const text = await render();
  if (process.argv.includes('--check')) {
    let current = '';
    try {
      current = readFileSync(OUTPUT_PATH, 'utf8');
    } catch {}
    if (current !== text) {
      console.error(`${relative(process.cwd(), OUTPUT_PATH)} is stale: run \`npm run gen:protocol\``);
      process.exit(1);
    }
  } else {
    writeFileSync(OUTPUT_PATH, text);
    console.log(`wrote ${relative(process.cwd(), OUTPUT_PATH)}`);
  }
}
