// Generated from ../../protocol/schema/protocol.schema.json by scripts/gen-protocol.mjs.
// Do not edit: run `npm run gen:protocol` after `python -m memory_recall.protocol.schema_gen`.

export const PROTOCOL_VERSION = 1;

export const PROTOCOL_METHODS = {
  'notifications': {
    'memory/fastResult': 'PhaseNotification',
    'memory/refinedResult': 'PhaseNotification',
    'telemetry/event': 'RecallTelemetry'
  },
  'requests': {
    'memory/context': 'ContextParams → ContextResult',
    'memory/recall': 'RecallParams → RecallResult',
    'memory/status': '→ StatusResult',
    'memory/tree': 'TreeParams → TreeResult'
  },
  'serverRequests': {
    'memory/select': 'SelectParams → SelectResult'
  }
} as const;

export interface ProtocolModels {
  CatalogCountersStatus?: CatalogCountersStatus;
  ContextDoc?: ContextDoc;
  ContextOmission?: ContextOmission;
  ContextOptions?: ContextOptions;
  ContextParams?: ContextParams;
  ContextResult?: ContextResult;
  InitializationOptions?: InitializationOptions;
  MemoryDoc?: MemoryDoc;
  OrganiseOptions?: OrganiseOptions;
  PhaseNotification?: PhaseNotification;
  PhaseResult?: PhaseResult;
  RecallCounters?: RecallCounters;
  RecallParams?: RecallParams;
  RecallResult?: RecallResult;
  RecallTelemetry?: RecallTelemetry;
  RootOption?: RootOption;
  RootStatus?: RootStatus;
  RuntimeStatus?: RuntimeStatus;
  SelectCandidate?: SelectCandidate;
  SelectParams?: SelectParams;
  SelectResult?: SelectResult;
  SelectorOptions?: SelectorOptions;
  SkippedFileStatus?: SkippedFileStatus;
  StaleMark?: StaleMark;
  StatusResult?: StatusResult;
  TreeMember?: TreeMember;
  TreeNode?: TreeNode;
  TreeParams?: TreeParams;
  TreeResult?: TreeResult;
  WatcherStatus?: WatcherStatus;
}
export interface CatalogCountersStatus {
  removals: number;
  scans: number;
  skippedUpdates: number;
  upserts: number;
}
export interface ContextDoc {
  /**
   * its section's size in the prompt
   */
  chars: number;
  path: string;
  relativePath: string;
  scope: 'project' | 'user';
  title: string;
  type: 'user' | 'feedback' | 'project' | 'reference';
}
export interface ContextOmission {
  /**
   * its section's size in the prompt
   */
  chars: number;
  path: string;
  reason: string;
  relativePath: string;
  scope: 'project' | 'user';
  title: string;
  type: 'user' | 'feedback' | 'project' | 'reference';
}
/**
 * The always-loaded memories (SPEC §10 `memory/context`).
 */
export interface ContextOptions {
  /**
   * characters of the block (default 4000)
   */
  budgetChars?: number | null;
}
/**
 * `memory/context`: the always-loaded block (`always: true` memories).
 */
export interface ContextParams {
  /**
   * characters; default: context.budgetChars of initialize, else 4000
   */
  budgetChars?: number | null;
}
/**
 * `memory/context` result: what fits, in order, and what did not (never dropped silently).
 */
export interface ContextResult {
  budgetChars: number;
  docs: ContextDoc[];
  /**
   * `## Always-loaded memory` and one section per doc; '' if none
   */
  prompt: string;
  /**
   * the always-loaded memories that did not fit the budget
   */
  truncated: ContextOmission[];
  usedChars: number;
}
/**
 * `initialize` → `initializationOptions` (all optional).
 */
export interface InitializationOptions {
  context?: ContextOptions;
  organise?: OrganiseOptions;
  /**
   * fast-phase ranker by name; default: the server's default
   */
  ranker?: string | null;
  /**
   * Default: project <workspace>/.memory and user <user data dir>/memory-recall/memory
   */
  roots?: RootOption[] | null;
  selector?: SelectorOptions;
  watch?: boolean;
}
/**
 * Retention and consolidation (SPEC §10).
 */
export interface OrganiseOptions {
  /**
   * memories per root before the lowest-retention ones are archived (default 300)
   */
  capacity?: number | null;
}
/**
 * A memory directory and its scope.
 */
export interface RootOption {
  /**
   * Follow symlinks that point outside the root.
   */
  followSymlinks?: boolean;
  path: string;
  scope?: 'project' | 'user';
}
/**
 * Which model picks the refined memories.
 */
export interface SelectorOptions {
  /**
   * http: name of the environment variable holding the API key
   */
  apiKeyEnv?: string | null;
  kind?: 'client' | 'http' | 'none';
  /**
   * http: model name
   */
  model?: string | null;
  /**
   * selector deadline; never above the 30 s ceiling
   */
  timeoutMs?: number | null;
  /**
   * http: base URL of an OpenAI-compatible API, e.g. http://127.0.0.1:11434/v1
   */
  url?: string | null;
}
/**
 * One delivered memory.
 */
export interface MemoryDoc {
  /**
   * the body window, at most 1,200 characters
   */
  body: string;
  description: string;
  mtimeMs: number;
  path: string;
  relativePath: string;
  scope: 'project' | 'user';
  score: number;
  /**
   * set when a cited path is gone or `expires` has passed; the memory is delivered after the fresh ones of its phase
   */
  stale?: StaleMark | null;
  title: string;
  truncated: boolean;
  type: 'user' | 'feedback' | 'project' | 'reference';
}
/**
 * Why a delivered memory may be outdated (SPEC §10).
 */
