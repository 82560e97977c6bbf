--- memory-recall for Neovim: recall your coding agent's memory notes.
---
---   require('memory_recall').setup({ roots = ..., selector = ..., select = ... })
---   :MemoryRecall {query}   :MemoryStatus
---   require('memory_recall').recall(query, opts, on_initial, on_refined)
---
--- See :help memory_recall.
local daemon = require('memory_recall.daemon')
local ui = require('memory_recall.ui')

local M = {}

--- Defaults of setup(); every key is optional.
M.defaults = {
  --- The daemon command (a list, as for vim.lsp). Its stderr goes to :LspLog
  --- at ERROR level, hence only warnings.
  cmd = { 'memory-recall', 'serve', '--log-level', 'WARNING' },
  --- Extra environment for the daemon, e.g. the API key of an http selector.
  cmd_env = nil,
  --- Memory directories: { { path = '~/notes/memory', scope = 'user' }, ... }
  --- or plain paths (project scope). nil: the daemon's defaults,
  --- <root_dir>/.memory (project) and the per-user memory directory.
  roots = nil,
  --- The workspace whose .memory is the default project root. nil: the cwd.
  root_dir = nil,
  --- Who chooses the refined memories: { kind = 'none'|'client'|'http',
  --- url, model, api_key_env, timeout_ms }. Default: 'client' when `select`
  --- is set, else 'none' (the lexical ranking, in one phase).
  selector = nil,
  --- `function(params, respond)` answering `memory/select` (kind 'client'):
  --- params = { query, candidates = { { path, type, mtimeMs, description } },
  --- limit, recentTools }. Call `respond({ selected = { path, ... } })` now or
  --- later, or `respond(nil, reason)` to decline (the daemon falls back), or
  --- return the answer table directly.
  select = nil,
  --- Re-index memory files when they change on disk.
  watch = true,
  --- Fast-phase ranking: 'bm25f' (BM25F over whole bodies, silent when nothing
  --- specific matches; the daemon's default) or 'spec' (the spec scorer). The
  --- old names 'default', 'indexed' and 'reference' still work. nil: the daemon's.
  ranker = nil,
  --- How long recall() waits before on_initial(nil).
  initial_wait_ms = daemon.DEFAULT_INITIAL_WAIT_MS,
  --- Where :MemoryRecall shows results: 'float' or 'quickfix'.
  ui = 'float',
  --- Start the daemon at setup() so its index is warm for the first recall.
  autostart = true,
  --- `function(params, respond)` answering `memory/complete` (protocol v2)
  --- with your own model, so `extract()` works without an http endpoint:
  --- params = { task, messages = { { role, content } }, responseSchema,
  --- maxTokens }. Call `respond({ content = json_text })` (or a plain string),
  --- now or later, or `respond(nil, reason)` to decline. Setting it makes the
  --- selector kind 'client' (the daemon asks the model channel only then).
  complete = nil,
}

local config = nil ---@type table?

local SELECTOR_KEYS = { api_key_env = 'apiKeyEnv', timeout_ms = 'timeoutMs' }
local UI_WAIT_MS = 60000
-- :MemoryStatus asks again this often while the first index is building.
local STATUS_REFRESH_MS = 500

--- An absolute path: `~` and $VARS expanded (not `%` or `#`, as expand() would).
local function expand(path)
  local absolute = vim.fs.normalize(vim.fn.fnamemodify(vim.fs.normalize(path), ':p'))
  return (absolute:gsub('(.)/$', '%1'))
end

--- initializationOptions (camelCase, as on the wire) from the setup() options.
function M.init_options(opts)
  local options = { watch = opts.watch ~= false, ranker = opts.ranker }
  if opts.roots then
    options.roots = {}
    for _, root in ipairs(opts.roots) do
      if type(root) == 'string' then
        root = { path = root }
      end
      table.insert(options.roots, { path = expand(root.path), scope = root.scope or 'project' })
    end
  end
  local selector = {}
  for key, value in pairs(opts.selector or {}) do
    selector[SELECTOR_KEYS[key] or key] = value
  end
  selector.kind = selector.kind or ((opts.select or opts.complete) and 'client' or 'none')
  options.selector = selector
  if opts.complete then
    options.capabilities = { complete = true }
  end
  return options
end

local function resolve(opts)
  local resolved = vim.tbl_deep_extend('force', {}, M.defaults, opts or {})
  -- Lists are replaced, not merged.
  resolved.cmd = (opts and opts.cmd) or M.defaults.cmd
  resolved.roots = opts and opts.roots or nil
  resolved.root_dir = resolved.root_dir and expand(resolved.root_dir) or vim.fn.getcwd()
  resolved.init_options = M.init_options(resolved)
  return resolved
end

--- Configure the plugin (and start the daemon unless autostart = false).
--- Calling it again restarts the daemon with the new options.
function M.setup(opts)
  local restarting = config ~= nil and daemon.client() ~= nil
  config = resolve(opts)
  if restarting then
    daemon.stop()
  end
  if config.autostart then
    local ok, err = daemon.start(config)
    if not ok then
      vim.notify(err, vim.log.levels.WARN)
    end
  end
end

local function current()
  if not config then
    config = resolve({})
  end
  return config
end

--- The resolved configuration (after setup()).
function M.config()
  return current()
end

--- Recall memories for `query`, for agent plugins.
--- opts: { recent_tools = {...}, exclude_paths = {...}, limit = 1..5, initial_wait_ms = 100 }.
--- on_initial(phase|nil, err) runs once with the first of the fast result, the
--- refined result and the initial wait (nil); on_refined(phase|nil, err) runs
--- once with the refined phase (when on_initial already got the refined phase,
--- it is the same table). A phase: { phase, strategy, status, docs, prompt,
--- elapsedMs, failure, requestId, token }, docs: { path, relativePath, scope,
--- type, title, description, body, truncated, mtimeMs, score }.
--- Returns a handle: { token, cancel() }.
function M.recall(query, opts, on_initial, on_refined)
  return daemon.recall(current(), query, opts, on_initial, on_refined)
end

--- memory/status; callback(status|nil, err).
function M.status(callback)
  daemon.status(current(), callback)
end

-- The write side, extraction and organisation (protocol v2) ---------------------
--
-- Every function takes a table of options (snake_case keys are sent camelCase:
-- dry_run → dryRun) and calls `callback(result|nil, err)` once, err being the
-- daemon's message ("invalid params: path: …", "changed on disk: …").

--- `{ a_b = 1 }` → `{ aB = 1 }` (top-level keys only: values are sent as given).
local function wire(opts)
  local params = {}
  for key, value in pairs(opts or {}) do
    params[(key:gsub('_(%l)', string.upper))] = value
  end
  return next(params) and params or vim.empty_dict()
end

local undo_stack = {} ---@type string[] operation ids this Neovim made, oldest first

--- Remember the operations of a write result so undo() can take them back.
local function record(result)
  if type(result) ~= 'table' or type(result.operations) ~= 'table' then
    return
  end
  local seen = {}
  for _, op in ipairs(result.operations) do
    if op.action ~= 'proposed' and type(op.operation) == 'string' and not seen[op.operation] then
      seen[op.operation] = true
      table.insert(undo_stack, op.operation)
    end
  end
end

local function request(method, params, callback, on_result)
  callback = callback or function() end
  daemon.request(current(), method, params, function(result, err, code)
    if result and on_result then
      on_result(result)
    end
    callback(result, err, code)
  end)
end

--- The operation ids of the writes made through this plugin, oldest first
--- (undo() without an id takes back the last).
function M.operations()
  return vim.deepcopy(undo_stack)
end

--- `memory/remember`: `text` or `{ text, scope, type, title, description,
--- category, pinned, always, force }`; callback(write_result|nil, err). A gate
--- refusal is not an error: it is in `result.skipped` ({ title, reason, message }).
function M.remember(opts, callback)
  if type(opts) == 'string' then
    opts = { text = opts }
  end
  request(daemon.methods.remember, wire(opts), callback, record)
end

--- `memory/update`: `{ path, if_match, title, description, type, body, pinned, always, force }`.
function M.update(opts, callback)
  request(daemon.methods.update, wire(opts), callback, record)
end

--- `memory/forget`: `path` or `{ path, reason, hard }` (hard deletes: no undo).
function M.forget(opts, callback)
  if type(opts) == 'string' then
    opts = { path = opts }
  end
  request(daemon.methods.forget, wire(opts), callback, record)
end

--- `memory/restore`: bring an archived memory back (`path` or `{ path }`).
function M.restore(opts, callback)
  if type(opts) == 'string' then
    opts = { path = opts }
  end
  request(daemon.methods.restore, wire(opts), callback, record)
end

--- `memory/undo`: `operation` (an id) or nil for the last write made through
--- this plugin that is not undone yet. callback(write_result|nil, err).
function M.undo(operation, callback)
  local from_stack = operation == nil
  if from_stack then
    operation = undo_stack[#undo_stack]
    if not operation then
      return (callback or function() end)(nil, 'nothing to undo: no memory change was made from this Neovim')
    end
  end
  request(daemon.methods.undo, { operation = operation }, callback, function()
    for i = #undo_stack, 1, -1 do
      if undo_stack[i] == operation then
        table.remove(undo_stack, i)
        break
      end
    end
  end)
end

--- `memory/history`: `path`; callback({ path, entries }|nil, err).
function M.history(path, callback)
  request(daemon.methods.history, { path = path }, callback)
end

--- `memory/list`: `{ scope, category }`; callback({ memories }|nil, err). The
--- daemon answers a page at a time (`nextCursor` names the next): every page is
--- fetched and joined.
function M.list(opts, callback)
  callback = callback or function() end
  local memories = {}
  local function page(cursor)
    local params = wire(vim.tbl_extend('force', opts or {}, { cursor = cursor }))
    request(daemon.methods.list, params, function(result, err, code)
      if not result then
        return callback(result, err, code)
      end
      vim.list_extend(memories, result.memories or {})
      local next_cursor = result.nextCursor
      if next_cursor == nil or next_cursor == vim.NIL then
        return callback({ memories = memories })
      end
      page(next_cursor)
    end)
  end
  page(nil)
end

--- `memory/extract`: `{ trigger, transcript = { { role, content } }, files =
--- { { path, content } }, diff, scope, apply }`. Triggers other than
--- 'projectInit' need a model (selector 'http', or the `complete` hook).
--- callback(extract_result|nil, err): operations, skipped, failure, model, transcript.
function M.extract(opts, callback)
  request(daemon.methods.extract, wire(opts), callback, record)
end

--- `memory/tree`: `{ scope }`; callback({ categories, total }|nil, err).
function M.tree(opts, callback)
  request(daemon.methods.tree, wire(opts), callback)
end

--- `memory/context`: `{ budget_chars }`; callback({ prompt, docs, truncated,
--- budgetChars, usedChars }|nil, err): the always-loaded block to start a session with.
function M.context(opts, callback)
  request(daemon.methods.context, wire(opts), callback)
end

--- `memory/consolidate`: `{ scope, dry_run }`; callback({ dryRun, reports,
--- operations, skipped, indexes }|nil, err). A run is one operation per root.
function M.consolidate(opts, callback)
  request(daemon.methods.consolidate, wire(opts), callback, record)
end

-- Reflection and retrieval (docs/network.md) ---------------------------------------------

--- The recall that last delivered each memory: path → { token, title, phase }.
local delivered = {}
daemon.on_phase(function(note)
  if type(note.docs) ~= 'table' or note.token == nil then
    return
  end
  for _, doc in ipairs(note.docs) do
    delivered[doc.path] = { token = note.token, title = doc.title, phase = note.phase }
  end
end)

--- The recall that last delivered `path` in this Neovim: { token, title, phase } or nil.
function M.delivered(path)
  return delivered[path]
end

--- `memory/feedback`: tell the daemon which delivered memories your model used.
--- opts: { token = recall token, used = { path, ... }, ignored = { path, ... } }
--- (or `items = { { id = path, verdict = 'used'|'ignored' } }`). Without a
--- callback it is the docs/network.md notification (nothing comes back); with one it is
--- sent as a request and callback({ recorded, unknown, coUseLinks }|nil, err).
function M.feedback(opts, callback)
  local params = wire(opts)
  if callback then
    request(daemon.methods.feedback, params, callback)
  else
    daemon.notify(current(), daemon.methods.feedback, params)
  end
end

--- `memory/explain`: why a memory was or was not delivered. opts: { path, token }
--- (a recall this daemon ran lately) or { path, query, recent_tools, ranker }.
--- callback(explain_result|nil, err): rank, score parts, silence, network path,
--- staleness, phases and a summary in words.
function M.explain(opts, callback)
  request(daemon.methods.explain, wire(opts), callback)
end

--- `memory/search`, for an agent's memory tool. opts: { query, mode =
--- 'shallow' (titles and descriptions) | 'deep' (whole bodies and the memory
--- network) | 'explore' (a subtree of the topic tree: category, or path) |
--- 'get' (path), scope, limit }; callback(search_result|nil, err).
function M.search(opts, callback)
  request(daemon.methods.search, wire(opts), callback)
end

--- `memory/observe` (a notification): what the agent is doing. opts: { event =
--- 'edit'|'error'|'toolResult'|'command', path, text }. When a lesson or
--- convention strongly matches, the daemon sends `memory/suggestion`: see
--- on_suggestion(). `callback(ok, err)`, if given, runs once it is sent.
function M.observe(opts, callback)
  daemon.notify(current(), daemon.methods.observe, wire(opts), callback)
end

--- `listener({ trigger, docs, prompt })` runs with every `memory/suggestion`
--- (each memory at most once per session, rate-limited by the daemon).
M.on_suggestion = daemon.on_suggestion

--- Stop the daemon.
function M.stop()
  daemon.stop()
end

--- Called with every phase notification / terminal telemetry event (for tests and statuslines).
M.on_phase = daemon.on_phase
M.on_telemetry = daemon.on_telemetry

--- :MemoryRecall {query}: the fast result at once, updated with the refined one.
--- Returns the view and the recall handle.
function M.recall_command(query)
  query = vim.trim(query or '')
  if query == '' then
    vim.ui.input({ prompt = 'Memory recall: ' }, function(input)
      if input and vim.trim(input) ~= '' then
        M.recall_command(input)
      end
    end)
    return
  end
  local cfg = current()
  local handle
  local view = cfg.ui == 'quickfix' and ui.results_quickfix(query)
    or ui.results_float(query, function()
      if handle then
        handle.cancel() -- closing the window abandons the model call
      end
    end)
  local fast
  -- The window has no 100 ms budget: wait for whichever phase comes first
  -- (the daemon answers within its 30 s selector ceiling).
  handle = M.recall(query, { initial_wait_ms = UI_WAIT_MS }, function(phase)
    if phase and phase.phase == 'fast' then
      fast = phase
      view:update(fast, nil, 'Recalling… (the model is choosing more)')
    end
  end, function(refined, err)
    if err == 'cancelled' and view.closed then
      return
    end
    view:update(fast, refined, ui.summary(fast, refined, err, view.keys))
  end)
  view.token = handle.token
  return view, handle
end

--- :MemoryStatus: roots, counts, skipped files, watcher. Opened while the
--- daemon is still indexing, the window refreshes until the index is ready
--- (or the window is closed). `on_open(view)`, if given, gets the window.
function M.status_command(on_open)
  M.status(function(status, err)
    if not status then
      vim.notify('memory-recall: ' .. tostring(err), vim.log.levels.ERROR)
      return
    end
    local view = ui.status_float(status)
    if on_open then
      on_open(view)
    end
    local function refresh_until_ready(latest)
      if view.closed or latest.ready then
        return
      end
      vim.defer_fn(function()
        if view.closed then
          return
        end
        M.status(function(next_status)
          if next_status then
            view:update(next_status)
            refresh_until_ready(next_status)
          end -- the daemon went away: the window keeps its last state
        end)
      end, STATUS_REFRESH_MS)
    end
    refresh_until_ready(status)
  end)
end

return M
