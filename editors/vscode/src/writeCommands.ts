// The write side in VS Code: Remember…, Forget, Undo Last Memory Change,
// Consolidate (dry-run preview, confirm, run), pin/unpin, the always-loaded
// context, the "Memories" tree view, and the review of extraction proposals
// (accept / edit / reject). The wire is memoryClient.ts; the words are in
// present.ts and memoryTree.ts.
import { existsSync } from 'node:fs';
import * as vscode from 'vscode';

import { ExtractOutcome, MemoryClient, OperationHistory, Proposal } from './memoryClient';
import { CategoryBranch, memoryItem, MemoryLeaf, MemoryTreeNode, memoryTree, staleReasons } from './memoryTree';
import { consolidationCounts, consolidationReport, contextReport, writeSummary } from './present';
import type { ConsolidateResult, ExtractParams, WriteResult } from './protocol.generated';

/** What the commands need from the extension. */
export interface WriteHost {
  client(): Promise<MemoryClient>;
  readonly history: OperationHistory;
  showDocument(uri: vscode.Uri, lines: string[]): Promise<void>;
  readonly log: vscode.LogOutputChannel;
  /** The memories changed: refresh the tree and the status bar. */
  changed(): void;
}

export const CONSOLIDATION_URI = vscode.Uri.parse('memory-recall:Memory%20Consolidation.md');
export const CONTEXT_URI = vscode.Uri.parse('memory-recall:Always-loaded%20Memory.md');

const OPEN = 'Open';
const UNDO = 'Undo';
const FORCE = 'Remember Anyway';

/** A memory handed to a command: a tree item, a `{path}`, a path string, or nothing (then the user picks). */
type MemoryArgument = MemoryLeaf | { path: string } | string | undefined;

function argumentPath(arg: MemoryArgument): string | undefined {
  if (typeof arg === 'string') return arg;
  if (arg && typeof arg === 'object' && typeof arg.path === 'string') return arg.path;
  return undefined;
}

/** Tell the user what a write did, with Open and Undo where they apply. */
async function reportWrite(host: WriteHost, result: WriteResult, verb: string): Promise<void> {
  host.changed();
  const { text, ok } = writeSummary(result, verb);
  if (!ok) {
    void vscode.window.showWarningMessage(`Memory: ${text}`);
    return;
  }
  const first = result.operations.find((o) => o.action !== 'archived' && o.action !== 'deleted');
  const buttons = [...(first ? [OPEN] : []), UNDO];
  const choice = await vscode.window.showInformationMessage(`Memory: ${text}`, ...buttons);
  if (choice === OPEN && first) {
    await vscode.window.showTextDocument(vscode.Uri.file(first.path), { preview: true });
  } else if (choice === UNDO) {
    await undoLast(host);
  }
}

/** Memory: Remember… — the selection (or what the user types) as a memory. */
export async function rememberCommand(host: WriteHost, text?: string): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  const selected = editor && !editor.selection?.isEmpty ? editor.document.getText(editor.selection) : '';
  const value = text ?? (await vscode.window.showInputBox({
    title: 'Memory: Remember',
    prompt: 'What should your agent remember? (a fact, a rule, a lesson; the first sentence becomes its title)',
    placeHolder: 'e.g. Integration tests need the local Postgres: run `docker compose up db` first.',
    value: selected,
  }));
  if (!value?.trim()) return;
  const memory = await host.client();
  let result = await memory.remember({ text: value });
  if (!result.operations.length && result.skipped.some((s) => s.reason === 'injection')) {
    const message = result.skipped.find((s) => s.reason === 'injection')!.message;
    const choice = await vscode.window.showWarningMessage(`Memory: ${message}`, FORCE);
    if (choice !== FORCE) return;
    result = await memory.remember({ text: value, force: true });
  }
  await reportWrite(host, result, 'Remembered');
}

/** Pick one memory from memory/list. */
async function pickMemory(memory: MemoryClient, title: string): Promise<string | undefined> {
  const { memories } = await memory.list();
  if (!memories.length) {
    void vscode.window.showInformationMessage('Memory: there are no memories yet.');
    return undefined;
  }
  type Item = vscode.QuickPickItem & { path: string };
  const items: Item[] = memories.map((m) => ({
    label: m.title,
    description: `${m.scope} · ${m.relativePath}${m.pinned ? ' · pinned' : ''}`,
    detail: m.description,
    path: m.path,
  }));
  const chosen = await vscode.window.showQuickPick(items, { title, matchOnDescription: true, matchOnDetail: true });
  return chosen?.path;
}

