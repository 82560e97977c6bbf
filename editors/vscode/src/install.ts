// Getting the daemon in place: is the configured command there, and what to
// tell the user when it is not. No `vscode` import; the extension shows the
// texts, tests call these functions.
import { accessSync, constants, statSync } from 'node:fs';
import { join } from 'node:path';

/** The setting a user changes to point the extension at the daemon. */
export const COMMAND_SETTING = 'memoryRecall.server.command';

export interface LookupEnv {
  PATH?: string;
  Path?: string; // Windows spells it this way
}

function isExecutableFile(path: string, platform: NodeJS.Platform): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    // Windows has no execute bit: the extension decides.
    if (platform !== 'win32') accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Where `command` would be found when spawned with `env`: itself when it is a
 * path, else the first match on PATH. Undefined when spawning it would fail
 * with ENOENT. On Windows a name without an extension is tried with `.com`
 * and `.exe`, as node's spawn (libuv) does.
 */
export function findExecutable(
  command: string,
  env: LookupEnv,
  platform: NodeJS.Platform = process.platform,
): string | undefined {
  const extensions = platform === 'win32' && !/\.[^\\/.]+$/.test(command) ? ['.com', '.exe'] : [''];
  const candidates = (dir: string | undefined) => extensions.map((ext) => (dir === undefined ? command : join(dir, command)) + ext);
  if (/[\\/]/.test(command)) {
    return candidates(undefined).find((path) => isExecutableFile(path, platform));
  }
  const delimiter = platform === 'win32' ? ';' : ':';
  const dirs = (env.PATH ?? env.Path ?? '').split(delimiter).filter(Boolean);
  return dirs.flatMap(candidates).find((path) => isExecutableFile(path, platform));
}

/** The one notification shown when the daemon command is missing. */
export function missingDaemonMessage(command: string): string {
  return (
    `Memory Recall needs its daemon, and "${command}" was not found. ` +
    `Install it from the repository (pip install . in a clone), ` +
    `or set "${COMMAND_SETTING}" to the full path of memory-recall.`
  );
}

/** The notification when the daemon was found but did not start. */
export function startFailedMessage(command: string, reason: string): string {
  return `Memory Recall could not start "${command}": ${reason}. Check "${COMMAND_SETTING}" and the Memory Recall output.`;
}

/**
 * Install instructions, as markdown lines: what works today (the package is
 * not on PyPI, the extension not on the Marketplace).
 */
export function installGuide(command: string, repositoryUrl: string | undefined): string[] {
  const gitUrl = repositoryUrl ? repositoryUrl.replace(/^git\+/, '') : '<the repository URL>';
  return [
    '# Installing the memory-recall daemon',
    '',
    `The extension starts \`${command} serve\` (the setting \`${COMMAND_SETTING}\`), and that command was not found.`,
    'memory-recall is not published on PyPI: install it from its repository.',
    '',
    '1. Install it with pip (Python 3.10 or later) or pipx:',
    '',
    '   ```sh',
    `   python3 -m pip install --user "git+${gitUrl}"`,
    '   # or, in a clone of the repository:',
    '   python3 -m pip install --user .      # or: pipx install .',
    '   ```',
    '',
    '2. Check it in a terminal: `memory-recall status` prints the memory folders it would use.',
    '',
    `3. If VS Code does not find it on its PATH, set \`${COMMAND_SETTING}\` to the full path`,
    '   that `command -v memory-recall` prints (e.g. `~/.local/bin/memory-recall`).',
    '',
    '4. Run **Memory: Restart Daemon**.',
  ];
}
