// VS Code settings → the daemon's command line and initializationOptions.
// No `vscode` import: the extension passes a getter over
// `workspace.getConfiguration('memoryRecall')`, tests pass plain values.
import { homedir } from 'node:os';
import { isAbsolute, join, posix, resolve, win32 } from 'node:path';

import type { InitializationOptions, RootOption } from './protocol.generated';

export const SECTION = 'memoryRecall';

export type SelectorKind = 'client' | 'http' | 'none';

/** Every setting the extension reads, with the defaults package.json declares. */
export const DEFAULTS = {
  'server.command': 'memory-recall',
  // The daemon's stderr shows as errors in the output channel: only its warnings.
  'server.args': ['serve', '--log-level', 'WARNING'] as string[],
  'server.env': {} as Record<string, string>,
  roots: [] as { path: string; scope?: 'project' | 'team' | 'user' }[],
  watch: true,
  // Empty: the daemon's default (bm25f); `default`, `indexed`, `reference` are the old names.
  ranker: '' as '' | 'bm25f' | 'spec' | 'default' | 'indexed' | 'reference',
  'selector.kind': 'client' as SelectorKind,
  'selector.timeoutMs': null as number | null,
  'selector.url': '',
  'selector.model': '',
  'selector.apiKeyEnv': '',
  'selector.allowPlainHttp': false,
  'languageModel.vendor': '',
  'languageModel.family': '',
};

export type SettingKey = keyof typeof DEFAULTS;
export type Settings = { -readonly [K in SettingKey]: (typeof DEFAULTS)[K] };

/** Read every setting through `get` (e.g. `config.get.bind(config)`). */
export function readSettings(get: <T>(key: string, defaultValue: T) => T): Settings {
  const settings = {} as Record<SettingKey, unknown>;
  for (const key of Object.keys(DEFAULTS) as SettingKey[]) {
    settings[key] = get(key, DEFAULTS[key]);
  }
  return settings as Settings;
}

/** Where `~`, `${userHome}` and `${workspaceFolder}` point. */
export interface PathContext {
  /** The first workspace folder: the daemon's working directory, and `${workspaceFolder}` of the command. */
  workspaceFolder?: string;
  /** Every workspace folder (multi-root); when absent, just `workspaceFolder`. */
  workspaceFolders?: string[];
  home?: string;
  /** For the per-user memory directory; default: this process's. */
  platform?: NodeJS.Platform;
  env?: Record<string, string | undefined>;
}

/**
 * The daemon's per-user memory directory, as server/config.py computes it
 * (`user_data_dir() / "memory"`); a test compares the two.
 */
export function userMemoryDir(context: PathContext = {}): string {
  const home = context.home ?? homedir();
  const env = context.env ?? process.env;
  const platform = context.platform ?? process.platform;
  const pathJoin = platform === 'win32' ? win32.join : posix.join;
  const expandHome = (path: string) => (path === '~' || path.startsWith('~/') ? pathJoin(home, path.slice(1)) : path);
  let base: string;
  if (platform === 'win32') {
    base = env.LOCALAPPDATA || env.APPDATA || pathJoin(home, 'AppData', 'Local');
  } else if (platform === 'darwin') {
    base = pathJoin(home, 'Library', 'Application Support');
  } else {
    base = expandHome(env.XDG_DATA_HOME || pathJoin(home, '.local', 'share'));
  }
  return pathJoin(base, 'memory-recall', 'memory');
}

/** Does `path` depend on the workspace folder (relative, or `${workspaceFolder}` in it)? */
function perFolder(path: string): boolean {
  const trimmed = path.trim();
  if (trimmed.includes('${workspaceFolder}')) return true;
  const homeRelative = trimmed === '~' || /^~[\/]/.test(trimmed) || trimmed.startsWith('${userHome}');
  return !homeRelative && !isAbsolute(trimmed);
}

