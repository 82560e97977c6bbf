// Generated from ../../protocol/schema/protocol.schema.json by scripts/gen-protocol.mjs.
// Do not edit: run `npm run gen:protocol` after `python -m memory_recall.protocol.schema_gen`.

export const PROTOCOL_VERSION = 2;

export const PROTOCOL_METHODS = {
  'clientNotifications': {
    'memory/observe': 'ObserveParams'
  },
  'notifications': {
    'memory/fastResult': 'PhaseNotification',
    'memory/refinedResult': 'PhaseNotification',
    'memory/suggestion': 'SuggestionNotification',
    'telemetry/event': 'RecallTelemetry'
  },
  'requests': {
    'memory/confirm': 'ProposalParams → WriteResult',
    'memory/consolidate': 'ConsolidateParams → ConsolidateResult',
    'memory/context': 'ContextParams → ContextResult',
    'memory/explain': 'ExplainParams → ExplainResult',
    'memory/extract': 'ExtractParams → ExtractResult',
    'memory/feedback': 'FeedbackParams → FeedbackResult (also a notification)',
    'memory/forget': 'ForgetParams → WriteResult',
    'memory/history': 'HistoryParams → HistoryResult',
    'memory/list': 'ListParams → ListResult',
    'memory/proposals': 'ProposalsParams → ProposalsResult',
    'memory/recall': 'RecallParams → RecallResult',
    'memory/reject': 'ProposalParams → RejectResult',
    'memory/remember': 'RememberParams → WriteResult',
    'memory/restore': 'RestoreParams → WriteResult',
    'memory/search': 'SearchParams → SearchResult',
    'memory/status': '→ StatusResult',
    'memory/tree': 'TreeParams → TreeResult',
    'memory/undo': 'UndoParams → WriteResult',
    'memory/update': 'UpdateParams → WriteResult'
  },
  'serverRequests': {
    'memory/complete': 'CompleteParams → CompleteResult',
    'memory/select': 'SelectParams → SelectResult'
  }
} as const;

export interface ProtocolModels {
  CatalogCountersStatus?: CatalogCountersStatus;
  CategoryUsage?: CategoryUsage;
  ChatMessage?: ChatMessage;
  CompleteParams?: CompleteParams;
  CompleteResult?: CompleteResult;
  ConsolidateParams?: ConsolidateParams;
  ConsolidateResult?: ConsolidateResult;
  ConsolidationArchive?: ConsolidationArchive;
  ConsolidationMerge?: ConsolidationMerge;
  ConsolidationNotice?: ConsolidationNotice;
  ConsolidationReport?: ConsolidationReport;
  ConsolidationSupersede?: ConsolidationSupersede;
  ContextDoc?: ContextDoc;
  ContextOmission?: ContextOmission;
  ContextOptions?: ContextOptions;
  ContextParams?: ContextParams;
  ContextResult?: ContextResult;
  EmbeddingsOptions?: EmbeddingsOptions;
  Excerpt?: Excerpt;
  ExplainParams?: ExplainParams;
  ExplainResult?: ExplainResult;
  ExtractCounters?: ExtractCounters;
  ExtractFile?: ExtractFile;
  ExtractModelStatus?: ExtractModelStatus;
  ExtractParams?: ExtractParams;
  ExtractResult?: ExtractResult;
  ExtractTranscriptStatus?: ExtractTranscriptStatus;
  ExtractTurn?: ExtractTurn;
  FeedbackItem?: FeedbackItem;
  FeedbackParams?: FeedbackParams;
  FeedbackResult?: FeedbackResult;
  ForgetParams?: ForgetParams;
  HistoryEntry?: HistoryEntry;
  HistoryParams?: HistoryParams;
  HistoryResult?: HistoryResult;
  HostCapabilities?: HostCapabilities;
  IndexStatus?: IndexStatus;
  InitializationOptions?: InitializationOptions;
  ListParams?: ListParams;
  ListResult?: ListResult;
  ListedMemory?: ListedMemory;
  MemoryDoc?: MemoryDoc;
  MemoryStatistics?: MemoryStatistics;
  NetworkExplain?: NetworkExplain;
  NetworkHop?: NetworkHop;
  NetworkStatus?: NetworkStatus;
  ObserveParams?: ObserveParams;
  OrganiseOptions?: OrganiseOptions;
  PhaseExplain?: PhaseExplain;
  PhaseNotification?: PhaseNotification;
  PhaseResult?: PhaseResult;
  Proposal?: Proposal;
  ProposalParams?: ProposalParams;
  ProposalsParams?: ProposalsParams;
  ProposalsResult?: ProposalsResult;
  RecallCounters?: RecallCounters;
  RecallParams?: RecallParams;
  RecallResult?: RecallResult;
  RecallTelemetry?: RecallTelemetry;
  RejectResult?: RejectResult;
  RememberParams?: RememberParams;
  RestoreParams?: RestoreParams;
  RootOption?: RootOption;
  RootStatus?: RootStatus;
  RuntimeStatus?: RuntimeStatus;
  ScorePart?: ScorePart;
  SearchDoc?: SearchDoc;
  SearchParams?: SearchParams;
  SearchResult?: SearchResult;
  SearchSubtree?: SearchSubtree;
  SelectCandidate?: SelectCandidate;
  SelectParams?: SelectParams;
  SelectResult?: SelectResult;
  SelectorOptions?: SelectorOptions;
  SemanticReport?: SemanticReport;
  SemanticStatus?: SemanticStatus;
  SilenceExplain?: SilenceExplain;
  SkippedFileStatus?: SkippedFileStatus;
  StaleMark?: StaleMark;
  StaleMemory?: StaleMemory;
  StatusResult?: StatusResult;
  SuggestedDoc?: SuggestedDoc;
  SuggestionNotification?: SuggestionNotification;
  SuggestionStatus?: SuggestionStatus;
  SuggestionTrigger?: SuggestionTrigger;
  SupersededMark?: SupersededMark;
  SyncHeldFile?: SyncHeldFile;
  SyncOptions?: SyncOptions;
  SyncRootStatus?: SyncRootStatus;
  TreeMember?: TreeMember;
  TreeNode?: TreeNode;
  TreeParams?: TreeParams;
  TreeResult?: TreeResult;
  UndoParams?: UndoParams;
  UpdateParams?: UpdateParams;
  WatcherStatus?: WatcherStatus;
  WriteOperation?: WriteOperation;
  WriteOptions?: WriteOptions;
  WriteResult?: WriteResult;
  WriteSkipped?: WriteSkipped;
  WriteStatus?: WriteStatus;
}
export interface CatalogCountersStatus {
  removals: number;
  scans: number;
  skippedUpdates: number;
  upserts: number;
}
/**
 * `memory/status` → `usage`: one category's statistics (summed over its memories).
 */
