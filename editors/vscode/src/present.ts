// What the user sees: quick-pick rows, the status bar, the status report.
// Plain data in, plain data out (no `vscode` import), so it is unit-tested.
import type { ConsolidateResult, ContextResult, ExplainResult, MemoryDoc, PhaseResult, StatusResult, WriteResult } from './protocol.generated';

/** A short human age, the same words as the daemon's prompt (`3 days ago`). */
export function formatAge(mtimeMs: number, nowMs: number = Date.now()): string {
  const seconds = Math.max(0, (nowMs - mtimeMs) / 1000);
  const units: [number, string, string][] = [
    [365 * 86400, 'year', 'years'],
    [30 * 86400, 'month', 'months'],
    [86400, 'day', 'days'],
    [3600, 'h', 'h'],
    [60, 'min', 'min'],
  ];
  for (const [unit, singular, plural] of units) {
    if (seconds >= unit) {
      const n = Math.floor(seconds / unit);
      return `${n} ${n === 1 ? singular : plural} ago`;
    }
  }
  return 'just now';
}

export type RecallRow =
  | { kind: 'separator'; label: string }
  | { kind: 'memory'; label: string; description: string; detail: string; doc: MemoryDoc };

function phaseLabel(phase: PhaseResult): string {
  const how = phase.phase === 'fast' ? 'fast' : phase.strategy === 'model' ? 'chosen by the model' : 'lexical';
  return `${how} · ${Math.round(phase.elapsedMs)} ms`;
}

/** One row per memory: title, then scope · type · age, then the description. */
export function memoryRow(doc: MemoryDoc, nowMs: number = Date.now()): RecallRow {
  return {
    kind: 'memory',
    label: doc.title,
    description: `${doc.scope} · ${doc.type} · ${formatAge(doc.mtimeMs, nowMs)}`,
    detail: doc.description || doc.relativePath,
    doc,
  };
}

/** The quick pick's rows: the fast phase's memories, then the refined phase's, each under a separator. */
export function recallRows(
  fast: PhaseResult | null,
  refined: PhaseResult | null,
  nowMs: number = Date.now(),
): RecallRow[] {
  const rows: RecallRow[] = [];
  for (const phase of [fast, refined]) {
    if (phase && phase.docs.length) {
      rows.push({ kind: 'separator', label: phaseLabel(phase) });
      rows.push(...phase.docs.map((doc) => memoryRow(doc, nowMs)));
    }
  }
  return rows;
}

/** The quick pick's placeholder once the recall is over. */
export function recallSummary(fast: PhaseResult | null, refined: PhaseResult | null): string {
  const count = (fast?.docs.length ?? 0) + (refined?.docs.length ?? 0);
  if (!count) {
    return 'No relevant memories';
  }
  const failure = refined?.failure ? ` (model not used: ${refined.failure})` : '';
  return `${count} ${count === 1 ? 'memory' : 'memories'} — choose one to open${failure}`;
}

/** The status bar: document count and watcher state. */
export function statusBar(status: StatusResult | undefined, state: 'starting' | 'running' | 'stopped'): {
  text: string;
  tooltip: string;
} {
  if (state === 'stopped' || (!status && state !== 'starting')) {
    return { text: '$(error) Memory', tooltip: 'Memory Recall: the daemon is not running. Click for details.' };
  }
  if (!status || !status.ready) {
    return { text: '$(sync~spin) Memory', tooltip: 'Memory Recall: indexing memories…' };
  }
  const watcher = status.watcher;
  const healthy = watcher.state === 'watching' || watcher.state === 'polling';
  const icon = watcher.state === 'failed' ? '$(warning)' : healthy ? '$(book)' : '$(circle-slash)';
  const watch =
    watcher.state === 'watching'
      ? 'watching for changes'
      : watcher.state === 'polling'
        ? 'polling for changes'
        : `watcher ${watcher.state}${watcher.detail ? `: ${watcher.detail}` : ''}`;
  return {
    text: `${icon} ${status.documents}`,
    tooltip: `Memory Recall: ${status.documents} ${status.documents === 1 ? 'memory' : 'memories'}, ${watch}. Click for status.`,
  };
}

