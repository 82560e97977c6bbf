-- Headless tests of the plugin against the real daemon:
--
--   nvim --headless --clean -l tests/spec.lua
--
-- The daemon command comes from $MEMORY_RECALL_SERVER (a JSON list, set by
-- tests/test_editors.py), else the repository's .venv. Exit code 1 on failure.
local here = vim.fs.dirname(vim.fs.normalize(vim.fn.fnamemodify(arg[0] or debug.getinfo(1, 'S').source:sub(2), ':p')))
local plugin_dir = vim.fs.dirname(here)
local repo = vim.fs.dirname(vim.fs.dirname(plugin_dir))
vim.opt.runtimepath:prepend(plugin_dir)
vim.cmd.runtime('plugin/memory_recall.lua')

local memory = require('memory_recall')
local daemon = require('memory_recall.daemon')
local ui = require('memory_recall.ui')

local DEMO_PROJECT = repo .. '/fixtures/demo-memory/project'
local DEMO_USER = repo .. '/fixtures/demo-memory/user'
local DEPLOY_FREEZE = DEMO_PROJECT .. '/deploy-freeze.md'
local ROOTS = { { path = DEMO_PROJECT, scope = 'project' }, { path = DEMO_USER, scope = 'user' } }

local function server_cmd()
  local from_env = os.getenv('MEMORY_RECALL_SERVER')
  if from_env and from_env ~= '' then
    return vim.json.decode(from_env)
  end
  return { repo .. '/.venv/bin/python', '-m', 'memory_recall.server', 'serve' }
end
local CMD = server_cmd()

-- The daemon's stderr lands in the LSP log; remember where this run starts.
local log_path = vim.lsp.get_log_path()
local log_start = (vim.uv.fs_stat(log_path) or { size = 0 }).size

-- A tiny runner: test(name, fn) runs now; failures are counted, not fatal.
local results = { passed = 0, failed = 0 }
local function test(name, fn)
  local started = vim.uv.hrtime()
  local ok, err = xpcall(fn, debug.traceback)
  local ms = (vim.uv.hrtime() - started) / 1e6
  if ok then
    results.passed = results.passed + 1
    io.stdout:write(('ok - %s (%.0f ms)\n'):format(name, ms))
  else
    results.failed = results.failed + 1
    io.stdout:write(('not ok - %s\n%s\n'):format(name, err))
  end
  -- Close whatever the test opened.
  pcall(vim.cmd, 'silent! only!')
  pcall(vim.cmd, 'silent! cclose')
end

local function eq(expected, actual, what)
  if not vim.deep_equal(expected, actual) then
    error(('%s: expected %s, got %s'):format(what or 'value', vim.inspect(expected), vim.inspect(actual)), 2)
  end
end

--- Wait until `predicate()` is truthy (5 s at most).
local function wait_for(what, predicate, timeout_ms)
  if not vim.wait(timeout_ms or 5000, predicate, 10) then
    error('timed out waiting for ' .. what, 2)
  end
end

local function buffer_text(buf)
  return table.concat(vim.api.nvim_buf_get_lines(buf or 0, 0, -1, false), '\n')
end

--- Start the plugin with `opts` and wait for the daemon to be initialized.
local function setup(opts)
  memory.setup(vim.tbl_extend('force', { cmd = CMD, roots = ROOTS, watch = false }, opts or {}))
  local ready = false
  daemon.with_client(memory.config(), function(client, err)
    assert(client, err)
    ready = true
  end)
  wait_for('the daemon to initialize', function()
    return ready
  end)
end

local function contains(list, value)
  return vim.tbl_contains(list, value)
end

local function paths(phase)
  return vim.tbl_map(function(doc)
    return doc.path
  end, phase.docs)
end

-- Everything the daemon sends, for "nothing after cancel" checks.
local phases, telemetry = {}, {}
memory.on_phase(function(note)
  table.insert(phases, note)
end)
memory.on_telemetry(function(event)
  table.insert(telemetry, event)
end)

--- recall() with both callbacks recorded.
local function recall(query, opts)
  local got = { initial_calls = 0, refined_calls = 0, started = vim.uv.hrtime() }
  got.handle = memory.recall(query, opts, function(phase, err)
    got.initial_calls = got.initial_calls + 1
    got.initial, got.initial_err = phase, err
    got.initial_ms = (vim.uv.hrtime() - got.started) / 1e6
  end, function(phase, err)
    got.refined_calls = got.refined_calls + 1
    got.refined, got.refined_err = phase, err
  end)
  return got