export interface CategoryUsage {
  /**
   * e.g. 'lessons/errors'
   */
  category: string;
  /**
   * times its memories were sent in a phase
   */
  delivered: number;
  ignored: number;
  memories: number;
  /**
   * times its memories were among a recall's candidates
   */
  recalled: number;
  /**
   * times a host said its model used one (memory/feedback)
   */
  used: number;
}
export interface ChatMessage {
  content: string;
  role: 'system' | 'user' | 'assistant';
}
/**
 * `memory/complete`: the daemon asks the host's model for one JSON answer.
 */
export interface CompleteParams {
  maxTokens: number;
  messages: ChatMessage[];
  /**
   * JSON Schema the answer's content must satisfy (it is validated anyway)
   */
  responseSchema: {
    [k: string]: unknown;
  };
  task: 'extract' | 'reconcile' | 'consolidate';
}
export interface CompleteResult {
  /**
   * the model's answer: JSON text per responseSchema
   */
  content: string;
}
/**
 * `memory/consolidate`: merge duplicates, newer wins, prune to capacity, rebuild MEMORY.md.
 */
export interface ConsolidateParams {
  /**
   * report the plan, change nothing
   */
  dryRun?: boolean;
  /**
   * only the roots of this scope
   */
  scope?: ('project' | 'user' | 'team') | null;
}
/**
 * `memory/consolidate` result: the reports, and the write result of what was carried out.
 */
export interface ConsolidateResult {
  dryRun: boolean;
  indexes?: IndexStatus[];
  operations?: WriteOperation[];
  reports: ConsolidationReport[];
  skipped?: WriteSkipped[];
}
/**
 * A root's MEMORY.md: its lines against the cap, and the memories that do not fit.
 */
export interface IndexStatus {
  cap: number;
  lines: number;
  listed: number;
  /**
   * the first of them, by path inside the root
   */
  omitted: string[];
  /**
   * memories without a line: the cap is reached
   */
  omittedCount: number;
  path: string;
  /**
   * why the file could not be rewritten
   */
  problem?: string | null;
}
/**
 * One thing an operation did (or, `proposed`, would do).
 */
export interface WriteOperation {
  action:
    | 'created'
    | 'updated'
    | 'merged'
    | 'unchanged'
    | 'archived'
    | 'restored'
    | 'deleted'
    | 'proposed';
  /**
   * the operation id: memory/undo takes it
   */
  operation: string;
  path: string;
  /**
   * action `proposed` of an agent's write the user must confirm: the id memory/confirm and memory/reject take
   */
  proposal?: string | null;
  /**
   * why: the conflict verdict, the reason
   */
  reason?: string | null;
  scope: 'project' | 'user' | 'team';
  title: string;
}
/**
 * One root's consolidation: what it found and did (or, in a dry run, would do).
 */
export interface ConsolidationReport {
  after: number;
  archived: ConsolidationArchive[];
  before: number;
  capacity: number;
  elapsedMs: {
    [k: string]: number;
  };
  merges: ConsolidationMerge[];
  notices: ConsolidationNotice[];
  /**
   * the journal operation: undo takes it
   */
  operation?: string | null;
  pairsJudged: number;
  root: string;
  scope: 'project' | 'user' | 'team';
  supersessions: ConsolidationSupersede[];
}
export interface ConsolidationArchive {
  cause: 'merged' | 'superseded' | 'covered' | 'capacity';
  /**
   * the memory holding its content or fact
   */
  into?: string | null;
  path: string;
  reason: string;
  /**
   * its score, when over capacity
   */
  retention?: number | null;
}
export interface ConsolidationMerge {
  addedLines: number;
  /**
   * the newest duplicate, which keeps every distinct line
   */
  into: string;
  /**
   * who wrote the merged text: the line-keeping rules or a model
   */
  mergedBy?: 'rules' | 'model';
  mergedFrom: string[];
  /**
   * why the rules' text was kept although a model is configured
   */
  note?: string | null;
}
/**
 * Something consolidation saw and only reports (it never changes these).
 */
export interface ConsolidationNotice {
  kind: 'stale' | 'protected' | 'possible' | 'over-capacity';
  path: string;
  reason: string;
}
export interface ConsolidationSupersede {
  /**
   * the newer memory, kept
   */
  path: string;
  /**
   * relative paths of the older ones, archived
   */
  supersedes: string[];
}
/**
 * A memory not written, and the gate rule that stopped it (the text is never echoed).
 */