/** `Memory: Show Status` as plain text lines. */
export function statusReport(status: StatusResult): string[] {
  const lines = [
    `Memory Recall — protocol v${status.protocolVersion}${status.ready ? '' : ' (indexing…)'}`,
    `${status.documents} ${status.documents === 1 ? 'memory' : 'memories'}, index built in ${status.indexBuildMs === null ? '—' : `${Math.round(status.indexBuildMs)} ms`}`,
    `watcher: ${status.watcher.state}${status.watcher.detail ? ` (${status.watcher.detail})` : ''}`,
    `selector: ${status.selector}, ranker: ${status.ranker}`,
    '',
    'Roots:',
    ...status.roots.map(
      (root) => `  ${root.scope.padEnd(7)} ${String(root.documents).padStart(5)}  ${root.path}${root.exists ? '' : '  (missing)'}`,
    ),
  ];
  if (status.skipped.length) {
    lines.push('', `Skipped files (${status.skipped.length}):`);
    lines.push(...status.skipped.map((s) => `  ${s.path}: ${s.reason}`));
  }
  const r = status.recall;
  lines.push(
    '',
    `Recalls: ${r.recalls ?? 0} (${r.completed ?? 0} completed, ${r.cancelled ?? 0} cancelled, ${r.failed ?? 0} failed), ` +
      `selector failures: ${r.selectorFailures ?? 0}`,
  );
  if (status.sync?.length) {
    lines.push('', 'Sync (git):');
    for (const s of status.sync) {
      lines.push(`  ${s.path} → ${s.remote ?? '(no remote)'} (${s.branch}): ${s.auto ? 'automatic' : 'manual'}, ${s.state}`);
      lines.push(`    ${s.ahead} ahead, ${s.behind} behind, ${s.pending} to commit${s.lastError && s.state !== 'idle' ? `; last error: ${s.lastError}` : ''}`);
      lines.push(...(s.held ?? []).map((h) => `    stays here: ${h.path} (${h.reason})`));
      lines.push(...(s.secrets ?? []).map((found) => `    history: ${found}`));
    }
  }
  return lines;
}

/** One line for what a write did: `Remembered "Use pnpm" (created)`, or why nothing was written. */
export function writeSummary(result: Pick<WriteResult, 'skipped'> & { operations?: WriteResult['operations'] }, verb: string): {
  text: string;
  ok: boolean;
} {
  const operations = result.operations ?? [];
  if (!operations.length) {
    const skipped = result.skipped.map((s) => `${s.reason}: ${s.message}`).join('; ');
    return { text: `Nothing was written${skipped ? ` (${skipped})` : ''}.`, ok: false };
  }
  const parts = operations.map((o) => `"${o.title}" (${o.action}${o.reason ? `: ${o.reason}` : ''})`);
  return { text: `${verb} ${parts.join(', ')}.`, ok: true };
}

/** The counts a consolidation plan would change, for the confirmation. */
export function consolidationCounts(result: ConsolidateResult): { merges: number; archived: number; supersessions: number; notices: number } {
  const sum = (f: (r: ConsolidateResult['reports'][number]) => number) => result.reports.reduce((n, r) => n + f(r), 0);
  return {
    merges: sum((r) => r.merges.length),
    archived: sum((r) => r.archived.length),
    supersessions: sum((r) => r.supersessions.length),
    notices: sum((r) => r.notices.length),
  };
}

