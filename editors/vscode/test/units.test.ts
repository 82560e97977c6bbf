// The vscode-free pieces the extension is built from: settings, what the
// user sees, and the model's selection prompt.
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, test } from 'node:test';

import { findExecutable, installGuide, missingDaemonMessage } from '../src/install';
import { DEFAULT_INITIAL_WAIT_MS } from '../src/memoryClient';
import { parseSelection, selectPrompt, shortName } from '../src/modelSelect';
import { formatAge, recallRows, recallSummary, statusBar, statusReport } from '../src/present';
import type { MemoryDoc, PhaseResult, SelectParams, StatusResult } from '../src/protocol.generated';
import { daemonLaunch, DEFAULTS, expandPath, readSettings, SECTION, Settings, userMemoryDir } from '../src/settings';
import { schemaValidator } from './schema';

const EXTENSION_DIR = resolve(__dirname, '..', '..');
const manifest = JSON.parse(readFileSync(join(EXTENSION_DIR, 'package.json'), 'utf8'));
const validate = schemaValidator();
const NOW = Date.UTC(2025, 0, 31, 12);
const DAY = 86_400_000;

function settings(overrides: Partial<Settings> = {}): Settings {
  return { ...readSettings((_key, fallback) => fallback), ...overrides };
}

describe('settings', () => {
  test('package.json declares exactly the settings the extension reads, with the same defaults', () => {
    const declared = manifest.contributes.configuration.properties;
    const read = Object.keys(DEFAULTS).map((key) => `${SECTION}.${key}`);
    // trace.server is read by vscode-languageclient itself
    assert.deepEqual(Object.keys(declared).filter((k) => k !== `${SECTION}.trace.server`).sort(), read.sort());
    for (const [key, value] of Object.entries(DEFAULTS)) {
      assert.deepEqual(declared[`${SECTION}.${key}`].default, value, key);
    }
  });

  test('where the http selector sends memories, and which secret it sends, are user settings only', () => {
    // A workspace's .vscode/settings.json must not point the selector at its own server
    // with, say, AWS_SECRET_ACCESS_KEY as the bearer token (issue 21).
    const declared = manifest.contributes.configuration.properties;
    const restricted = manifest.capabilities.untrustedWorkspaces.restrictedConfigurations;
    for (const key of ['selector.url', 'selector.apiKeyEnv', 'selector.allowPlainHttp']) {
      assert.equal(declared[`${SECTION}.${key}`].scope, 'machine', key);
      assert.ok(restricted.includes(`${SECTION}.${key}`), key);
    }
  });

  test('allowPlainHttp is passed on only when set', () => {
    const http = { 'selector.kind': 'http' as const, 'selector.url': 'http://10.0.0.2:8000/v1' };
    const plain = daemonLaunch(settings(http), { workspaceFolder: '/w' });
    assert.equal(plain.initializationOptions.selector?.allowPlainHttp, undefined);
    const allowed = daemonLaunch(settings({ ...http, 'selector.allowPlainHttp': true }), { workspaceFolder: '/w' });
    assert.equal(allowed.initializationOptions.selector?.allowPlainHttp, true);
    validate('InitializationOptions', allowed.initializationOptions);
  });

  test('defaults: `memory-recall serve` (warnings only), the daemon chooses the roots, the client selector', () => {
    const launch = daemonLaunch(settings(), { workspaceFolder: '/work/app', home: '/home/ada' });
    assert.equal(launch.command, 'memory-recall');
    assert.deepEqual(launch.args, ['serve', '--log-level', 'WARNING']);
    assert.deepEqual(launch.initializationOptions, { watch: true, selector: { kind: 'client' }, capabilities: { complete: true } });
    assert.deepEqual(launch.problems, []);
    validate('InitializationOptions', launch.initializationOptions);
  });

  test('a ranker is passed on only when chosen', () => {
    const launch = daemonLaunch(settings({ ranker: 'default' }), { workspaceFolder: '/work/app' });
    assert.equal(launch.initializationOptions.ranker, 'default');
    validate('InitializationOptions', launch.initializationOptions);
    assert.equal('ranker' in daemonLaunch(settings(), { workspaceFolder: '/work/app' }).initializationOptions, false);
  });

  test('roots are expanded; one that needs a missing workspace is reported', () => {
    const roots = [
      { path: '${workspaceFolder}/.memory', scope: 'project' as const },
      { path: '~/.claude/memory', scope: 'user' as const },
      { path: 'notes' },
    ];
    const withFolder = daemonLaunch(settings({ roots }), { workspaceFolder: '/work/app', home: '/home/ada' });
    assert.deepEqual(withFolder.initializationOptions.roots, [
      { path: '/work/app/.memory', scope: 'project' },
      { path: '/home/ada/.claude/memory', scope: 'user' },
      { path: '/work/app/notes', scope: 'project' },
    ]);
    validate('InitializationOptions', withFolder.initializationOptions);
    const noFolder = daemonLaunch(settings({ roots }), { home: '/home/ada' });
    assert.deepEqual(noFolder.initializationOptions.roots, [{ path: '/home/ada/.claude/memory', scope: 'user' }]);
    assert.equal(noFolder.problems.length, 2);
  });

  test('http selector options pass through; without a url it is none', () => {
    const http = daemonLaunch(
      settings({
        'selector.kind': 'http',
        'selector.url': 'http://127.0.0.1:11434/v1',
        'selector.model': 'qwen3',
        'selector.apiKeyEnv': 'OLLAMA_KEY',
        'selector.timeoutMs': 2500,
      }),
      {},
    );
    assert.deepEqual(http.initializationOptions.selector, {
      kind: 'http',
      url: 'http://127.0.0.1:11434/v1',
      model: 'qwen3',
      apiKeyEnv: 'OLLAMA_KEY',
      timeoutMs: 2500,
    });
    validate('InitializationOptions', http.initializationOptions);
    const missing = daemonLaunch(settings({ 'selector.kind': 'http' }), {});
    assert.deepEqual(missing.initializationOptions.selector, { kind: 'none' });
    assert.match(missing.problems[0], /selector\.url/);
  });

  test("multi-root: every folder's .memory and the user memory; folder-relative roots in every folder", () => {
    const context = { workspaceFolder: '/w/api', workspaceFolders: ['/w/api', '/w/web'], home: '/home/ada', platform: 'linux' as const, env: {} };
    assert.deepEqual(daemonLaunch(settings(), context).initializationOptions.roots, [
      { path: '/w/api/.memory', scope: 'project' },
      { path: '/w/web/.memory', scope: 'project' },
      { path: '/home/ada/.local/share/memory-recall/memory', scope: 'user' },
    ]);
    const roots = [{ path: '.memory/team' }, { path: '${workspaceFolder}/notes' }, { path: '~/shared', scope: 'user' as const }];
    assert.deepEqual(daemonLaunch(settings({ roots }), context).initializationOptions.roots, [
      { path: '/w/api/.memory/team', scope: 'project' },
      { path: '/w/web/.memory/team', scope: 'project' },
      { path: '/w/api/notes', scope: 'project' },
      { path: '/w/web/notes', scope: 'project' },
      { path: '/home/ada/shared', scope: 'user' },
    ]);
    // One folder: the daemon's own defaults, as before.
    assert.equal(daemonLaunch(settings(), { ...context, workspaceFolders: ['/w/api'] }).initializationOptions.roots, undefined);
  });

  test("the user memory directory follows the daemon's platform rules", () => {
    assert.equal(userMemoryDir({ home: '/home/ada', platform: 'linux', env: {} }), '/home/ada/.local/share/memory-recall/memory');
    assert.equal(userMemoryDir({ home: '/home/ada', platform: 'linux', env: { XDG_DATA_HOME: '/data' } }), '/data/memory-recall/memory');
    assert.equal(userMemoryDir({ home: '/Users/ada', platform: 'darwin', env: {} }), '/Users/ada/Library/Application Support/memory-recall/memory');
    assert.equal(
      userMemoryDir({ home: 'C:\\Users\\ada', platform: 'win32', env: { LOCALAPPDATA: 'C:\\Users\\ada\\AppData\\Local' } }),
      'C:\\Users\\ada\\AppData\\Local\\memory-recall\\memory',
    );
  });

  test('a path-like command is expanded, a bare name is left to PATH', () => {
    assert.equal(daemonLaunch(settings({ 'server.command': '~/.local/bin/memory-recall' }), { home: '/h' }).command, '/h/.local/bin/memory-recall');
    assert.equal(daemonLaunch(settings({ 'server.command': 'memory-recall' }), { home: '/h' }).command, 'memory-recall');
    assert.equal(expandPath('${userHome}/m', { home: '/h' }), '/h/m');
  });
});