export interface WriteSkipped {
  message: string;
  /**
   * secret | injection | size | ephemeral; extraction adds malformed | limit | unreadable (a workspace file projectInit could not parse)
   */
  reason: string;
  title?: string | null;
}
export interface ContextDoc {
  /**
   * its section's size in the prompt
   */
  chars: number;
  path: string;
  relativePath: string;
  scope: 'project' | 'user' | 'team';
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
  scope: 'project' | 'user' | 'team';
  title: string;
  type: 'user' | 'feedback' | 'project' | 'reference';
}
/**
 * The always-loaded memories (docs/organisation.md `memory/context`).
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
 * Semantic recall (protocol v2, opt-in): an OpenAI-compatible `/embeddings` endpoint.
 */
export interface EmbeddingsOptions {
  /**
   * allow an http:// URL to a host other than this machine (memory text and the API key would travel unencrypted)
   */
  allowPlainHttp?: boolean;
  /**
   * name of the environment variable holding the API key
   */
  apiKeyEnv?: string | null;
  /**
   * embedding model name
   */
  model?: string | null;
  /**
   * deadline of one call (a batch of documents or a query; default 10000); the fast phase waits for the query embedding at most 60 ms, whatever this says
   */
  timeoutMs?: number | null;
  /**
   * base URL of an OpenAI-compatible API, e.g. http://127.0.0.1:11434/v1
   */
  url: string;
}
/**
 * Where a delivered `body` lies in the memory's whole body: code-point offsets.
 */
export interface Excerpt {
  /**
   * offset just past the last character delivered
   */
  end: number;
  /**
   * offset of the first character delivered
   */
  start: number;
}
/**
 * `memory/explain`: why a memory was or was not delivered.
 *
 * Names the recall by `token` (a recall this daemon ran lately, with its query
 * and what it delivered) or by `query` (ranked now, as a recall would). `path`
 * is a memory's path or its relative path.
 */
export interface ExplainParams {
  path: string;
  query?: string | null;
  /**
   * explain under this ranker (default: the daemon's)
   */
  ranker?: string | null;
  /**
   * @maxItems 256
   */
  recentTools?: string[];
  token?: string | number | null;
}
/**
 * `memory/explain` result.
 */
export interface ExplainResult {
  /**
   * in the model's manifest (candidates)
   */
  candidate: boolean;
  /**
   * in the recall's excludePaths
   */
  excluded: boolean;
  /**
   * false when no memory served has this path
   */
  found: boolean;
  network: NetworkExplain | null;
  /**
   * removed as active-tool noise (docs/ranking.md)
   */
  noise: boolean;
  /**
   * per field and term; they sum to `score`
   */
  parts: ScorePart[];
  path: string;
  phases: PhaseExplain[];
  query: string;
  /**
   * 1-based rank in the ranker's list, null when unranked
   */
  rank: number | null;
  /**
   * how many memories the ranker returned
   */
  ranked: number;
  ranker: string;
  relativePath: string | null;
  score: number | null;
  silence: SilenceExplain | null;
  stale: StaleMark | null;
  /**
   * which phase sent it, or why none did, in words
   */
  summary: string;
  title: string | null;
  /**
   * the query's terms under this ranker
   */
  tokens: string[];
}
export interface NetworkExplain {
  activation: number;
  /**
   * the path in words
   */
  describe: string;
  /**
   * the lexical hit the path starts from
   */
  seed: string;
  via: NetworkHop[];
}
/**
 * One step of the memory-network path that reached a memory (docs/network.md).
 */
export interface NetworkHop {
  /**
   * forward: as the `from` memory wrote it; backward: seen from its target
   */
  direction: 'forward' | 'backward';
  /**
   * the memory the step starts from (a path)
   */
  from: string;
  /**
   * the shared keyword (kind keyword)
   */
  keyword?: string | null;
  /**
   * link, wikilink, related, supersedes (what a memory writes), mention (a memory's title written in another's body), keyword (a rare identifier or name both hold), coUse (used together, from memory/feedback)
   */
  kind: 'link' | 'wikilink' | 'related' | 'supersedes' | 'mention' | 'keyword' | 'coUse';
  /**
   * the memory it reaches (a path)
   */
  to: string;
}
/**
 * One addend of the ranker's score: the parts sum to `score`.
 */
export interface ScorePart {
  /**
   * how the ranker got the value
   */
  detail?: string | null;
  /**
   * title, description, body, type (the spec boost), …
   */
  field: string;
  /**
   * the query term, null for a part of no one term
   */
  term: string | null;
  value: number;
}
export interface PhaseExplain {
  delivered: boolean;
  phase: 'fast' | 'refined';
  /**
   * 1-based place in the phase's list, when in it
   */
  rank: number | null;
  reason: string;
}
/**
 * bm25f's silence rule: how much of the query the memory covers.
 */
export interface SilenceExplain {
  /**
   * share of the query's weight the memory matches
   */
  coverage: number;
  detail?: string | null;
  /**
   * true when the rule drops the memory
   */
  silenced: boolean;
  threshold: number;
}
/**
 * Why a delivered memory may be outdated (docs/organisation.md).
 */
export interface StaleMark {
  /**
   * e.g. 'cites src/app/pay.ts, which no longer exists', 'expired on 2025-06-30'
   */
  reason: string;
}
export interface ExtractCounters {
  calls?: number;
  completed?: number;
  failed?: number;
  modelFailures?: number;
  /**
   * model triggers without a model (-32803)
   */
  refused?: number;
  skipped?: number;
  /**
   * memories created or updated
   */
  written?: number;
}
export interface ExtractFile {
  content?: string | null;
  path: string;
}
export interface ExtractModelStatus {
  /**
   * the model call, when it answered
   */
  elapsedMs: number | null;
  kind: 'client' | 'http';
}
/**
 * `memory/extract`: memories from a session, accepted code, or the workspace.
 */
