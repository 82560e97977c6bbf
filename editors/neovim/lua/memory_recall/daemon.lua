--- The daemon connection: one vim.lsp client (not attached to any buffer),
--- recalls routed by their client-chosen token, `memory/select` answered by a
--- user hook. Knows nothing about windows; see ui.lua for that.
local M = {}

M.methods = {
  recall = 'memory/recall',
  status = 'memory/status',
  fast_result = 'memory/fastResult',
  refined_result = 'memory/refinedResult',
  telemetry = 'telemetry/event',
  select = 'memory/select',
  complete = 'memory/complete',
  -- protocol v2: the write side, extraction, organisation
  remember = 'memory/remember',
  update = 'memory/update',
  forget = 'memory/forget',
  restore = 'memory/restore',
  undo = 'memory/undo',
  history = 'memory/history',
  list = 'memory/list',
  extract = 'memory/extract',
  tree = 'memory/tree',
  context = 'memory/context',
  consolidate = 'memory/consolidate',
  -- protocol v2: reflection and retrieval (docs/network.md)
  feedback = 'memory/feedback',
  explain = 'memory/explain',
  search = 'memory/search',
  observe = 'memory/observe',
  suggestion = 'memory/suggestion',
}

--- LSP error codes the plugin sends.
M.errors = { request_failed = -32803 }

--- The host's budget before it must build the first prompt of a turn.
M.DEFAULT_INITIAL_WAIT_MS = 100

local CLIENT_NAME = 'memory_recall'
local has_011 = vim.fn.has('nvim-0.11') == 1

-- Client methods are called with `:` from 0.11 on and with `.` before.
local function call(client, method, ...)
  if has_011 then
    return client[method](client, ...)
  end
  return client[method](...)
end

local state = {
  config = nil, ---@type table?
  client_id = nil, ---@type integer?
  initialized = false,
  waiting = {}, ---@type fun(client: vim.lsp.Client?, err: string?)[]
  sessions = {}, ---@type table<string, table>
  counter = 0,
  phase_listeners = {}, ---@type fun(note: table)[]
  telemetry_listeners = {}, ---@type fun(event: table)[]
  suggestion_listeners = {}, ---@type fun(note: table)[]
}

local function notify_listeners(listeners, value)
  for _, listener in ipairs(listeners) do
    pcall(listener, value)
  end
end

local function on_phase(_, note)
  if type(note) ~= 'table' then
    return
  end
  notify_listeners(state.phase_listeners, note)
  local session = note.token and state.sessions[note.token]
  if session then
    session:phase(note)
  end
end

--- Answer a server request (`memory/select`, `memory/complete`) with a user
--- hook `fn(params, respond)`, or decline so the daemon falls back.
--- Runs inside the coroutine vim.lsp gives server requests, so an
--- asynchronous hook can answer later. It must never return nil, nil.
--- `check(result)` returns the answer to send, or nil and why it is unusable.
local function answer_with_hook(hook, what, params, check)
  local function decline(reason)
    return nil, vim.lsp.rpc_response_error(M.errors.request_failed, reason)
  end
  if type(hook) ~= 'function' then
    return decline(('no %s hook configured in Neovim'):format(what))
  end
  local co, is_main = coroutine.running()
  local answered, result, reason = false, nil, nil
  local function respond(value, err)
    if answered then
      return
    end
    answered, result, reason = true, value, err
    if co and not is_main and coroutine.status(co) == 'suspended' then
      vim.schedule(function()
        coroutine.resume(co)
      end)
    end
  end
  local ok, returned = pcall(hook, params, respond)
  if not ok then
    return decline(('%s hook failed: %s'):format(what, tostring(returned)))
  end
  if returned ~= nil then -- a synchronous hook may just return its answer
    respond(returned)
  end
  if not answered then
    if not co or is_main then
      return decline(('%s hook did not answer synchronously'):format(what))
    end
    coroutine.yield()
  end
  if reason then
    return decline(tostring(reason))
  end
  local answer, problem = check(result)
  if answer == nil then
    return decline(problem)
  end
  return answer
end

--- `memory/select`: the user's hook chooses, or we decline so the daemon falls back.
local function on_select(_, params)
  return answer_with_hook(state.config and state.config.select, 'memory/select', params, function(result)
    if type(result) ~= 'table' or type(result.selected) ~= 'table' then
      return nil, 'select hook returned no {selected = {path, ...}}'
    end
    return { selected = result.selected }
  end)
end