end

-- Pure pieces ------------------------------------------------------------------

test('the default initial wait is 100 ms', function()
  eq(100, daemon.DEFAULT_INITIAL_WAIT_MS)
  eq(100, memory.defaults.initial_wait_ms)
end)

test('ages read like the daemon prompt', function()
  local now = 1738324800000
  eq('just now', ui.format_age(now - 10000, now))
  eq('5 min ago', ui.format_age(now - 5 * 60000, now))
  eq('1 day ago', ui.format_age(now - 86400000, now))
  eq('2 months ago', ui.format_age(now - 65 * 86400000, now))
end)

test('setup options become initializationOptions', function()
  local options = memory.init_options({
    roots = { '~/notes', { path = '/tmp/m/', scope = 'user' } },
    selector = { kind = 'http', url = 'http://127.0.0.1:11434/v1', api_key_env = 'KEY', timeout_ms = 900 },
    watch = false,
    ranker = 'default',
  })
  eq({
    watch = false,
    ranker = 'default',
    roots = {
      { path = vim.fs.normalize('~/notes'), scope = 'project' },
      { path = '/tmp/m', scope = 'user' },
    },
    selector = { kind = 'http', url = 'http://127.0.0.1:11434/v1', apiKeyEnv = 'KEY', timeoutMs = 900 },
  }, options)
  eq({ kind = 'client' }, memory.init_options({ select = function() end }).selector)
  eq({ kind = 'none' }, memory.init_options({}).selector)
end)

-- Selector none: one phase --------------------------------------------------------

setup({ selector = { kind = 'none' } })

test('no selector: on_initial gets the refined phase, on_refined the same', function()
  local got = recall('deploy freeze on friday', { initial_wait_ms = 5000 })
  wait_for('refined', function()
    return got.refined_calls == 1
  end)
  eq(1, got.initial_calls, 'on_initial calls')
  eq('refined', got.initial.phase)
  eq('heuristic', got.refined.strategy)
  eq('delivered', got.refined.status)
  eq(DEPLOY_FREEZE, got.refined.docs[1].path)
  eq('deploy-freeze.md', got.refined.docs[1].relativePath)
  eq(got.handle.token, got.refined.token)
  assert(got.refined.prompt:find('^## Relevant memory'), got.refined.prompt)
end)