function doc(overrides: Partial<MemoryDoc>): MemoryDoc {
  return {
    path: '/m/project/deploy-freeze.md',
    relativePath: 'deploy-freeze.md',
    scope: 'project',
    type: 'project',
    title: 'Deploy freeze',
    description: 'No deploys on Friday after 15:00',
    body: '',
    truncated: false,
    mtimeMs: NOW - 3 * DAY,
    score: 10,
    ...overrides,
  };
}

function phase(overrides: Partial<PhaseResult>): PhaseResult {
  return { phase: 'fast', strategy: 'heuristic', status: 'delivered', docs: [], prompt: '', elapsedMs: 3.2, failure: null, ...overrides };
}

test('the initial wait defaults to 100 ms (docs/recall.md)', () => {
  assert.equal(DEFAULT_INITIAL_WAIT_MS, 100);
});

describe('presentation', () => {
  test('ages read like the daemon prompt', () => {
    assert.equal(formatAge(NOW - 10_000, NOW), 'just now');
    assert.equal(formatAge(NOW - 5 * 60_000, NOW), '5 min ago');
    assert.equal(formatAge(NOW - 3 * 3_600_000, NOW), '3 h ago');
    assert.equal(formatAge(NOW - DAY, NOW), '1 day ago');
    assert.equal(formatAge(NOW - 65 * DAY, NOW), '2 months ago');
    assert.equal(formatAge(NOW - 400 * DAY, NOW), '1 year ago');
    assert.equal(formatAge(NOW + 5000, NOW), 'just now');
  });

  test('quick pick rows: title, scope · type · age, description; fast then refined', () => {
    const fast = phase({ docs: [doc({})] });
    const refined = phase({
      phase: 'refined',
      strategy: 'model',
      elapsedMs: 812.4,
      docs: [doc({ title: 'Timezone', scope: 'user', type: 'user', description: '', relativePath: 'timezone.md' })],
    });
    const rows = recallRows(fast, refined, NOW);
    assert.deepEqual(
      rows.map((r) => (r.kind === 'separator' ? `-- ${r.label}` : `${r.label} | ${r.description} | ${r.detail}`)),
      [
        '-- fast · 3 ms',
        'Deploy freeze | project · project · 3 days ago | No deploys on Friday after 15:00',
        '-- chosen by the model · 812 ms',
        'Timezone | user · user · 3 days ago | timezone.md',
      ],
    );
    assert.equal(recallSummary(fast, refined), '2 memories — choose one to open');
    assert.equal(recallSummary(null, phase({ phase: 'refined', status: 'no_relevant_results' })), 'No relevant memories');
    assert.match(recallSummary(fast, phase({ phase: 'refined', failure: 'client declined: no chat model' })), /model not used/);
  });

  const status: StatusResult = {
    protocolVersion: 2,
    ready: true,
    roots: [
      { path: '/w/.memory', scope: 'project', exists: true, documents: 40 },
      { path: '/h/memory', scope: 'user', exists: false, documents: 0 },
    ],
    documents: 40,
    skipped: [{ path: '/w/.memory/broken.md', reason: 'no front matter' }],
    indexBuildMs: 12.3,
    ranker: 'reference',
    selector: 'client',
    watcher: { state: 'watching', detail: null },
    recall: { recalls: 3, completed: 2, cancelled: 1 },
    catalog: { scans: 1, upserts: 0, removals: 0, skippedUpdates: 0 },
  };

  test('status bar: count and watcher state', () => {
    assert.deepEqual(statusBar(status, 'running'), {
      text: '$(book) 40',
      tooltip: 'Memory Recall: 40 memories, watching for changes. Click for status.',
    });
    assert.match(statusBar({ ...status, watcher: { state: 'failed', detail: 'inotify limit' } }, 'running').text, /warning/);
    assert.match(statusBar({ ...status, ready: false }, 'running').text, /sync~spin/);
    assert.match(statusBar(undefined, 'stopped').text, /error/);
  });

  test('status report lists roots and skipped files', () => {
    const text = statusReport(status).join('\n');
    assert.match(text, /40 memories, index built in 12 ms/);
    assert.match(text, /project\s+40 {2}\/w\/\.memory\n/);
    assert.match(text, /\/h\/memory {2}\(missing\)/);
    assert.match(text, /broken\.md: no front matter/);
    assert.doesNotMatch(text, /Sync \(git\)/);
  });

  test('status report shows each synced root', () => {
    const synced: StatusResult = {
      ...status,
      sync: [
        {
          path: '/h/memory', remote: 'git@example.com:me/memory.git', branch: 'main', auto: true, state: 'offline',
          ahead: 2, behind: 0, pending: 1, lastSyncMs: null, lastError: 'could not resolve host',
          held: [{ path: 'aws.md', reason: 'holds a credential (aws_access_key_id)' }], secrets: [],
        },
      ],
    };
    const text = statusReport(synced).join('\n');
    assert.match(text, /\/h\/memory → git@example\.com:me\/memory\.git \(main\): automatic, offline/);
    assert.match(text, /2 ahead, 0 behind, 1 to commit; last error: could not resolve host/);
    assert.match(text, /stays here: aws\.md/);
  });
});