/** A consolidation's reports as markdown lines (the dry run's preview, or what was done). */
export function consolidationReport(result: ConsolidateResult): string[] {
  const lines = [`# Memory consolidation — ${result.dryRun ? 'preview (nothing changed yet)' : 'done'}`, ''];
  if (!result.reports.length) {
    lines.push('No writable memory root to consolidate.');
  }
  for (const report of result.reports) {
    lines.push(`## ${report.scope}: ${report.root}`, '');
    lines.push(`${report.before} memories → ${report.after} (capacity ${report.capacity}); ${report.pairsJudged} pairs judged`);
    if (report.operation) lines.push(`Operation \`${report.operation}\` (Memory: Undo Last Memory Change puts it all back)`);
    lines.push('');
    if (report.merges.length) {
      lines.push('### Merges', '');
      for (const m of report.merges) lines.push(`- ${m.mergedFrom.join(', ')} → ${m.into} (${m.addedLines} new lines)`);
      lines.push('');
    }
    if (report.supersessions.length) {
      lines.push('### Newer wins', '');
      for (const s of report.supersessions) lines.push(`- ${s.path} supersedes ${s.supersedes.join(', ')}`);
      lines.push('');
    }
    if (report.archived.length) {
      lines.push('### Archived (restorable)', '');
      for (const a of report.archived) lines.push(`- ${a.path} — ${a.cause}: ${a.reason}`);
      lines.push('');
    }
    if (report.notices.length) {
      lines.push('### Only reported', '');
      for (const n of report.notices) lines.push(`- ${n.kind}: ${n.path} — ${n.reason}`);
      lines.push('');
    }
    if (!report.merges.length && !report.supersessions.length && !report.archived.length && !report.notices.length) {
      lines.push('Nothing to do here.', '');
    }
  }
  for (const skipped of result.skipped ?? []) lines.push(`Skipped: ${skipped.reason}: ${skipped.message}`);
  return lines;
}

/** memory/context as a document: the prompt itself, then what did not fit. */
export function contextReport(result: ContextResult): string[] {
  const lines = [
    `<!-- Always-loaded memory: ${result.docs.length} memories, ${result.usedChars} of ${result.budgetChars} characters -->`,
    '',
    result.prompt || '_No memory is marked `always: true`._',
  ];
  if (result.truncated.length) {
    lines.push('', '---', '', `Did not fit the ${result.budgetChars}-character budget:`, '');
    for (const t of result.truncated) lines.push(`- ${t.title} (${t.relativePath}): ${t.reason}`);
  }
  return lines;
}

/** memory/explain as a markdown document: the verdict in words, then the numbers behind it. */
export function explainReport(result: ExplainResult): string[] {
  const lines = [`# Why: ${result.title ?? result.relativePath ?? result.path}`, '', result.summary, ''];
  if (!result.found) {
    lines.push(`No memory the daemon serves has the path ${result.path}.`);
    return lines;
  }
  lines.push(`- query: ${JSON.stringify(result.query)} (terms: ${result.tokens.join(', ') || 'none'}), ranker ${result.ranker}`);
  lines.push(`- rank: ${result.rank === null ? 'not ranked' : `${result.rank} of ${result.ranked}`}${result.score === null ? '' : `, score ${result.score}`}`);
  for (const phase of result.phases) {
    lines.push(`- ${phase.phase} phase: ${phase.delivered ? 'delivered' : 'not delivered'}${phase.rank === null ? '' : ` (#${phase.rank})`} — ${phase.reason}`);
  }
  if (result.silence) {
    lines.push(`- silence rule: covers ${Math.round(result.silence.coverage * 100)}% of the query (threshold ${Math.round(result.silence.threshold * 100)}%)${result.silence.silenced ? ', silenced' : ''}`);
  }
  if (result.network) lines.push(`- memory network: ${result.network.describe} (activation ${result.network.activation.toFixed(2)})`);
  if (result.stale) lines.push(`- stale: ${result.stale.reason}`);
  if (result.noise) lines.push('- dropped as noise: it only documents a tool the agent used lately');
  if (result.excluded) lines.push("- excluded: it was in the recall's excludePaths (already in the agent's context)");
  if (result.parts.length) {
    lines.push('', '| field | term | points |', '| --- | --- | --- |');
    for (const part of result.parts) lines.push(`| ${part.field} | ${part.term ?? '—'} | ${part.value} |`);
  }
  return lines;
}