export interface StaleMark {
  /**
   * e.g. 'cites src/app/pay.ts, which no longer exists', 'expired on 2025-06-30'
   */
  reason: string;
}
/**
 * `memory/fastResult` and `memory/refinedResult` params.
 */
export interface PhaseNotification {
  docs: MemoryDoc[];
  /**
   * since the request arrived
   */
  elapsedMs: number;
  /**
   * why the model's answer was not used, when it was not
   */
  failure?: string | null;
  phase: 'fast' | 'refined';
  /**
   * ready-to-inject markdown, empty when there are no docs
   */
  prompt: string;
  requestId: string | number;
  status: 'delivered' | 'already_delivered' | 'no_relevant_results';
  strategy: 'heuristic' | 'model' | 'none';
  token?: string | number | null;
}
/**
 * One phase of a recall.
 */
export interface PhaseResult {
  docs: MemoryDoc[];
  /**
   * since the request arrived
   */
  elapsedMs: number;
  /**
   * why the model's answer was not used, when it was not
   */
  failure?: string | null;
  phase: 'fast' | 'refined';
  /**
   * ready-to-inject markdown, empty when there are no docs
   */
  prompt: string;
  status: 'delivered' | 'already_delivered' | 'no_relevant_results';
  strategy: 'heuristic' | 'model' | 'none';
}
export interface RecallCounters {
  active?: number;
  cancelled?: number;
  completed?: number;
  failed?: number;
  fastDelivered?: number;
  recalls?: number;
  refinedDelivered?: number;
  selectorFailures?: number;
}
/**
 * `memory/recall` params.
 */
export interface RecallParams {
  excludePaths?: string[];
  /**
   * most documents in the refined phase
   */
  limit?: number | null;
  query: string;
  recentTools?: string[];
  /**
   * client-chosen id echoed in every notification of this recall
   */
  token?: string | number | null;
}
/**
 * `memory/recall` result, sent after the lifecycle ends.
 */
export interface RecallResult {
  docsScanned: number;
  durationMs: number;
  fast: PhaseResult | null;
  refined: PhaseResult | null;
  requestId: string | number;
  token?: string | number | null;
}
/**
 * The one terminal `telemetry/event` of every recall.
 */
export interface RecallTelemetry {
  docsScanned: number;
  /**
   * documents delivered over both phases
   */
  docsSelected: number;
  durationMs: number;
  event?: 'memory/recall';
  failure?: string | null;
  fastDocs: number;
  outcome: 'completed' | 'cancelled' | 'failed';
  /**
   * the last phase delivered
   */
  phase: ('fast' | 'refined') | null;
  refinedDocs: number;
  requestId: string | number;
  selectorKind: 'client' | 'http' | 'none';
  selectorLatencyMs: number | null;
  status: ('delivered' | 'already_delivered' | 'no_relevant_results') | null;
  strategy: ('heuristic' | 'model' | 'none') | null;
  token?: string | number | null;
}
export interface RootStatus {
  documents: number;
  exists: boolean;
  path: string;
  scope: 'project' | 'user';
}
/**
 * What the process holds right now: a leak shows as a count that stays up after load.
 */
export interface RuntimeStatus {
  /**
   * per-recall exclusion sets alive (one per recall)
   */
  exclusionSets: number;
  /**
   * requests the daemon sent to the host (memory/select) still awaiting a reply
   */
  pendingRequests: number;
  /**
   * asyncio tasks alive in the daemon
   */
  tasks: number;
}
export interface SelectCandidate {
  description: string;
  mtimeMs: number;
  path: string;
  type: 'user' | 'feedback' | 'project' | 'reference';
}
export interface SelectParams {
  candidates: SelectCandidate[];
  limit: number;
  query: string;
  recentTools: string[];
}
export interface SelectResult {
  selected: string[];
}
export interface SkippedFileStatus {
  path: string;
  reason: string;
}
/**
 * `memory/status` result.
 */
export interface StatusResult {
  catalog: CatalogCountersStatus;
  documents: number;
  indexBuildMs: number | null;
  protocolVersion: number;
  ranker: string;
  ready: boolean;
  recall: RecallCounters;
  roots: RootStatus[];
  /**
   * always sent by this daemon; optional for older ones
   */
  runtime?: RuntimeStatus | null;
  selector: 'client' | 'http' | 'none';
  skipped: SkippedFileStatus[];
  watcher: WatcherStatus;
}
export interface WatcherStatus {
  detail?: string | null;
  state: 'off' | 'starting' | 'watching' | 'polling' | 'failed' | 'stopped';
}
export interface TreeMember {
  path: string;
  relativePath: string;
  scope: 'project' | 'user';
  /**
   * declared: `category:` front matter; declared-top: its category declared, the subcategory inferred; inferred: by the rules
   */
  source: 'declared' | 'declared-top' | 'inferred';
  title: string;
}
/**
 * A category or subcategory; `count` includes its subcategories' members.
 */
export interface TreeNode {
  children?: TreeNode[];
  count: number;
  label: string;
  members: TreeMember[];
  /**
   * `lessons`, `lessons/errors`: what `category:` may say
   */
  slug: string;
}
/**
 * `memory/tree`: the topic tree of one scope, or of every root.
 */
export interface TreeParams {
  scope?: ('project' | 'user') | null;
}
/**
 * `memory/tree` result: the five categories (SPEC §10 order), empty ones included.
 */
export interface TreeResult {
  categories: TreeNode[];
  total: number;
}