/** Expand `~`, `${userHome}`, `${workspaceFolder}`; relative paths are taken from the workspace folder. */
export function expandPath(path: string, context: PathContext): string | undefined {
  const home = context.home ?? homedir();
  let expanded = path.trim();
  if (expanded === '~' || expanded.startsWith('~/') || expanded.startsWith('~\\')) {
    expanded = join(home, expanded.slice(1));
  }
  expanded = expanded.replace(/\$\{userHome\}/g, home);
  if (expanded.includes('${workspaceFolder}')) {
    if (!context.workspaceFolder) {
      return undefined;
    }
    expanded = expanded.replace(/\$\{workspaceFolder\}/g, context.workspaceFolder);
  }
  if (!isAbsolute(expanded)) {
    if (!context.workspaceFolder) {
      return undefined;
    }
    expanded = resolve(context.workspaceFolder, expanded);
  }
  return expanded;
}

export interface DaemonLaunch {
  command: string;
  args: string[];
  env: Record<string, string>;
  initializationOptions: InitializationOptions;
  /** Settings that could not be used, for the user. */
  problems: string[];
}

/** How to start the daemon and what to tell it, from the settings. */
export function daemonLaunch(settings: Settings, context: PathContext): DaemonLaunch {
  const problems: string[] = [];
  const options: InitializationOptions = { watch: settings.watch !== false };
  if (settings.ranker) {
    options.ranker = settings.ranker;
  }

  const folders = context.workspaceFolders ?? (context.workspaceFolder ? [context.workspaceFolder] : []);
  const roots: RootOption[] = [];
  const add = (path: string, scope: RootOption['scope']) => {
    if (!roots.some((root) => root.path === path)) roots.push({ path, scope });
  };
  for (const root of settings.roots ?? []) {
    const scope = root?.scope === 'user' || root?.scope === 'team' ? root.scope : 'project';
    const raw = typeof root?.path === 'string' ? root.path : undefined;
    // A folder-relative root means that folder in every workspace folder.
    const paths = raw === undefined ? [] : perFolder(raw) ? folders.map((folder) => expandPath(raw, { ...context, workspaceFolder: folder })) : [expandPath(raw, context)];
    if (!paths.length || paths.some((path) => !path)) {
      problems.push(`memoryRecall.roots: ${JSON.stringify(root?.path)} needs an open workspace folder or an absolute path`);
      continue;
    }
    paths.forEach((path) => add(path!, scope));
  }
  if (!settings.roots?.length && folders.length > 1) {
    // The daemon's default project root is <first folder>/.memory only:
    // name every folder's, and the user root it would have added.
    folders.forEach((folder) => add(join(folder, '.memory'), 'project'));
    add(userMemoryDir(context), 'user');
  }
  if (roots.length) {
    options.roots = roots; // otherwise the daemon's defaults: <workspace>/.memory and the user memory
  }

  const kind = settings['selector.kind'];
  options.selector = { kind: kind === 'http' || kind === 'none' ? kind : 'client' };
  if (options.selector.kind === 'client') {
    // VS Code's language model also answers memory/complete (extraction, reconcile, consolidate).
    options.capabilities = { complete: true };
  }
  const timeoutMs = settings['selector.timeoutMs'];
  if (typeof timeoutMs === 'number' && timeoutMs > 0) {
    options.selector.timeoutMs = Math.round(timeoutMs);
  }
  if (kind === 'http') {
    if (!settings['selector.url']) {
      problems.push('memoryRecall.selector.url is required for the http selector; using none');
      options.selector = { kind: 'none' };
    } else {
      options.selector.url = settings['selector.url'];
      if (settings['selector.model']) options.selector.model = settings['selector.model'];
      if (settings['selector.apiKeyEnv']) options.selector.apiKeyEnv = settings['selector.apiKeyEnv'];
      if (settings['selector.allowPlainHttp'] === true) options.selector.allowPlainHttp = true;
    }
  }

  // A bare name is looked up on PATH; anything path-like is expanded.
  const command = (settings['server.command'] || DEFAULTS['server.command']).trim();
  const pathLike = /[\\/~$]/.test(command);
  return {
    command: (pathLike && expandPath(command, context)) || command,
    args: Array.isArray(settings['server.args']) ? settings['server.args'].map(String) : DEFAULTS['server.args'],
    env: Object.fromEntries(Object.entries(settings['server.env'] ?? {}).map(([k, v]) => [k, String(v)])),
    initializationOptions: options,
    problems,
  };
}