--- `memory/complete` (protocol v2): the user's model answers a judgement task
--- (extraction); `respond({ content = text })`, a plain string, or decline.
local function on_complete(_, params)
  return answer_with_hook(state.config and state.config.complete, 'memory/complete', params, function(result)
    if type(result) == 'string' then
      return { content = result }
    end
    if type(result) ~= 'table' or type(result.content) ~= 'string' then
      return nil, 'complete hook returned no {content = text}'
    end
    return { content = result.content }
  end)
end

local function on_telemetry(_, event)
  if type(event) == 'table' and event.event == 'memory/recall' then
    notify_listeners(state.telemetry_listeners, event)
  end
end

local function on_suggestion(_, note)
  if type(note) == 'table' then
    notify_listeners(state.suggestion_listeners, note)
  end
end

--- Called with every `memory/suggestion` ({ trigger, docs, prompt }).
function M.on_suggestion(listener)
  table.insert(state.suggestion_listeners, listener)
end

--- Called with every phase notification (whichever recall it belongs to).
function M.on_phase(listener)
  table.insert(state.phase_listeners, listener)
end

--- Called with the terminal `telemetry/event` of every recall.
function M.on_telemetry(listener)
  table.insert(state.telemetry_listeners, listener)
end

local function flush_waiting(client, err)
  local waiting = state.waiting
  state.waiting = {}
  for _, fn in ipairs(waiting) do
    fn(client, err)
  end
end

--- The vim.lsp client config for `config` (see init.lua for the options).
function M.client_config(config)
  return {
    name = CLIENT_NAME,
    cmd = config.cmd,
    cmd_env = config.cmd_env,
    root_dir = config.root_dir,
    init_options = config.init_options,
    handlers = {
      [M.methods.fast_result] = on_phase,
      [M.methods.refined_result] = on_phase,
      [M.methods.select] = on_select,
      [M.methods.complete] = on_complete,
      [M.methods.telemetry] = on_telemetry,
      [M.methods.suggestion] = on_suggestion,
    },
    on_init = function(client)
      state.initialized = true
      flush_waiting(client)
    end,
    on_exit = vim.schedule_wrap(function(code, signal, client_id)
      if state.client_id ~= client_id then
        return
      end
      state.client_id, state.initialized = nil, false
      for _, session in pairs(state.sessions) do
        session:fail(('memory-recall daemon exited (code %s, signal %s)'):format(code, signal))
      end
      flush_waiting(nil, 'memory-recall daemon exited before it was ready')
    end),
  }
end

--- Start the daemon for `config` unless it is running. Returns the client id.
function M.start(config)
  state.config = config
  local client = state.client_id and vim.lsp.get_client_by_id(state.client_id)
  if client and not call(client, 'is_stopped') then
    return state.client_id
  end
  if vim.fn.executable(config.cmd[1]) ~= 1 then
    return nil,
      ('memory-recall: %q is not executable: install the daemon from the repository (pip install . in a clone) or set `cmd` in setup()'):format(
        config.cmd[1]
      )
  end
  local client_config = M.client_config(config)
  local id
  if has_011 then
    id = vim.lsp.start(client_config, { attach = false, reuse_client = function() return false end })
  else
    id = vim.lsp.start_client(client_config)
  end
  if not id then
    return nil, 'memory-recall: the daemon did not start (see :LspLog)'
  end
  state.client_id, state.initialized = id, false
  return id
end

--- Stop the daemon (shutdown + exit); pending recalls end with an error.
function M.stop()
  local client = state.client_id and vim.lsp.get_client_by_id(state.client_id)
  state.client_id, state.initialized = nil, false
  for _, session in pairs(state.sessions) do
    session:cancel()
  end
  if client then
    call(client, 'stop')
  end
end

--- The running client, if any.
function M.client()
  return state.client_id and vim.lsp.get_client_by_id(state.client_id) or nil
end

--- Run `fn(client, err)` once the daemon has answered `initialize`.
function M.with_client(config, fn)
  local id, err = M.start(config)
  if not id then
    return fn(nil, err)
  end
  if state.initialized then
    return fn(vim.lsp.get_client_by_id(id))
  end
  table.insert(state.waiting, fn)
end

-- A recall in flight ---------------------------------------------------------

local Session = {}
Session.__index = Session

function Session:deliver_initial(phase, err)
  if self.initial_done then
    return
  end
  self.initial_done = true
  if self.timer then
    self.timer:stop()
    self.timer:close()
    self.timer = nil
  end
  if self.on_initial then
    local ok, msg = pcall(self.on_initial, phase, err)
    if not ok then
      vim.notify('memory-recall: on_initial failed: ' .. tostring(msg), vim.log.levels.ERROR)
    end
  end
