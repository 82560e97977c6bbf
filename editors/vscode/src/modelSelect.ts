// `memory/select` answered by a chat model: the prompt it gets and how its
// answer is read; and the messages of `memory/complete` for a chat API
// without a system role. The extension sends the prompt through VS Code's Language
// Model API; this module has no `vscode` import.
import type { CompleteParams, SelectCandidate, SelectParams } from './protocol.generated';
import { formatAge } from './present';

/** The last two segments of a path without `.md`: `incidents/2024-03-14-pg-pool`. */
export function shortName(path: string): string {
  return path.split(/[\\/]/).slice(-2).join('/').replace(/\.md$/i, '');
}

function candidateLine(index: number, candidate: SelectCandidate, nowMs: number): string {
  const description = candidate.description.replace(/\s+/g, ' ').trim() || '(no description)';
  return `${index + 1}. [${candidate.type}, ${formatAge(candidate.mtimeMs, nowMs)}] ${shortName(candidate.path)} — ${description}`;
}

/** The single user message asking the model to choose. */
export function selectPrompt(params: SelectParams, nowMs: number = Date.now()): string {
  const lines = [
    'You choose which memory notes a coding agent should read before it works on a request.',
    'Pick only notes that would change or inform what the agent does for this request.',
    '',
    `Request: ${params.query}`,
  ];
  if (params.recentTools.length) {
    lines.push(`Tools the agent used recently: ${params.recentTools.join(', ')}`);
  }
  lines.push(
    '',
    'Memory notes (number. [type, age] name — description):',
    ...params.candidates.map((c, i) => candidateLine(i, c, nowMs)),
    '',
    `Choose at most ${params.limit}, most useful first, or none if none would help.`,
    'Answer with JSON only, for example {"selected": [3, 1]}.',
  );
  return lines.join('\n');
}

/**
 * The paths the model chose. Accepts numbers from the list (1-based) or
 * paths/names, ignores ones not in the list, keeps at most `limit`.
 * Throws when the answer holds no `{"selected": [...]}`: the daemon then
 * falls back to its lexical ranking and reports why.
 */
export function parseSelection(answer: string, params: SelectParams): string[] {
  const start = answer.indexOf('{');
  const end = answer.lastIndexOf('}');
  let parsed: unknown;
  try {
    parsed = start >= 0 && end > start ? JSON.parse(answer.slice(start, end + 1)) : undefined;
  } catch {
    parsed = undefined;
  }
  const selected = (parsed as { selected?: unknown } | undefined)?.selected;
  if (!Array.isArray(selected)) {
    throw new Error(`the model did not answer {"selected": [...]}: ${JSON.stringify(answer.slice(0, 120))}`);
  }
  const byName = new Map<string, string>();
  for (const c of params.candidates) {
    byName.set(c.path, c.path);
    byName.set(shortName(c.path), c.path);
  }
  const paths: string[] = [];
  for (const item of selected) {
    const path =
      typeof item === 'number'
        ? params.candidates[item - 1]?.path
        : typeof item === 'string'
          ? (byName.get(item) ?? byName.get(shortName(item)) ?? params.candidates[Number(item) - 1]?.path)
          : undefined;
    if (path && !paths.includes(path)) {
      paths.push(path);
    }
  }
  return paths.slice(0, params.limit);
}

/**
 * `memory/complete`'s messages for a chat API with only user and assistant
 * turns (VS Code's): system text leads the next user turn, and the last user
 * turn ends by asking for JSON that satisfies `responseSchema`.
 */
export function completionMessages(params: CompleteParams): { role: 'user' | 'assistant'; content: string }[] {
  const out: { role: 'user' | 'assistant'; content: string }[] = [];
  let pendingSystem: string[] = [];
  for (const message of params.messages) {
    if (message.role === 'system') {
      pendingSystem.push(message.content);
      continue;
    }
    const content = message.role === 'user' && pendingSystem.length ? [...pendingSystem, message.content].join('\n\n') : message.content;
    if (message.role === 'user') pendingSystem = [];
    out.push({ role: message.role, content });
  }
  if (pendingSystem.length) out.push({ role: 'user', content: pendingSystem.join('\n\n') });
  const schema = `Answer with one JSON value only, no prose, that satisfies this JSON Schema:\n${JSON.stringify(params.responseSchema)}`;
  const last = out.at(-1);
  if (last?.role === 'user') last.content += `\n\n${schema}`;
  else out.push({ role: 'user', content: schema });
  return out;
}