/** Memory: Forget — archive a memory (restorable; Undo puts it back). */
export async function forgetCommand(host: WriteHost, arg?: MemoryArgument): Promise<void> {
  const memory = await host.client();
  const path = argumentPath(arg) ?? (await pickMemory(memory, 'Memory: Forget which memory?'));
  if (!path) return;
  const result = await memory.forget({ path, reason: 'forgotten from VS Code' });
  await reportWrite(host, result, 'Forgot');
}

/** Pin or unpin one memory (memory/update, against the version the view showed). */
export async function pinCommand(host: WriteHost, arg: MemoryArgument, pinned: boolean): Promise<void> {
  const memory = await host.client();
  const path = argumentPath(arg) ?? (await pickMemory(memory, pinned ? 'Memory: Pin which memory?' : 'Memory: Unpin which memory?'));
  if (!path) return;
  const ifMatch = typeof arg === 'object' && arg && 'contentHash' in arg ? arg.contentHash : undefined;
  const result = await memory.update({ path, pinned, ...(ifMatch ? { ifMatch } : {}) });
  await reportWrite(host, result, pinned ? 'Pinned' : 'Unpinned');
}

/** Memory: Undo Last Memory Change — the newest operation this window made. */
export async function undoLast(host: WriteHost): Promise<void> {
  const last = host.history.peek();
  if (!last) {
    void vscode.window.showInformationMessage('Memory: no memory change made in this window to undo.');
    return;
  }
  const memory = await host.client();
  try {
    const result = await memory.undo({ operation: last.operation });
    host.history.drop(last.operation);
    host.changed();
    void vscode.window.showInformationMessage(`Memory: undid the change to "${last.title}" (${result.operations.map((o) => o.action).join(', ') || 'nothing left to undo'}).`);
  } catch (error) {
    host.history.drop(last.operation); // already undone, or changed on disk since: it stays as it is
    throw error;
  }
}

/** Memory: Consolidate… — the dry run's report first, then, confirmed, the run. */
export async function consolidateCommand(host: WriteHost): Promise<ConsolidateResult | undefined> {
  const memory = await host.client();
  const preview = await memory.consolidate({ dryRun: true });
  await host.showDocument(CONSOLIDATION_URI, consolidationReport(preview));
  const counts = consolidationCounts(preview);
  if (!counts.merges && !counts.archived && !counts.supersessions) {
    void vscode.window.showInformationMessage(
      `Memory: nothing to consolidate${counts.notices ? ` (${counts.notices} notices in the report)` : ''}.`,
    );
    return preview;
  }
  const what = `${counts.merges} merges, ${counts.supersessions} newer-wins, ${counts.archived} archived (restorable)`;
  const choice = await vscode.window.showWarningMessage(
    `Memory: consolidate now? ${what}. It is one operation: Undo puts every file back.`,
    { modal: true },
    'Consolidate',
  );
  if (choice !== 'Consolidate') return preview;
  const done = await memory.consolidate({});
  host.changed();
  await host.showDocument(CONSOLIDATION_URI, consolidationReport(done));
  const choice2 = await vscode.window.showInformationMessage(`Memory: consolidated: ${what}.`, UNDO);
  if (choice2 === UNDO) await undoLast(host);
  return done;
}

/** Memory: Show Always-Loaded Context. */
export async function contextCommand(host: WriteHost): Promise<void> {
  const memory = await host.client();
  await host.showDocument(CONTEXT_URI, contextReport(await memory.context()));
}

/** The decision on one proposal. */
export interface ReviewDecision {
  title: string;
  decision: 'accepted' | 'edited' | 'rejected' | 'unavailable';
  result?: WriteResult;
}

const ACCEPT = 'Accept';
const EDIT = 'Edit…';
const REJECT = 'Reject';

/**
 * Show each proposal of an extraction run with `apply: false` for review.
 * Accept writes the model's item as it is (memory/update of the memory its
 * `updates` names, else memory/remember with its metadata, in its scope);
 * Edit lets the user change its text first; Reject writes nothing. A
 * projectInit proposal is accepted by running projectInit for real (it is
 * deterministic). A proposal whose text never reached VS Code (an `http`
 * model ran it) can only be reviewed by title: it is reported, not written.
 */