export interface ExtractParams {
  /**
   * false: the same decisions with action `proposed`, nothing written
   */
  apply?: boolean;
  diff?: string | null;
  files?: ExtractFile[] | null;
  /**
   * default project; team: proposals only
   */
  scope?: ('project' | 'user' | 'team') | null;
  transcript?: ExtractTurn[] | null;
  trigger: 'sessionEnd' | 'codeAccepted' | 'projectInit' | 'explicit';
}
export interface ExtractTurn {
  content: string;
  role: 'user' | 'assistant' | 'system' | 'tool';
}
/**
 * `memory/extract` result: the writes (or proposals), every skip with its reason.
 */
export interface ExtractResult {
  /**
   * why the model gave no usable answer; nothing was written
   */
  failure?: string | null;
  /**
   * MEMORY.md of each root the operation changed
   */
  indexes?: IndexStatus[];
  /**
   * null for projectInit
   */
  model?: ExtractModelStatus | null;
  operations: WriteOperation[];
  skipped: WriteSkipped[];
  transcript?: ExtractTranscriptStatus | null;
}
/**
 * What the model was shown of the session.
 */
export interface ExtractTranscriptStatus {
  charsCut: number;
  /**
   * secrets replaced by [REDACTED:kind] before the model saw them
   */
  redactions: number;
  turns: number;
  /**
   * turns left out to fit the budget
   */
  turnsCut: number;
}
export interface FeedbackItem {
  /**
   * a delivered memory's path (as recall gave it)
   */
  id: string;
  verdict: 'used' | 'ignored';
}
/**
 * `memory/feedback`: which delivered memories the host's model used (docs/network.md).
 *
 * A notification per docs/network.md; sent as a request (with an id) it answers a
 * FeedbackResult. `used`/`ignored` are docs/network.md's lists; `items` says the same per
 * memory; all three may be combined. `token` (or `requestId`) names the recall the
 * memories were delivered by: memories used together in one recall become co-use
 * links in the memory network.
 */
export interface FeedbackParams {
  /**
   * @maxItems 20
   */
  ignored?:
    | []
    | [string]
    | [string, string]
    | [string, string, string]
    | [string, string, string, string]
    | [string, string, string, string, string]
    | [string, string, string, string, string, string]
    | [string, string, string, string, string, string, string]
    | [string, string, string, string, string, string, string, string]
    | [string, string, string, string, string, string, string, string, string]
    | [string, string, string, string, string, string, string, string, string, string]
    | [string, string, string, string, string, string, string, string, string, string, string]
    | [
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string
      ]
    | [
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string
      ]
    | [
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string
      ]
    | [
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string
      ]
    | [
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string
      ]
    | [
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string
      ]
    | [
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string
      ]
    | [
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string
      ]
    | [
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string
      ];
  /**
   * @maxItems 20
   */
  items?:
    | []
    | [FeedbackItem]
    | [FeedbackItem, FeedbackItem]
    | [FeedbackItem, FeedbackItem, FeedbackItem]
    | [FeedbackItem, FeedbackItem, FeedbackItem, FeedbackItem]
    | [FeedbackItem, FeedbackItem, FeedbackItem, FeedbackItem, FeedbackItem]
    | [FeedbackItem, FeedbackItem, FeedbackItem, FeedbackItem, FeedbackItem, FeedbackItem]
    | [
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem
      ]
    | [
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem
      ]
    | [
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem
      ]
    | [
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem
      ]
    | [
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem
      ]
    | [
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem
      ]
    | [
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem
      ]
    | [
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem
      ]
    | [
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem
      ]
    | [
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem
      ]
    | [
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem
      ]
    | [
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem
      ]
    | [
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem
      ]
    | [
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem,
        FeedbackItem
      ];
  requestId?: string | number | null;
  token?: string | number | null;
  /**
   * @maxItems 20
   */
  used?:
    | []
    | [string]
    | [string, string]
    | [string, string, string]
    | [string, string, string, string]
    | [string, string, string, string, string]
    | [string, string, string, string, string, string]
    | [string, string, string, string, string, string, string]
    | [string, string, string, string, string, string, string, string]
    | [string, string, string, string, string, string, string, string, string]
    | [string, string, string, string, string, string, string, string, string, string]
    | [string, string, string, string, string, string, string, string, string, string, string]
    | [
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string
      ]
    | [
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string
      ]
    | [
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string
      ]
    | [
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string
      ]
    | [
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string
      ]
    | [
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string
      ]
    | [
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string
      ]
    | [
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string
      ]
    | [
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string
      ];
}
/**
 * `memory/feedback` answered as a request: what was recorded.
 */
export interface FeedbackResult {
  /**
   * pairs of memories linked as used together
   */
  coUseLinks: number;
  /**
   * memories whose statistics changed
   */
  recorded: number;
  /**
   * paths that are not memories the daemon serves
   */
  unknown?: string[];
}
/**
 * `memory/forget`: move to `<root>/.archive/`; `hard: true` deletes (irreversibly).
 */
export interface ForgetParams {
  hard?: boolean;
  /**
   * a memory's path, as recall gives it
   */
  path: string;
  reason?: string | null;
}
/**
 * One change to one file, as the journal holds it.
 */
export interface HistoryEntry {
  action: string;
  /**
   * content after; null when absent or not kept
   */
  after: string | null;
  afterHash: string | null;
  /**
   * content before; null when absent or not kept
   */
  before: string | null;
  beforeHash: string | null;
  /**
   * false: a hard delete or a credential; not undoable
   */
  kept: boolean;
  /**
   * remember | update | forget | restore | undo
   */
  kind: string;
  note: string | null;
  operation: string;
  path: string;
  timeMs: number;
  title: string | null;
  trigger: string;
  undoes: string | null;
  undoneBy: string | null;
}
/**
 * `memory/history`: a memory's versions, from the journal.
 */