describe('model selection', () => {
  const params: SelectParams = {
    query: 'deploy on friday',
    limit: 2,
    recentTools: ['bash'],
    candidates: [
      { path: '/m/project/deploy-freeze.md', type: 'project', mtimeMs: NOW - DAY, description: 'No deploys on Friday' },
      { path: '/m/project/incidents/2024-03-14-pg-pool.md', type: 'project', mtimeMs: NOW - 2 * DAY, description: 'PG pool' },
      { path: '/m/user/timezone.md', type: 'user', mtimeMs: NOW - 3 * DAY, description: '' },
    ],
  };

  test('the prompt numbers every candidate', () => {
    const prompt = selectPrompt(params, NOW);
    assert.match(prompt, /Request: deploy on friday/);
    assert.match(prompt, /Tools the agent used recently: bash/);
    assert.match(prompt, /1\. \[project, 1 day ago\] project\/deploy-freeze — No deploys on Friday/);
    assert.match(prompt, /3\. \[user, 3 days ago\] user\/timezone — \(no description\)/);
    assert.match(prompt, /at most 2/);
    assert.equal(shortName('C:\\m\\incidents\\x.md'), 'incidents/x');
  });

  test('answers by number, name or path; unknown ones dropped; at most the limit', () => {
    assert.deepEqual(parseSelection('{"selected": [2]}', params), ['/m/project/incidents/2024-03-14-pg-pool.md']);
    assert.deepEqual(parseSelection('Sure!\n```json\n{"selected": ["user/timezone", 9, 1, 1]}\n```', params), [
      '/m/user/timezone.md',
      '/m/project/deploy-freeze.md',
    ]);
    assert.deepEqual(parseSelection('{"selected": [1, 2, 3]}', params).length, 2);
    assert.deepEqual(parseSelection('{"selected": []}', params), []);
    assert.throws(() => parseSelection('I think number 2', params), /did not answer/);
  });
});