end

function Session:deliver_refined(phase, err)
  if self.refined_done then
    return
  end
  self.refined_done = true
  state.sessions[self.token] = nil
  self:deliver_initial(phase, err)
  if self.on_refined then
    local ok, msg = pcall(self.on_refined, phase, err)
    if not ok then
      vim.notify('memory-recall: on_refined failed: ' .. tostring(msg), vim.log.levels.ERROR)
    end
  end
end

function Session:phase(note)
  if note.phase == 'fast' then
    self.fast = note
    self:deliver_initial(note)
  else
    self:deliver_refined(note)
  end
end

function Session:fail(err)
  self:deliver_refined(nil, err)
end

--- Cancel: the daemon answers -32800 and sends nothing more; both callbacks
--- get (nil, 'cancelled') if they have not run yet.
function Session:cancel()
  if self.refined_done then
    return
  end
  state.sessions[self.token] = nil
  local client = M.client()
  if client and self.request_id then
    call(client, 'cancel_request', self.request_id)
  end
  self:deliver_refined(nil, 'cancelled')
end

--- Start a recall. `opts`: recent_tools, exclude_paths, limit, initial_wait_ms.
--- `on_initial(phase|nil, err)` runs once with the first of the fast result,
--- the refined result and the initial wait (nil); `on_refined(phase|nil, err)`
--- runs once with the refined phase. Returns a handle with `cancel()` and `token`.
function M.recall(config, query, opts, on_initial, on_refined)
  opts = opts or {}
  state.counter = state.counter + 1
  local token = ('nvim-%d-%d'):format(vim.fn.getpid(), state.counter)
  local session = setmetatable({
    token = token,
    on_initial = on_initial,
    on_refined = on_refined,
  }, Session)
  state.sessions[token] = session

  local wait_ms = opts.initial_wait_ms or config.initial_wait_ms or M.DEFAULT_INITIAL_WAIT_MS
  session.timer = vim.uv.new_timer()
  session.timer:start(wait_ms, 0, vim.schedule_wrap(function()
    session:deliver_initial(nil)
  end))

  local params = { query = query, token = token }
  if opts.recent_tools and #opts.recent_tools > 0 then
    params.recentTools = opts.recent_tools
  end
  if opts.exclude_paths and #opts.exclude_paths > 0 then
    params.excludePaths = opts.exclude_paths
  end
  params.limit = opts.limit

  M.with_client(config, function(client, err)
    if not client then
      return session:fail(err)
    end
    if session.refined_done then
      return -- cancelled while the daemon was starting
    end
    local ok, request_id = call(client, 'request', M.methods.recall, params, function(rpc_err, result)
      if rpc_err then
        return session:fail(rpc_err.message or tostring(rpc_err))
      end
      -- The refined notification precedes the response; this covers a lost one.
      if result and result.refined ~= nil and result.refined ~= vim.NIL then
        local refined = vim.tbl_extend('force', result.refined, { requestId = result.requestId, token = token })
        session:deliver_refined(refined)
      else
        session:deliver_refined(nil, 'the daemon answered without a refined phase')
      end
    end)
    if not ok then
      return session:fail('memory-recall: the daemon is not running')
    end
    session.request_id = request_id
  end)

  return {
    token = token,
    cancel = function()
      session:cancel()
    end,
  }
end

--- Send `method` with `params` once the daemon is up; `callback(result|nil,
--- err, code)`: err is the daemon's message (code its JSON-RPC error code).
function M.request(config, method, params, callback)
  M.with_client(config, function(client, err)
    if not client then
      return callback(nil, err)
    end
    local ok = call(client, 'request', method, params or vim.empty_dict(), function(rpc_err, result)
      if rpc_err then
        return callback(nil, rpc_err.message or tostring(rpc_err), rpc_err.code)
      end
      callback(result)
    end)
    if not ok then
      callback(nil, 'memory-recall: the daemon is not running')
    end
  end)
end

--- Send a notification (no answer); `callback(ok, err)` once it is written.
function M.notify(config, method, params, callback)
  M.with_client(config, function(client, err)
    if not client then
      return callback and callback(false, err)
    end
    local ok = call(client, 'notify', method, params or vim.empty_dict())
    if callback then
      callback(ok, not ok and 'memory-recall: the daemon is not running' or nil)
    end
  end)
end

--- `memory/status`; `callback(status|nil, err)`.
function M.status(config, callback)
  M.request(config, M.methods.status, vim.empty_dict(), callback)
end

return M