export interface HistoryParams {
  /**
   * a memory's path, as recall gives it
   */
  path: string;
}
export interface HistoryResult {
  entries: HistoryEntry[];
  path: string;
}
/**
 * What the host can do for the daemon (protocol v2).
 */
export interface HostCapabilities {
  /**
   * the host answers memory/complete (its own model runs extraction tasks)
   */
  complete?: boolean;
}
/**
 * `initialize` → `initializationOptions` (all optional).
 */
export interface InitializationOptions {
  capabilities?: HostCapabilities;
  context?: ContextOptions;
  /**
   * semantic recall through an embeddings endpoint; off when absent
   */
  embeddings?: EmbeddingsOptions | null;
  organise?: OrganiseOptions;
  /**
   * bm25f (the default: whole bodies, the passage that matched, silence) or spec (the reference scorer); the old names default, indexed, reference still work
   */
  ranker?: string | null;
  /**
   * the memory folders; default: project <workspace>/.memory, team <workspace>/.memory/team and user <user data dir>/memory-recall/memory
   */
  roots?: RootOption[] | null;
  selector?: SelectorOptions;
  sync?: SyncOptions;
  /**
   * follow changes of the memory files
   */
  watch?: boolean;
  write?: WriteOptions;
}
/**
 * Retention and consolidation (docs/organisation.md).
 */
export interface OrganiseOptions {
  /**
   * consolidate each writable root on its own when the host has been idle, at least 24 h and 5 writes after its last consolidation
   */
  autoConsolidate?: boolean;
  /**
   * memories per root before the lowest-retention ones are archived (default 300)
   */
  capacity?: number | null;
  /**
   * when a model is configured (selector or host completion), it rewords each merge of duplicates into one text; the rules' line-keeping merge is written whenever its text drops a code span, path, name or number
   */
  modelMerge?: boolean;
}
/**
 * A memory directory and its scope.
 */
export interface RootOption {
  /**
   * follow symlinks that point outside the root
   */
  followSymlinks?: boolean;
  /**
   * the folder (`~` is your home)
   */
  path: string;
  /**
   * recalled, never written: no memory is created, changed, archived or consolidated in it (another tool's memory folder)
   */
  readOnly?: boolean;
  /**
   * project, team or user; ties go project, team, user
   */
  scope?: 'project' | 'user' | 'team';
}
/**
 * Which model picks the refined memories.
 */