test('exclude_paths and limit are sent', function()
  local got = recall('deploy freeze on friday', { exclude_paths = { DEPLOY_FREEZE }, limit = 1 })
  wait_for('refined', function()
    return got.refined_calls == 1
  end)
  eq(1, #got.refined.docs)
  assert(got.refined.docs[1].path ~= DEPLOY_FREEZE)
end)

test('an invalid query reaches on_initial and on_refined as an error', function()
  local got = recall(string.rep('x', 40000), { initial_wait_ms = 5000 })
  wait_for('refined', function()
    return got.refined_calls == 1
  end)
  eq(nil, got.refined)
  assert(got.refined_err:find('query'), got.refined_err)
  eq(1, got.initial_calls)
end)

test('the rankers and their old names are served', function()
  local served = { bm25f = 'bm25f', spec = 'spec', default = 'bm25f', indexed = 'spec', reference = 'spec' }
  for name, want in pairs(served) do
    eq(name, memory.init_options({ ranker = name }).ranker)
  end
  local status
  memory.status(function(s, err)
    status = s or error(err)
  end)
  wait_for('status', function()
    return status ~= nil
  end)
  eq('bm25f', status.ranker) -- the daemon's default: setup() passed no ranker
end)

test('memory/status: roots, counts, skipped files', function()
  local status
  memory.status(function(s, err)
    status = s or error(err)
  end)
  wait_for('status', function()
    return status ~= nil
  end)
  eq(true, status.ready)
  eq(DEMO_PROJECT, status.roots[1].path)
  eq('user', status.roots[2].scope)
  assert(status.documents > 40, status.documents)
  eq('off', status.watcher.state)
  local lines = table.concat(ui.status_lines(status), '\n')
  assert(lines:find(status.documents .. ' memories'), lines)
  assert(lines:find('broken.md'), lines)
end)

test(':MemoryRecall without a selector shows the one lexical phase', function()
  vim.cmd('MemoryRecall deploy freeze on friday')
  wait_for('the result in the window', function()
    return buffer_text():find('memories — <CR> open', 1, true) ~= nil
  end)
  local text = buffer_text()
  assert(text:find('^lexical · %d+ ms\n  Deploy freeze before release  %(project · project · '), text)
  eq(2, vim.api.nvim_win_get_cursor(0)[1])
end)

test(':MemoryStatus shows the status in a window', function()
  vim.cmd('MemoryStatus')
  wait_for('the status window', function()
    return vim.bo.filetype == 'memory_recall' and buffer_text():find('Roots:') ~= nil
  end)
  assert(buffer_text():find(DEMO_PROJECT, 1, true))
end)

-- Selector client: the select hook --------------------------------------------------

local select_calls = {}
local answer -- function(params, respond) set per test

setup({
  selector = { kind = 'client', timeout_ms = 10000 },
  select = function(params, respond)
    table.insert(select_calls, params)
    return answer(params, respond)
  end,
})

test('fast result within the initial wait, then the model choice minus fast docs', function()
  local fast_paths = {}
  answer = function(params, respond)
    vim.defer_fn(function() -- a model round trip
      local chosen = vim.list_extend({}, fast_paths)
      for _, candidate in ipairs(params.candidates) do
        if #chosen >= #fast_paths + 2 then
          break
        end
        if not contains(fast_paths, candidate.path) then
          table.insert(chosen, candidate.path)
        end
      end
      respond({ selected = chosen })
    end, 300)
  end
  -- A generous wait: the fast phase comes first by protocol, not by timing.
  local got = recall('deploy freeze on friday', { recent_tools = { 'mcp__github__create_issue' }, initial_wait_ms = 5000 })
  wait_for('initial', function()
    return got.initial_calls == 1
  end)
  assert(got.initial, 'the fast phase first (took ' .. got.initial_ms .. ' ms)')
  eq('fast', got.initial.phase)
  eq('heuristic', got.initial.strategy)
  eq(DEPLOY_FREEZE, got.initial.docs[1].path)
  assert(#got.initial.docs <= 2)
  fast_paths = paths(got.initial)

  wait_for('refined', function()
    return got.refined_calls == 1
  end)
  eq('model', got.refined.strategy)
  eq('delivered', got.refined.status)
  eq(2, #got.refined.docs)
  for _, path in ipairs(paths(got.refined)) do
    assert(not contains(fast_paths, path), 'fast doc repeated: ' .. path)
  end
  local params = select_calls[#select_calls]
  eq('deploy freeze on friday', params.query)
  eq(5, params.limit)
  eq({ 'mcp__github__create_issue' }, params.recentTools)
  assert(#params.candidates > 2)
end)

test('the initial wait expires: on_initial(nil), then the refined phase', function()
  answer = function(_, respond)
    vim.defer_fn(function()
      respond({ selected = {} })
    end, 200)
  end
  local got = recall('deploy freeze on friday', { initial_wait_ms = 0 })
  wait_for('refined', function()
    return got.refined_calls == 1
  end)
  eq(1, got.initial_calls)
  eq(nil, got.initial)
  eq('refined', got.refined.phase)
  eq('model', got.refined.strategy)
  eq('no_relevant_results', got.refined.status)
end)

test('a synchronous hook may return its answer', function()
  answer = function(params)
    return { selected = { params.candidates[#params.candidates].path } }
  end
  local got = recall('deploy freeze on friday')
  wait_for('refined', function()
    return got.refined_calls == 1
  end)
  eq('model', got.refined.strategy)
end)

-- A hook that declines, or throws, makes the daemon fall back to the lexical top 5.
for _, case in ipairs({
  {
    name = 'a declining hook makes the daemon fall back to the lexical top 5',
    reason = 'no model here',
    hook = function(_, respond)
      respond(nil, 'no model here')
    end,
  },
  {
    name = 'a hook that throws declines too',
    reason = 'boom',
    hook = function()
      error('boom')
    end,
  },
}) do
  test(case.name, function()
    answer = case.hook
    local got = recall('deploy freeze on friday')
    wait_for('refined', function()
      return got.refined_calls == 1
    end)
    eq('heuristic', got.refined.strategy)
    assert(got.refined.failure:find(case.reason), got.refined.failure)
  end)
end

test('cancel: callbacks get (nil, "cancelled"), the daemon sends nothing more', function()
  local answered_late = false
  answer = function(_, respond)
    vim.defer_fn(function()
      respond({ selected = {} }) -- too late: the daemon must drop it
      answered_late = true
    end, 500)
  end
  local got = recall('deploy freeze on friday', { initial_wait_ms = 5000 })
  wait_for('initial', function()
    return got.initial_calls == 1
  end)
  eq('fast', got.initial.phase)
  local seen = #phases
  local client = daemon.client()
  local pending_before = vim.tbl_count(client.requests)
  got.handle.cancel()
  eq(1, got.refined_calls)
  eq('cancelled', got.refined_err)
  -- The daemon acknowledges (-32800, which vim.lsp does not surface) and
  -- reports the recall cancelled.
  wait_for('the cancelled telemetry event', function()
    for _, event in ipairs(telemetry) do
      if event.token == got.handle.token then
        return event.outcome == 'cancelled'
      end
    end
  end)
  wait_for('the cancel acknowledgement', function()
    return vim.tbl_count(client.requests) < pending_before
  end)
  wait_for('the late answer', function()
    return answered_late
  end)
  vim.wait(100)
  for i = seen + 1, #phases do
    assert(phases[i].token ~= got.handle.token, 'a notification after cancel: ' .. phases[i].phase)
  end
  eq(1, got.refined_calls)
end)

test('without a select hook the plugin declines and the daemon falls back', function()
  local cfg = memory.config()
  local hook = cfg.select
  cfg.select = nil
  local got = recall('deploy freeze on friday')
  wait_for('refined', function()
    return got.refined_calls == 1
  end)
  cfg.select = hook
  eq('heuristic', got.refined.strategy)
  assert(got.refined.failure:find('no memory/select hook', 1, true), got.refined.failure)
end)

test(':MemoryRecall shows the fast result, then the refined one; <CR> opens a memory', function()
  local release
  answer = function(params, respond)
    release = function()
      local last = params.candidates[#params.candidates].path
      respond({ selected = { last } })
    end
  end
  vim.cmd('MemoryRecall deploy freeze on friday')
  local buf = vim.api.nvim_get_current_buf()
  eq('memory_recall', vim.bo[buf].filetype)
  wait_for('the fast result in the window', function()
    return buffer_text(buf):find('Deploy freeze before release', 1, true) ~= nil
  end)
  assert(buffer_text(buf):find('Recalling', 1, true), buffer_text(buf))
  assert(buffer_text(buf):find('project · project · ', 1, true), buffer_text(buf))
  wait_for('the select request', function()
    return release ~= nil
  end)
  release()
  wait_for('the refined result in the window', function()
    return buffer_text(buf):find('chosen by the model', 1, true) ~= nil
  end)
  assert(buffer_text(buf):find('memories — <CR> open', 1, true), buffer_text(buf))
  -- The cursor sits on the first memory; <CR> opens it.
  vim.api.nvim_feedkeys(vim.keycode('<CR>'), 'x', false)
  eq(DEPLOY_FREEZE, vim.api.nvim_buf_get_name(0))
  vim.cmd('bwipeout')
end)

test('closing the :MemoryRecall window cancels the recall', function()
  answer = function() end -- never answers
  local before = #telemetry
  vim.cmd('MemoryRecall deploy freeze on friday')
  wait_for('the fast result in the window', function()
    return buffer_text():find('Deploy freeze', 1, true) ~= nil
  end)
  vim.api.nvim_feedkeys('q', 'x', false)
  wait_for('the cancelled telemetry event', function()
    for i = before + 1, #telemetry do
      if telemetry[i].outcome == 'cancelled' then
        return true
      end
    end
  end)
end)

-- Quickfix UI and the watcher ---------------------------------------------------------

local tmp = vim.fn.tempname()
vim.fn.mkdir(tmp, 'p')
setup({ roots = { tmp }, watch = true, ui = 'quickfix', selector = { kind = 'none' } })

test('a new memory file is watched, then recalled into the quickfix list', function()
  vim.fn.writefile({
    '---',
    'name: Kiwi release train',
    'description: the kiwi train leaves on Thursdays',
    'type: project',
    '---',
    'Board it.',
  }, tmp .. '/kiwi.md')
  local documents
  wait_for('the watcher to index kiwi.md', function()
    memory.status(function(status)
      documents = status and status.documents
    end)
    vim.wait(50)
    return documents == 1
  end)
  vim.cmd('MemoryRecall kiwi train')
  wait_for('the quickfix list', function()
    return #vim.fn.getqflist() == 1
  end)
  local item = vim.fn.getqflist()[1]
  eq(vim.fs.normalize(tmp .. '/kiwi.md'), vim.fs.normalize(vim.api.nvim_buf_get_name(item.bufnr)))
  assert(item.text:find('Kiwi release train', 1, true), item.text)
  local title = vim.fn.getqflist({ title = 1 }).title
  wait_for('the final title', function()
    title = vim.fn.getqflist({ title = 1 }).title
    return title:find('1 memory', 1, true) ~= nil
  end)
  eq('Memory: kiwi train — 1 memory', title)
end)

test('the quickfix title names no keys; the float names its own', function()
  local fast = { phase = 'fast', docs = { { title = 't' } } }
  eq('1 memory', ui.summary(fast, nil, nil))
  eq('1 memory — <CR> open · q close', ui.summary(fast, nil, nil, ui.FLOAT_KEYS))
end)

-- :MemoryStatus while the first index builds ------------------------------------------

--- A root of `count` memories: big enough that the daemon is still indexing
--- when the first status arrives.
local function big_root(count)
  local root = vim.fn.tempname()
  vim.fn.mkdir(root, 'p')
  for i = 1, count do
    vim.fn.writefile({
      '---',
      ('name: Runbook %d'):format(i),
      ('description: what to do when service %d pages'):format(i),
      'type: reference',
      '---',
      ('Restart service %d, then check its queue depth.'):format(i),
    }, ('%s/runbook-%04d.md'):format(root, i))
  end
  return root
end

--- Count memory.status() calls (the status window asks through it).
local status_calls = 0
local real_status = memory.status
memory.status = function(...)
  status_calls = status_calls + 1
  return real_status(...)
end

local MANY = 3000
local big = big_root(MANY)

test(':MemoryStatus opened while indexing refreshes until ready, then stops', function()
  setup({ roots = { big }, selector = { kind = 'none' } })
  local view
  memory.status_command(function(v)
    view = v
  end)
  wait_for('the status window', function()
    return view ~= nil
  end)
  local first = buffer_text(view.buf)
  assert(first:find('(indexing…)', 1, true) and first:find('0 memories', 1, true), first)
  wait_for('the window to show the built index', function()
    local text = buffer_text(view.buf)
    return text:find(MANY .. ' memories, index built in', 1, true) ~= nil and not text:find('indexing', 1, true)
  end, 60000)
  local calls = status_calls
  vim.wait(1500)
  eq(calls, status_calls, 'status requests after ready')
  eq(true, vim.api.nvim_win_is_valid(view.win))
end)

local big2 = big_root(MANY)

test(':MemoryStatus closed while indexing stops refreshing', function()
  setup({ roots = { big2 }, selector = { kind = 'none' } })
  local view
  memory.status_command(function(v)
    view = v
  end)
  wait_for('the status window', function()
    return view ~= nil
  end)
  assert(buffer_text(view.buf):find('(indexing…)', 1, true), buffer_text(view.buf))
  vim.v.errmsg = '' -- earlier tests' cleanup may have left one
  vim.api.nvim_set_current_win(view.win)
  vim.api.nvim_feedkeys('q', 'x', false)
  eq(true, view.closed)
  local calls = status_calls
  vim.wait(1500)
  eq(calls, status_calls, 'status requests after the window closed')
  eq('', vim.v.errmsg)
end)

memory.status = real_status

-- Done -------------------------------------------------------------------------------

local client = daemon.client()
memory.stop()
if client then
  vim.wait(5000, function()
    return client:is_stopped()
  end, 20)
end
vim.fn.delete(tmp, 'rf')
vim.fn.delete(big, 'rf')
vim.fn.delete(big2, 'rf')

-- The daemon's stderr lands in the LSP log: this run's part holds no traceback.
local log_file = io.open(log_path, 'r')
if log_file then
  log_file:seek('set', log_start)
  local log = log_file:read('*a')
  log_file:close()
  if log:find('Traceback', 1, true) then
    results.failed = results.failed + 1
    io.stdout:write('not ok - the daemon logged a traceback:\n' .. log .. '\n')
  end
end

io.stdout:write(('%d passed, %d failed\n'):format(results.passed, results.failed))
os.exit(results.failed > 0 and 1 or 0)
