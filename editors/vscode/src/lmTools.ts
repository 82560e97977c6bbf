// The memories offered to VS Code's own agents through the Language Model API:
// two language-model tools (declared in package.json `languageModelTools`),
// `memory_context` (the always-loaded block, memory/context) and
// `memory_search` (memory/search). `vscode.lm.registerTool` exists from
// VS Code 1.95; on an older VS Code nothing is registered and the commands
// and the extension API still work.
import * as vscode from 'vscode';

import type { MemoryClient } from './memoryClient';
import type { SearchParams } from './protocol.generated';

export const CONTEXT_TOOL = 'memory_context';
export const SEARCH_TOOL = 'memory_search';

const SEARCH_MODES = ['shallow', 'deep', 'explore', 'get'] as const;

/** The search tool's input, checked (a model's arguments are not trusted). */
export function searchInput(input: unknown): SearchParams {
  const given = (input ?? {}) as Record<string, unknown>;
  const mode = SEARCH_MODES.includes(given.mode as (typeof SEARCH_MODES)[number]) ? (given.mode as SearchParams['mode']) : 'deep';
  const params: SearchParams = { mode, query: typeof given.query === 'string' ? given.query : '' };
  if (typeof given.limit === 'number' && Number.isInteger(given.limit) && given.limit > 0) params.limit = Math.min(given.limit, 20);
  if (typeof given.path === 'string' && given.path) params.path = given.path;
  if (typeof given.category === 'string' && given.category) params.category = given.category;
  return params;
}

interface ToolApi {
  registerTool(name: string, tool: { invoke(options: { input: unknown }, token: vscode.CancellationToken): Promise<unknown> }): vscode.Disposable;
}

/** Register both tools when this VS Code has `vscode.lm.registerTool`; returns what to dispose. */
export function registerMemoryTools(client: () => Promise<MemoryClient>): vscode.Disposable[] {
  const lm = (vscode as unknown as { lm?: Partial<ToolApi> }).lm;
  const classes = vscode as unknown as {
    LanguageModelToolResult?: new (parts: unknown[]) => unknown;
    LanguageModelTextPart?: new (text: string) => unknown;
  };
  if (typeof lm?.registerTool !== 'function' || !classes.LanguageModelToolResult || !classes.LanguageModelTextPart) {
    return [];
  }
  const text = (value: string) => new classes.LanguageModelToolResult!([new classes.LanguageModelTextPart!(value)]);
  return [
    lm.registerTool(CONTEXT_TOOL, {
      async invoke(_options, token) {
        const result = await (await client()).context({}, token);
        const omitted = result.truncated.length
          ? `\n\n(${result.truncated.length} always-loaded memories did not fit: ${result.truncated.map((t) => t.relativePath).join(', ')})`
          : '';
        return text((result.prompt || 'No memory is marked always-loaded.') + omitted);
      },
    }),
    lm.registerTool(SEARCH_TOOL, {
      async invoke(options, token) {
        const result = await (await client()).search(searchInput(options.input), token);
        return text(result.prompt || `No memory found for ${JSON.stringify(result.query)} (${result.mode}).`);
      },
    }),
  ];
}