export interface SelectorOptions {
  /**
   * http: allow an http:// URL to a host other than this machine (the manifest, the query and the API key would travel unencrypted)
   */
  allowPlainHttp?: boolean;
  /**
   * http: name of the environment variable holding the API key
   */
  apiKeyEnv?: string | null;
  /**
   * who picks the refined memories: client (the host's own model, through memory/select), http (an OpenAI-compatible endpoint) or none (the lexical top 5)
   */
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
 * Sync through git (docs/sync.md): for the roots set up with `memory-recall sync init`.
 */
export interface SyncOptions {
  /**
   * the daemon syncs each root set up for it (and not set to manual) on start, after writes once idle, and every intervalS; false: only `memory-recall sync`
   */
  auto?: boolean;
  /**
   * seconds without a write before the daemon syncs what was written (default 5)
   */
  idleS?: number | null;
  /**
   * seconds between two syncs that pull what the other machines pushed (default 300)
   */
  intervalS?: number | null;
}
/**
 * How the daemon writes memories (docs/writing.md).
 */
export interface WriteOptions {
  /**
   * most lines in a root's MEMORY.md (default 200)
   */
  indexCap?: number | null;
  /**
   * longest memory body written, in characters (default 4000)
   */
  maxChars?: number | null;
}
/**
 * `memory/list`: memories with their statistics, a page at a time (in input order).
 */
export interface ListParams {
  /**
   * a topic-tree slug: `lessons` or `lessons/errors`
   */
  category?: string | null;
  /**
   * the `nextCursor` of the previous page: the page after it
   */
  cursor?: string | null;
  /**
   * most memories in this page (default and at most 500)
   */
  limit?: number | null;
  scope?: ('project' | 'user' | 'team') | null;
}
export interface ListResult {
  memories: ListedMemory[];
  /**
   * more memories follow: pass it as `cursor` for the next page; null on the last page
   */
  nextCursor?: string | null;
}
export interface ListedMemory {
  always: boolean;
  category: string | null;
  contentHash: string;
  created: string | null;
  description: string;
  expires: string | null;
  mtimeMs: number;
  path: string;
  pinned: boolean;
  relativePath: string;
  scope: 'project' | 'user' | 'team';
  stats: MemoryStatistics;
  title: string;
  type: 'user' | 'feedback' | 'project' | 'reference';
  updated: string | null;
}
export interface MemoryStatistics {
  createdMs: number | null;
  delivered: number;
  lastDeliveredMs: number | null;
  updatedMs: number | null;
  writes: number;
}
/**
 * One delivered memory.
 */
export interface MemoryDoc {
  /**
   * at most 1,200 characters: the whole body when it fits, else (ranker bm25f) the passage that best matches the query, cut on sentence or line boundaries where possible, or (ranker spec) the first 1,200 characters
   */
  body: string;
  /**
   * fast phase (ranker bm25f): how likely this memory answers the query, a probability calibrated on labelled corpora. The fast phase delivers 0, 1 or 2 memories by it (silence when none is likely); absent in the refined phase and for the spec ranker
   */
  confidence?: number | null;
  /**
   * the file's version: pass it as memory/update's ifMatch
   */
  contentHash?: string | null;
  description: string;
  /**
   * where `body` lies in the whole body (always sent by this daemon; absent from older ones, whose body is the first 1,200 characters)
   */
  excerpt?: Excerpt | null;
  mtimeMs: number;
  path: string;
  /**
   * older memories of this recall that this one may correct: the writer linked the two (`maybeSupersedes`) when the conflict rules leaned so but could not settle it. Both are delivered, never one hidden on a lean; absent when none
   */
  perhapsCorrects?: SupersededMark[] | null;
  relativePath: string;
  scope: 'project' | 'user' | 'team';
  score: number;
  /**
   * cosine similarity to the query, for a memory the semantic channel added to a slot the lexical result left empty (its score is then 0)
   */
  similarity?: number | null;
  /**
   * set when a cited path is gone or `expires` has passed; the memory is delivered after the fresh ones of its phase
   */
  stale?: StaleMark | null;
  /**
   * older memories of this recall that state the same fact with another value: newer wins, they are not delivered (or, when an earlier phase already sent one, this marks it as replaced); absent when none
   */
  supersedes?: SupersededMark[] | null;
  title: string;
  /**
   * true when `body` is not the whole body
   */
  truncated: boolean;
  type: 'user' | 'feedback' | 'project' | 'reference';
  /**
   * set when the memory network, not the ranker, found this memory: the hops from a lexical hit to it (at most two); absent for a lexical hit
   */
  via?: NetworkHop[] | null;
}
/**
 * An older memory a delivered one replaces: both stated one slot, this one changed it.
 */
export interface SupersededMark {
  /**
   * the day the older memory was last written (ISO date)
   */
  date: string;
  path: string;
  relativePath: string;
  title: string;
}
export interface NetworkStatus {
  /**
   * the last build from scratch
   */
  buildMs: number | null;
  coUsePairs: number;
  /**
   * edges between memories, keyword nodes counted once per pair
   */
  edges: number;
  /**
   * co-use links loaded from the state store at start
   */
  loadedFromState: boolean;
  memories: number;
}
/**
 * `memory/observe` (a notification): what the agent is doing right now.
 *
 * edit: `path` was edited; error: `text` is an error message (with the `path` it
 * names, if any); toolResult: a tool's output; command: a command line run.
 */
export interface ObserveParams {
  event: 'edit' | 'error' | 'toolResult' | 'command';
  path?: string | null;
  /**
   * error, toolResult, command: the text (its first 20,000 characters are read)
   */
  text?: string | null;
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
  /**
   * the semantic channel's part (protocol v2, when configured)
   */
  semantic?: SemanticReport | null;
  status: 'delivered' | 'already_delivered' | 'no_relevant_results';
  strategy: 'heuristic' | 'model' | 'none';
  token?: string | number | null;
}
/**
 * What the semantic channel did in one phase (absent when the channel is off).
 */
export interface SemanticReport {
  /**
   * why the channel gave nothing to this phase: late, HTTP error, wrong count or dimension, a value that is not a number (lexical results are unaffected)
   */
  failure?: string | null;
  /**
   * documents of this phase that came from the channel
   */
  filled: number;
  /**
   * how long the query embedding took, when it came back
   */
  queryMs?: number | null;
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
  /**
   * the semantic channel's part (protocol v2, when configured)
   */
  semantic?: SemanticReport | null;
  status: 'delivered' | 'already_delivered' | 'no_relevant_results';
  strategy: 'heuristic' | 'model' | 'none';
}
/**
 * A write an agent asked for that needs the user's word (force, always or team scope).
 */
export interface Proposal {
  createdMs: number;
  decidedMs?: number | null;
  id: string;
  kind: 'remember' | 'forget';
  /**
   * once confirmed: the journal operation (memory/undo takes it)
   */
  operation?: string | null;
  /**
   * who proposed it: mcp (an agent through MCP), hook …
   */
  origin: string;
  /**
   * forget: the memory it would archive
   */
  path?: string | null;
  /**
   * why it waits: force, always, team
   */
  reasons: string[];
  scope?: ('project' | 'user' | 'team') | null;
  state: 'pending' | 'confirmed' | 'rejected';
  /**
   * remember: the text it would write (passed the secret gate)
   */
  text: string;
  title: string;
}
/**
 * `memory/confirm` / `memory/reject`: one proposal by its id.
 */
export interface ProposalParams {
  id: string;
}
/**
 * `memory/proposals`: the writes agents proposed; pending ones unless `all`.
 */
export interface ProposalsParams {
  /**
   * also the confirmed and rejected ones
   */
  all?: boolean;
}
export interface ProposalsResult {
  proposals: Proposal[];
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
  /**
   * names of tools used lately (at most 256, each at most 256 characters)
   *
   * @maxItems 256
   */
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
export interface RejectResult {
  proposal: Proposal;
}
/**
 * `memory/remember`: the user's explicit "remember this". Missing metadata is derived.
 */
export interface RememberParams {
  always?: boolean | null;
  category?: string | null;
  description?: string | null;
  /**
   * write it even though it reads like an instruction to the agent
   */
  force?: boolean;
  pinned?: boolean | null;
  /**
   * default: user for type user, else project; team only by name
   */
  scope?: ('project' | 'user' | 'team') | null;
  text: string;
  title?: string | null;
  type?: ('user' | 'feedback' | 'project' | 'reference') | null;
}
/**
 * `memory/restore`: bring an archived memory back (its old path or its archived one).
 */
export interface RestoreParams {
  /**
   * a memory's path, as recall gives it
   */
  path: string;
}
export interface RootStatus {
  documents: number;
  exists: boolean;
  path: string;
  scope: 'project' | 'user' | 'team';
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
/**
 * One memory a search found.
 */
export interface SearchDoc {
  /**
   * network finds: the activation that reached it (0–1)
   */
  activation?: number | null;
  /**
   * deep: the passage that matched (at most 1,200 characters); get: the whole body; shallow and explore: null
   */
  body: string | null;
  /**
   * its place on the topic tree, e.g. 'lessons/errors'
   */
  category: string;
  contentHash?: string | null;
  description: string;
  /**
   * where `body` lies in the body
   */
  excerpt?: Excerpt | null;
  mtimeMs: number;
  path: string;
  relativePath: string;
  scope: 'project' | 'user' | 'team';
  /**
   * the ranker's score; null when it did not score it
   */
  score: number | null;
  /**
   * lexical: the ranker matched it; network: reached from a match or from `path` (see `via`); tree: a member of the explored subtree; path: the memory asked for
   */
  source: 'lexical' | 'network' | 'tree' | 'path';
  stale?: StaleMark | null;
  title: string;
  /**
   * true when `body` is not the whole body
   */
  truncated: boolean;
  type: 'user' | 'feedback' | 'project' | 'reference';
  /**
   * network finds: the hops that reached it (at most two)
   */
  via?: NetworkHop[] | null;
}
/**
 * `memory/search`: the memory tool of a host's agent.
 *
 * shallow: `query` against titles and descriptions (no bodies); deep: `query` against
 * whole bodies, with the matching passage and the memories the network reaches;
 * explore: a subtree of the topic tree — `category`, or the place of `path` (a
 * memory) or of the query's best hit, the network's finds from there first; get: the
 * memory at `path` (its path or relative path), whole body.
 */
export interface SearchParams {
  /**
   * explore: a topic-tree slug, `lessons` or `lessons/errors`
   */
  category?: string | null;
  /**
   * most memories returned (default 10)
   */
  limit?: number | null;
  mode: 'shallow' | 'deep' | 'explore' | 'get';
  /**
   * get, explore: a memory's path (as recall gives it) or relative path
   */
  path?: string | null;
  query?: string;
  /**
   * only this scope's memories
   */
  scope?: ('project' | 'user' | 'team') | null;
}
/**
 * `memory/search` result.
 */
export interface SearchResult {
  docs: SearchDoc[];
  elapsedMs: number;
  mode: 'shallow' | 'deep' | 'explore' | 'get';
  /**
   * deep, explore: whether the memory network was used
   */
  network: boolean;
  /**
   * the result as markdown for the agent; empty when none
   */
  prompt: string;
  query: string;
  /**
   * explore only
   */
  subtree?: SearchSubtree | null;
  /**
   * memories found before `limit` cut the list
   */
  total: number;
}
/**
 * explore: the place searched, how many memories sit under it, its subcategories.
 */
export interface SearchSubtree {
  children?: SearchSubtree[];
  count: number;
  label: string;
  slug: string;
}
export interface SelectCandidate {
  description: string;
  mtimeMs: number;
  path: string;
  /**
   * cosine similarity to the query (semantic channel), if known
   */
  similarity?: number | null;
  type: 'user' | 'feedback' | 'project' | 'reference';
  /**
   * set for a memory only the memory network found (see MemoryDoc)
   */
  via?: NetworkHop[] | null;
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
/**
 * The semantic channel in `memory/status` (absent when it is off).
 */
export interface SemanticStatus {
  /**
   * memories with a vector now
   */
  documents: number;
  /**
   * vectors the endpoint computed this session
   */
  embedded: number;
  /**
   * the last background failure
   */
  failure?: string | null;
  model: string;
  /**
   * memories still waiting for one
   */
  pending: number;
  queryFailures: number;
  /**
   * vectors found in the state store's cache
   */
  reused: number;
}
export interface SkippedFileStatus {
  path: string;
  reason: string;
}
export interface StaleMemory {
  path: string;
  reason: string;
}
/**
 * `memory/status` result.
 */
export interface StatusResult {
  catalog: CatalogCountersStatus;
  documents: number;
  /**
   * extraction calls and outcomes (protocol v2)
   */
  extract?: ExtractCounters | null;
  /**
   * what is wrong now, in words: a root that cannot be read, a snapshot cache that cannot be written, a failed watcher (each also shown once with window/showMessage)
   */
  faults?: string[];
  indexBuildMs: number | null;
  /**
   * the memory network
   */
  network?: NetworkStatus | null;
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
  /**
   * the semantic channel, when configured (protocol v2)
   */
  semantic?: SemanticStatus | null;
  skipped: SkippedFileStatus[];
  /**
   * memories that may be outdated now, with the reason
   */
  stale?: StaleMemory[] | null;
  /**
   * memory/observe events and the suggestions they brought
   */
  suggestions?: SuggestionStatus | null;
  /**
   * the roots set up for sync through git (docs/sync.md); null without the state store
   */
  sync?: SyncRootStatus[] | null;
  /**
   * per category of the topic tree (docs/organisation.md): how often its memories were recalled, delivered and used (memory/feedback); null without the state store
   */
  usage?: CategoryUsage[] | null;
  watcher: WatcherStatus;
  /**
   * the write side (protocol v2)
   */
  write?: WriteStatus | null;
}
export interface SuggestionStatus {
  /**
   * held back until a recall's first result
   */
  deferred?: number;
  /**
   * dropped: too many events were waiting
   */
  dropped?: number;
  /**
   * events that matched at least one memory
   */
  matched?: number;
  /**
   * memory/observe events taken
   */
  observed?: number;
  /**
   * memory/suggestion notifications
   */
  sent?: number;
  /**
   * events whose handling is over (sent, or nothing to send)
   */
  settled?: number;
}
/**
 * One root set up for sync through git (docs/sync.md).
 */
export interface SyncRootStatus {
  /**
   * commits here the remote has not got
   */
  ahead: number;
  /**
   * the daemon syncs this root on its own
   */
  auto: boolean;
  /**
   * commits the remote had at the last fetch that are not here
   */
  behind: number;
  branch: string;
  /**
   * files that stay on this machine
   */
  held?: SyncHeldFile[];
  lastError?: string | null;
  /**
   * the last sync that reached the remote
   */
  lastSyncMs: number | null;
  path: string;
  /**
   * writes not committed yet (they are at the next sync)
   */
  pending: number;
  /**
   * the remote, without any user or token in it
   */
  remote: string | null;
  /**
   * when the daemon tries again after a failure (back-off)
   */
  retryAtMs?: number | null;
  /**
   * credentials found in the history (path and commit, never the value)
   */
  secrets?: string[];
  /**
   * off (automatic sync not on), idle, syncing, offline (the remote cannot be reached: work goes on, the daemon retries), error, blocked (a credential in a commit not pushed: `memory-recall sync rewrite-history`)
   */
  state: 'off' | 'idle' | 'syncing' | 'offline' | 'error' | 'blocked';
}
export interface SyncHeldFile {
  /**
   * inside the root
   */
  path: string;
  /**
   * private, or the credential kinds it holds (never the value)
   */
  reason: string;
}
export interface WatcherStatus {
  detail?: string | null;
  state: 'off' | 'starting' | 'watching' | 'polling' | 'failed' | 'stopped';
}
/**
 * `memory/status` → `write`: where the journal is and what each MEMORY.md holds.
 */
export interface WriteStatus {
  indexes: IndexStatus[];
  schemaVersion?: number | null;
  /**
   * the state database; null when it is off
   */
  statePath: string | null;
  stateProblem?: string | null;
}
/**
 * A suggested memory: a delivered memory plus why it was suggested.
 */
export interface SuggestedDoc {
  /**
   * at most 1,200 characters: the whole body when it fits, else (ranker bm25f) the passage that best matches the query, cut on sentence or line boundaries where possible, or (ranker spec) the first 1,200 characters
   */
  body: string;
  /**
   * lessons/… or conventions/…
   */
  category: string;
  /**
   * fast phase (ranker bm25f): how likely this memory answers the query, a probability calibrated on labelled corpora. The fast phase delivers 0, 1 or 2 memories by it (silence when none is likely); absent in the refined phase and for the spec ranker
   */
  confidence?: number | null;
  /**
   * the file's version: pass it as memory/update's ifMatch
   */
  contentHash?: string | null;
  description: string;
  /**
   * what matched, e.g. 'cites src/lib/redis.ts', 'shares econnreset'
   */
  evidence: string[];
  /**
   * where `body` lies in the whole body (always sent by this daemon; absent from older ones, whose body is the first 1,200 characters)
   */
  excerpt?: Excerpt | null;
  mtimeMs: number;
  path: string;
  /**
   * older memories of this recall that this one may correct: the writer linked the two (`maybeSupersedes`) when the conflict rules leaned so but could not settle it. Both are delivered, never one hidden on a lean; absent when none
   */
  perhapsCorrects?: SupersededMark[] | null;
  relativePath: string;
  scope: 'project' | 'user' | 'team';
  score: number;
  /**
   * cosine similarity to the query, for a memory the semantic channel added to a slot the lexical result left empty (its score is then 0)
   */
  similarity?: number | null;
  /**
   * set when a cited path is gone or `expires` has passed; the memory is delivered after the fresh ones of its phase
   */
  stale?: StaleMark | null;
  /**
   * older memories of this recall that state the same fact with another value: newer wins, they are not delivered (or, when an earlier phase already sent one, this marks it as replaced); absent when none
   */
  supersedes?: SupersededMark[] | null;
  title: string;
  /**
   * true when `body` is not the whole body
   */
  truncated: boolean;
  type: 'user' | 'feedback' | 'project' | 'reference';
  /**
   * set when the memory network, not the ranker, found this memory: the hops from a lexical hit to it (at most two); absent for a lexical hit
   */
  via?: NetworkHop[] | null;
}
/**
 * `memory/suggestion` (server → client): lessons or conventions that apply now.
 *
 * Each memory is suggested at most once per session; suggestions are rate-limited
 * and never sent while a recall's fast phase is pending.
 */
export interface SuggestionNotification {
  docs: SuggestedDoc[];
  /**
   * ready-to-inject markdown
   */
  prompt: string;
  trigger: SuggestionTrigger;
}
/**
 * What a suggestion answers: the observed event (its text cut to 200 characters).
 */
export interface SuggestionTrigger {
  event: 'edit' | 'error' | 'toolResult' | 'command';
  path?: string | null;
  text?: string | null;
}
export interface TreeMember {
  path: string;
  relativePath: string;
  scope: 'project' | 'user' | 'team';
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
  scope?: ('project' | 'user' | 'team') | null;
}
/**
 * `memory/tree` result: the five categories (docs/organisation.md order), empty ones
 * included.
 */
export interface TreeResult {
  categories: TreeNode[];
  total: number;
}
/**
 * `memory/undo`: put back every file one operation touched.
 */
export interface UndoParams {
  operation: string;
}
/**
 * `memory/update`: edit one memory; only the fields given change.
 */
export interface UpdateParams {
  always?: boolean | null;
  body?: string | null;
  description?: string | null;
  force?: boolean;
  /**
   * the contentHash last seen; a file changed since is not touched
   */
  ifMatch?: string | null;
  /**
   * a memory's path, as recall gives it
   */
  path: string;
  pinned?: boolean | null;
  title?: string | null;
  type?: ('user' | 'feedback' | 'project' | 'reference') | null;
}
/**
 * What every write request returns (docs/writing.md).
 */
export interface WriteResult {
  /**
   * MEMORY.md of each root the operation changed
   */
  indexes?: IndexStatus[];
  operations: WriteOperation[];
  skipped: WriteSkipped[];
}
