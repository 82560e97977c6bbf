// The "Memories" view's data: memory/tree's topic tree, with each memory's
// flags from memory/list (pinned, always, contentHash) and its staleness
// (an `expires` date passed, or a consolidation dry run's `stale` notice).
// Plain data in, plain data out (no `vscode` import), so it is unit-tested.
import type { ConsolidateResult, ListedMemory, ListResult, TreeMember, TreeNode, TreeResult } from './protocol.generated';

export interface MemoryLeaf {
  kind: 'memory';
  path: string;
  relativePath: string;
  scope: TreeMember['scope'];
  title: string;
  /** The category slug it sits under. */
  category: string;
  pinned: boolean;
  always: boolean;
  /** Why it may be outdated, or undefined. */
  stale?: string;
  contentHash?: string;
  description?: string;
}

export interface CategoryBranch {
  kind: 'category';
  slug: string;
  label: string;
  count: number;
  children: (CategoryBranch | MemoryLeaf)[];
}

export type MemoryTreeNode = CategoryBranch | MemoryLeaf;

/** Why each memory is stale: a dry run's `stale` notices, and `expires` dates before `today` (YYYY-MM-DD). */
export function staleReasons(
  listed: ListedMemory[],
  dryRun: ConsolidateResult | undefined,
  today: string = new Date().toISOString().slice(0, 10),
): Map<string, string> {
  const reasons = new Map<string, string>();
  for (const report of dryRun?.reports ?? []) {
    for (const notice of report.notices) {
      if (notice.kind === 'stale') reasons.set(notice.path, notice.reason);
    }
  }
  for (const memory of listed) {
    if (memory.expires && memory.expires < today && !reasons.has(memory.path)) {
      reasons.set(memory.path, `expired on ${memory.expires}`);
    }
  }
  return reasons;
}

/** The categories that hold memories (empty ones left out), each with its subcategories, then its own members. */
export function memoryTree(tree: TreeResult, list: ListResult, stale: Map<string, string>): CategoryBranch[] {
  const byPath = new Map(list.memories.map((m) => [m.path, m]));
  const leaf = (member: TreeMember, category: string): MemoryLeaf => {
    const listed = byPath.get(member.path);
    return {
      kind: 'memory',
      path: member.path,
      relativePath: member.relativePath,
      scope: member.scope,
      title: member.title,
      category,
      pinned: listed?.pinned ?? false,
      always: listed?.always ?? false,
      stale: stale.get(member.path),
      contentHash: listed?.contentHash,
      description: listed?.description,
    };
  };
  const branch = (node: TreeNode): CategoryBranch => ({
    kind: 'category',
    slug: node.slug,
    label: node.label,
    count: node.count,
    children: [
      ...(node.children ?? []).filter((child) => child.count > 0).map(branch),
      ...node.members.map((member) => leaf(member, node.slug)).sort((a, b) => a.title.localeCompare(b.title)),
    ],
  });
  return tree.categories.filter((node) => node.count > 0).map(branch);
}

/** How a memory shows in the view: its title, then scope and marks; the context value drives its menu. */
export function memoryItem(leaf: MemoryLeaf): {
  label: string;
  description: string;
  tooltip: string;
  contextValue: string;
  icon: string;
} {
  const marks = [leaf.pinned ? 'pinned' : '', leaf.always ? 'always loaded' : '', leaf.stale ? 'stale' : ''].filter(Boolean);
  const tooltip = [
    leaf.title,
    leaf.description ?? '',
    `${leaf.scope} · ${leaf.relativePath}`,
    leaf.pinned ? 'Pinned: never forgotten by consolidation.' : '',
    leaf.stale ? `May be outdated: ${leaf.stale}` : '',
  ].filter(Boolean);
  return {
    label: leaf.title,
    description: [leaf.scope, ...marks].join(' · '),
    tooltip: tooltip.join('\n'),
    // memory / memory.pinned (+ .stale): `viewItem =~ /^memory/` and the pin or unpin entry.
    contextValue: `memory${leaf.pinned ? '.pinned' : ''}${leaf.stale ? '.stale' : ''}`,
    icon: leaf.stale ? 'warning' : leaf.pinned ? 'pinned' : 'note',
  };
}