export async function reviewProposals(host: WriteHost, params: ExtractParams, outcome: ExtractOutcome): Promise<ReviewDecision[]> {
  const decisions: ReviewDecision[] = [];
  const memory = await host.client();
  for (const proposal of outcome.proposals) {
    const { operation, item } = proposal;
    const where = `${operation.scope}${existsSync(operation.path) ? `, changes ${operation.path}` : ''}`;
    if (!item && params.trigger !== 'projectInit') {
      void vscode.window.showWarningMessage(
        `Memory proposal "${operation.title}" (${where}): its text came from a model VS Code did not run; run the extraction with apply: true to write it.`,
      );
      decisions.push({ title: operation.title, decision: 'unavailable' });
      continue;
    }
    const summary = item ? `${item.description || item.body.slice(0, 160)}` : 'the project stack and commands, from the workspace';
    const choice = await vscode.window.showInformationMessage(
      `Memory proposal: "${operation.title}" — ${summary} (${where}${operation.reason ? `; ${operation.reason}` : ''})`,
      ACCEPT,
      EDIT,
      REJECT,
    );
    if (choice !== ACCEPT && choice !== EDIT) {
      decisions.push({ title: operation.title, decision: 'rejected' });
      continue;
    }
    const result = await acceptProposal(memory, params, proposal, choice === EDIT);
    if (!result) {
      decisions.push({ title: operation.title, decision: 'rejected' });
      continue;
    }
    decisions.push({ title: operation.title, decision: choice === EDIT ? 'edited' : 'accepted', result });
    await reportWrite(host, result, choice === EDIT ? 'Remembered (edited)' : 'Remembered');
  }
  return decisions;
}

async function acceptProposal(memory: MemoryClient, params: ExtractParams, proposal: Proposal, edit: boolean): Promise<WriteResult | undefined> {
  const { operation, item } = proposal;
  if (!item) {
    // projectInit: the same deterministic reading of the workspace, applied; edited in its file.
    const result = await memory.extract({ ...params, apply: true });
    if (edit && result.operations[0]) {
      await vscode.window.showTextDocument(vscode.Uri.file(result.operations[0].path), { preview: false });
    }
    return result;
  }
  let body = item.body;
  if (edit) {
    const edited = await vscode.window.showInputBox({
      title: `Memory proposal: ${operation.title}`,
      prompt: 'Edit the memory before it is written (Escape rejects it)',
      value: item.body,
    });
    if (!edited?.trim()) return undefined;
    body = edited;
  }
  const type = ['user', 'feedback', 'project', 'reference'].includes(item.type) ? (item.type as 'user') : undefined;
  if (item.updates && existsSync(operation.path)) {
    // The model named the memory its item changes: that file, not a new one.
    return memory.update({ path: operation.path, title: operation.title, description: item.description, body, ...(type ? { type } : {}) });
  }
  // Otherwise the daemon's conflict rules decide again, as they did for the proposal
  // (the same fact again stays `unchanged`; a changed fact rewrites the old memory).
  return memory.remember({
    text: body,
    title: operation.title,
    description: item.description,
    scope: operation.scope,
    ...(type ? { type } : {}),
    ...(item.category ? { category: item.category } : {}),
  });
}

/** The "Memories" view: categories → memories, stale and pinned marked. */
export class MemoryTreeProvider implements vscode.TreeDataProvider<MemoryTreeNode> {
  private readonly changed = new vscode.EventEmitter<MemoryTreeNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private roots: CategoryBranch[] | undefined;

  constructor(private readonly host: Pick<WriteHost, 'client' | 'log'>) {}

  refresh(): void {
    this.roots = undefined;
    this.changed.fire(undefined);
  }

  async getChildren(node?: MemoryTreeNode): Promise<MemoryTreeNode[]> {
    if (node) return node.kind === 'category' ? node.children : [];
    this.roots ??= await this.load();
    return this.roots;
  }

  private async load(): Promise<CategoryBranch[]> {
    const memory = await this.host.client();
    const [tree, list] = await Promise.all([memory.tree(), memory.list()]);
    // Staleness is what consolidation's orient step finds (cited paths gone, expired dates);
    // a dry run changes nothing. Another daemon consolidating right now only loses the marks.
    const dryRun = await memory.consolidate({ dryRun: true }).catch((error) => {
      this.host.log.warn(`stale marks unavailable: ${error instanceof Error ? error.message : String(error)}`);
      return undefined;
    });
    return memoryTree(tree, list, staleReasons(list.memories, dryRun));
  }

  getTreeItem(node: MemoryTreeNode): vscode.TreeItem {
    if (node.kind === 'category') {
      const item = new vscode.TreeItem(node.label, vscode.TreeItemCollapsibleState.Collapsed);
      item.description = String(node.count);
      item.contextValue = 'category';
      item.id = `category:${node.slug}`;
      return item;
    }
    const shown = memoryItem(node);
    const item = new vscode.TreeItem(shown.label, vscode.TreeItemCollapsibleState.None);
    item.description = shown.description;
    item.tooltip = shown.tooltip;
    item.contextValue = shown.contextValue;
    item.iconPath = new vscode.ThemeIcon(shown.icon);
    item.resourceUri = vscode.Uri.file(node.path);
    item.id = `memory:${node.category}:${node.path}`;
    item.command = { command: 'memoryRecall.openMemory', title: 'Open', arguments: [node] };
    return item;
  }
}