describe('installing the daemon', () => {
  test('findExecutable: on PATH and executable, or a path that is; nothing else', () => {
    const dir = mkdtempSync(join(tmpdir(), 'memory-recall-path-'));
    try {
      mkdirSync(join(dir, 'bin'));
      const daemon = join(dir, 'bin', 'memory-recall');
      writeFileSync(daemon, '#!/bin/sh\n');
      chmodSync(daemon, 0o755);
      writeFileSync(join(dir, 'bin', 'not-executable'), '');
      const env = { PATH: ['/nonexistent', join(dir, 'bin')].join(':') };
      assert.equal(findExecutable('memory-recall', env, 'linux'), daemon);
      assert.equal(findExecutable(daemon, {}, 'linux'), daemon);
      assert.equal(findExecutable('not-executable', env, 'linux'), undefined);
      assert.equal(findExecutable('memory-recall', { PATH: '/nonexistent' }, 'linux'), undefined);
      assert.equal(findExecutable(join(dir, 'bin'), {}, 'linux'), undefined); // a directory
      // Windows: no execute bit; a bare name means name.com or name.exe.
      writeFileSync(join(dir, 'bin', 'memory-recall.exe'), '');
      assert.equal(findExecutable('memory-recall', { Path: join(dir, 'bin') }, 'win32'), join(dir, 'bin', 'memory-recall.exe'));
      assert.equal(findExecutable('not-executable', { Path: join(dir, 'bin') }, 'win32'), undefined);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('the message names the setting and an install that works (not PyPI)', () => {
    const text = missingDaemonMessage('memory-recall');
    assert.match(text, /"memory-recall" was not found/);
    assert.match(text, /"memoryRecall\.server\.command"/);
    assert.match(text, /pip install \. in a clone/);
    const guide = installGuide('memory-recall', manifest.repository.url).join('\n');
    assert.ok(guide.includes(`"git+${manifest.repository.url}"`), guide);
    assert.match(guide, /not published on PyPI/);
  });

  test('no text in editors/ offers an install from PyPI or the Marketplace', () => {
    const editors = resolve(EXTENSION_DIR, '..');
    const texts: string[] = [];
    const walk = (dir: string) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        if (['node_modules', 'out', '.git'].includes(entry.name)) continue;
        const path = join(dir, entry.name);
        if (entry.isDirectory()) walk(path);
        else if (/\.(md|json|txt|lua|ts)$/.test(entry.name) && entry.name !== 'package-lock.json') texts.push(path);
      }
    };
    walk(editors);
    assert.ok(texts.length > 10);
    for (const path of texts) {
      if (path.endsWith('units.test.ts')) continue; // this test names what it forbids
      const text = readFileSync(path, 'utf8');
      assert.doesNotMatch(text, /pipx? install (--user )?memory-recall|pip install memory-recall|ext install memory-recall/, path);
    }
  });
});

describe('package.json', () => {
  test('activates on a .memory folder (or a command, or an API call), not on every startup', () => {
    assert.deepEqual(manifest.activationEvents, ['workspaceContains:.memory']);
    const commands = manifest.contributes.commands.map((c: { command: string }) => c.command);
    assert.ok(commands.includes('memoryRecall.showInstallInstructions'));
  });

  test('repository, a 128×128 PNG icon, the Node.js it needs', () => {
    assert.match(manifest.repository.url, /^https:\/\//);
    const icon = readFileSync(join(EXTENSION_DIR, manifest.icon));
    assert.equal(icon.subarray(1, 4).toString(), 'PNG');
    assert.deepEqual([icon.readUInt32BE(16), icon.readUInt32BE(20)], [128, 128]);
    assert.equal(manifest.engines.node, '>=20');
    assert.ok(existsSync(join(EXTENSION_DIR, '.vscodeignore')));
    assert.match(readFileSync(join(EXTENSION_DIR, '.vscodeignore'), 'utf8'), new RegExp(`^!${manifest.icon}$`, 'm'));
  });
});
