// Validates real daemon messages against protocol/schema/protocol.schema.json.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv2020 from 'ajv/dist/2020';

import { REPO_ROOT } from './daemon';

export const SCHEMA_PATH = join(REPO_ROOT, 'protocol', 'schema', 'protocol.schema.json');

/**
 * `validate(model, value)` asserts that `value` is a valid `$defs[model]`.
 * Stricter than the schema: a field the schema does not declare fails too,
 * since the TypeScript types (generated from it) would not know it.
 */
export function schemaValidator(): (model: string, value: unknown) => void {
  const schema = JSON.parse(readFileSync(SCHEMA_PATH, 'utf8'));
  for (const def of Object.values<any>(schema.$defs)) {
    if (def.properties) {
      def.additionalProperties = false;
    }
  }
  const ajv = new Ajv2020({ allErrors: true, strict: false });
  ajv.addSchema(schema, 'protocol');
  return (model, value) => {
    const check = ajv.getSchema(`protocol#/$defs/${model}`);
    assert.ok(check, `no ${model} in the schema`);
    assert.ok(check(value), `${model} does not match the schema: ${ajv.errorsText(check.errors)}\n${JSON.stringify(value).slice(0, 500)}`);
  };
}
