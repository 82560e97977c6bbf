--- The write-side commands (protocol v2): :MemoryRemember, :MemoryForget,
--- :MemoryUndo, :MemoryConsolidate[!], :MemoryTree. They talk to the daemon
--- through the Lua API of init.lua and show what happened; the pure formatting
--- functions are exported for tests.
local ui = require('memory_recall.ui')

local M = {}

local function memory()
  return require('memory_recall')
end

local function notify(message, level)
  vim.notify('memory-recall: ' .. message, level or vim.log.levels.INFO)
end

local function fail(err)
  notify(tostring(err), vim.log.levels.ERROR)
end

--- A path as the user reads it: relative to the cwd, or under ~.
local function short(path)
  return vim.fn.fnamemodify(path, ':~:.')
end

--- Lines saying what a write result did: one per operation, one per skipped
--- item (its gate rule and message), one per MEMORY.md problem or overflow.
function M.write_lines(result)
  local lines = {}
  for _, op in ipairs(result.operations or {}) do
    local line = ('%s: %s (%s)'):format(op.action, op.title, short(op.path))
    if type(op.reason) == 'string' and op.reason ~= '' then
      line = line .. ' — ' .. op.reason
    end
    table.insert(lines, line)
  end
  for _, item in ipairs(result.skipped or {}) do
    table.insert(lines, ('not written (%s): %s'):format(item.reason, item.message))
  end
  for _, index in ipairs(result.indexes or {}) do
    if type(index.problem) == 'string' then
      table.insert(lines, ('%s not rewritten: %s'):format(short(index.path), index.problem))
    elseif (index.omittedCount or 0) > 0 then
      table.insert(
        lines,
        ('%s is full (%d lines): %d memories have no line'):format(short(index.path), index.cap, index.omittedCount)
      )
    end
  end
  if #lines == 0 then
    table.insert(lines, 'nothing changed')
  end
  return lines
end

--- The operation ids of a result, in order, each once.
function M.operation_ids(result)
  local ids, seen = {}, {}
  for _, op in ipairs(result.operations or {}) do
    if not seen[op.operation] then
      seen[op.operation] = true
      table.insert(ids, op.operation)
    end
  end
  return ids
end

local function report_write(result, undo_hint)
  local lines = M.write_lines(result)
  local level = vim.log.levels.INFO
  if #(result.operations or {}) == 0 then
    level = vim.log.levels.WARN
  elseif undo_hint then
    table.insert(lines, ':MemoryUndo takes it back')
  end
  notify(table.concat(lines, '\n'), level)
end

-- :MemoryRemember ------------------------------------------------------------------

--- `++team rest` → 'team', 'rest': the scope a :MemoryRemember argument names first.
function M.split_scope(args)
  local scope, rest = (args or ''):match('^%s*%+%+(%a+)%s*(.*)$')
  if scope == 'project' or scope == 'team' or scope == 'user' then
    return scope, rest
  end
  return nil, args or ''
end

--- Remember `text` (opts: scope, type, force, …); a memory the gate refuses as
--- an instruction to the agent is written only when the user confirms.
--- `on_done(result|nil, err)` runs at the end (for tests).
function M.remember(text, opts, on_done)
  on_done = on_done or function() end
  text = vim.trim(text or '')
  if text == '' then
    vim.ui.input({ prompt = 'Remember: ' }, function(input)
      if input and vim.trim(input) ~= '' then
        M.remember(input, opts, on_done)
      else
        on_done(nil, 'nothing to remember')
      end
    end)
    return
  end
  local params = vim.tbl_extend('force', opts or {}, { text = text })
  memory().remember(params, function(result, err)
    if not result then
      fail(err)
      return on_done(nil, err)
    end
    local injection = #result.operations == 0
      and vim.iter(result.skipped):any(function(item)
        return item.reason == 'injection'
      end)
    if injection and not params.force then
      local message = result.skipped[1].message
      vim.ui.select({ 'Write it anyway', 'Do not write it' }, {
        prompt = message .. ' ',
      }, function(choice)
        if choice == 'Write it anyway' then
          M.remember(text, vim.tbl_extend('force', opts or {}, { force = true }), on_done)
        else
          report_write(result)
          on_done(result)
        end
      end)
      return
    end
    report_write(result, true)
    on_done(result)
  end)
end

-- :MemoryForget ------------------------------------------------------------------------

--- The picker label of a listed memory: title, scope, path inside its root.
function M.memory_label(listed)
  local marks = {}
  if listed.pinned then
    table.insert(marks, 'pinned')
  end
  if listed.always then
    table.insert(marks, 'always')
  end
  return ('%s  [%s%s]  %s'):format(
    listed.title,
    listed.scope,
    #marks > 0 and (', ' .. table.concat(marks, ', ')) or '',
    listed.relativePath
  )
end

local function forget_path(path, hard, on_done)
  memory().forget({ path = path, hard = hard or nil }, function(result, err)
    if not result then
      fail(err)
      return on_done(nil, err)
    end
    report_write(result, not hard)
    on_done(result)
  end)
end

--- Forget `path`, or (no path) the memory picked from memory/list with
--- vim.ui.select. `hard` deletes after a confirmation (it cannot be undone).
function M.forget(path, hard, on_done)
  on_done = on_done or function() end
  local function go(chosen)
    if not hard then
      return forget_path(chosen, false, on_done)
    end
    vim.ui.select({ 'Delete it for good', 'Keep it' }, {
      prompt = ('Delete %s and its history? This cannot be undone. '):format(short(chosen)),
    }, function(choice)
      if choice == 'Delete it for good' then
        forget_path(chosen, true, on_done)
      else
        on_done(nil, 'kept')
      end
    end)
  end
  path = vim.trim(path or '')
  if path ~= '' then
    return go(vim.fn.fnamemodify(path, ':p'))
  end
  memory().list({}, function(result, err)
    if not result then
      fail(err)
      return on_done(nil, err)
    end
    if #result.memories == 0 then
      notify('no memories to forget', vim.log.levels.WARN)
      return on_done(nil, 'no memories')
    end
    vim.ui.select(result.memories, {
      prompt = hard and 'Delete which memory? ' or 'Forget which memory? ',
      format_item = M.memory_label,
      kind = 'memory_recall.memory',
    }, function(choice)
      if not choice then
        return on_done(nil, 'nothing chosen')
      end
      go(choice.path)
    end)
  end)
end

-- :MemoryUndo ---------------------------------------------------------------------------

--- Undo `operation`, or the last write made from this Neovim.
function M.undo(operation, on_done)
  on_done = on_done or function() end
  operation = vim.trim(operation or '')
  memory().undo(operation ~= '' and operation or nil, function(result, err)
    if not result then
      fail(err)
      return on_done(nil, err)
    end
    report_write(result)
    on_done(result)
  end)
end

-- :MemoryConsolidate[!] -------------------------------------------------------------------

local function rel(report, path)
  local root = report.root:gsub('/$', '') .. '/'
  if path:sub(1, #root) == root then
    return path:sub(#root + 1)
  end
  return short(path)
end

--- The report of memory/consolidate as lines, one block per root.
function M.consolidate_lines(result)
  local lines = {}
  local verb = result.dryRun and 'would ' or ''
  if result.dryRun then
    table.insert(lines, 'Dry run: nothing was changed. :MemoryConsolidate! carries it out.')
  end
  for _, report in ipairs(result.reports or {}) do
    if #lines > 0 then
      table.insert(lines, '')
    end
    table.insert(
      lines,
      ('%s root %s: %d → %d memories (capacity %d, %d pairs judged)'):format(
        report.scope,
        short(report.root),
        report.before,
        report.after,
        report.capacity,
        report.pairsJudged
      )
    )
    if type(report.operation) == 'string' then
      table.insert(lines, '  operation ' .. report.operation .. ' (:MemoryUndo takes it back)')
    end
    for _, merge in ipairs(report.merges) do
      local from = vim.tbl_map(function(p)
        return rel(report, p)
      end, merge.mergedFrom)
      table.insert(
        lines,
        ('  %smerge %s into %s (+%d lines)'):format(verb, table.concat(from, ', '), rel(report, merge.into), merge.addedLines)
      )
    end
    for _, sup in ipairs(report.supersessions) do
      table.insert(
        lines,
        ('  %s%s supersede %s'):format(
          result.dryRun and 'would have ' or '',
          rel(report, sup.path),
          table.concat(sup.supersedes, ', ')
        )
      )
    end
    for _, archived in ipairs(report.archived) do
      table.insert(lines, ('  %sarchive %s (%s): %s'):format(verb, rel(report, archived.path), archived.cause, archived.reason))
    end
    for _, notice in ipairs(report.notices) do
      table.insert(lines, ('  %s: %s — %s'):format(notice.kind, rel(report, notice.path), notice.reason))
    end
    if #report.merges + #report.supersessions + #report.archived + #report.notices == 0 then
      table.insert(lines, '  nothing to do')
    end
  end
  if #(result.reports or {}) == 0 then
    table.insert(lines, 'no writable root in scope')
  end
  for _, item in ipairs(result.skipped or {}) do
    table.insert(lines, ('not written (%s): %s'):format(item.reason, item.message))
  end
  return lines
end

--- Consolidate (`run` = true) or show the dry-run plan, in a scratch window.
--- `on_done(view|nil, result|nil, err)` runs at the end (for tests).
function M.consolidate(run, scope, on_done)
  on_done = on_done or function() end
  scope = vim.trim(scope or '')
  local opts = { dry_run = not run, scope = scope ~= '' and scope or nil }
  memory().consolidate(opts, function(result, err)
    if not result then
      fail(err)
      return on_done(nil, nil, err)
    end
    local title = run and 'Memory consolidation' or 'Memory consolidation (dry run)'
    local buf, win = ui.open_float(title, M.consolidate_lines(result))
    on_done({ buf = buf, win = win }, result)
  end)
end

-- :MemoryTree ----------------------------------------------------------------------------

--- The topic tree as lines: categories, subcategories (with counts), members
--- under them. Returns lines and members (line number → tree member).
function M.tree_lines(tree)
  local lines, members = {}, {}
  table.insert(lines, ('%d memories'):format(tree.total))
  local function add(node, depth)
    local indent = string.rep('  ', depth)
    if node.count == 0 and depth > 0 then
      return -- empty subcategories stay out of the way; empty categories show as 0
    end
    table.insert(lines, ('%s%s (%d)'):format(indent, node.label, node.count))
    for _, member in ipairs(node.members) do
      table.insert(lines, ('%s  • %s  [%s] %s'):format(indent, member.title, member.scope, member.relativePath))
      members[#lines] = member
    end
    for _, child in ipairs(node.children or {}) do
      add(child, depth + 1)
    end
  end
  for _, category in ipairs(tree.categories) do
    add(category, 0)
  end
  return lines, members
end

--- Every member of the tree, in tree order, with its category label.
function M.tree_members(tree)
  local out = {}
  local function walk(node, labels)
    local here = vim.list_extend(vim.list_extend({}, labels), { node.label })
    for _, member in ipairs(node.members) do
      table.insert(out, vim.tbl_extend('force', member, { category = table.concat(here, ' / ') }))
    end
    for _, child in ipairs(node.children or {}) do
      walk(child, here)
    end
  end
  for _, category in ipairs(tree.categories) do
    walk(category, {})
  end
  return out
end

M.TREE_KEYS = '<CR> open · dd forget · q close'

local function open_in(path, from_win)
  if from_win and vim.api.nvim_win_is_valid(from_win) then
    vim.api.nvim_set_current_win(from_win)
  end
  vim.cmd.edit(vim.fn.fnameescape(path))
end

--- :MemoryTree: the topic tree in a scratch window (`picker` = true:
--- a vim.ui.select of its memories instead). `<CR>` opens the memory under
--- the cursor, `dd` forgets it. `on_done(view|nil, tree|nil, err)` for tests.
function M.tree(scope, picker, on_done)
  on_done = on_done or function() end
  scope = vim.trim(scope or '')
  local from_win = vim.api.nvim_get_current_win()
  memory().tree({ scope = scope ~= '' and scope or nil }, function(tree, err)
    if not tree then
      fail(err)
      return on_done(nil, nil, err)
    end
    if picker then
      local items = M.tree_members(tree)
      vim.ui.select(items, {
        prompt = 'Open which memory? ',
        kind = 'memory_recall.memory',
        format_item = function(member)
          return ('%s  [%s]  %s'):format(member.title, member.scope, member.category)
        end,
      }, function(choice)
        if choice then
          open_in(choice.path, from_win)
        end
        on_done(nil, tree)
      end)
      return
    end
    local lines, members = M.tree_lines(tree)
    table.insert(lines, M.TREE_KEYS)
    local title = scope ~= '' and ('Memory tree: ' .. scope) or 'Memory tree'
    local buf, win = ui.open_float(title, lines)
    local view = { buf = buf, win = win, members = members }
    local function under_cursor()
      return members[vim.api.nvim_win_get_cursor(0)[1]]
    end
    vim.keymap.set('n', '<CR>', function()
      local member = under_cursor()
      if member then
        vim.api.nvim_win_close(win, true)
        open_in(member.path, from_win)
      end
    end, { buffer = buf, nowait = true, desc = 'Open this memory' })
    vim.keymap.set('n', 'dd', function()
      local member = under_cursor()
      if member then
        vim.api.nvim_win_close(win, true)
        M.forget(member.path, false, view.on_forget)
      end
    end, { buffer = buf, nowait = true, desc = 'Forget this memory' })
    on_done(view, tree)
  end)
end

-- :MemoryExplain ----------------------------------------------------------------------------

local function number(value)
  if type(value) ~= 'number' then
    return '—'
  end
  return (('%.2f'):format(value):gsub('%.?0+$', ''))
end

--- A memory/explain result as lines: the summary, the rank and score parts,
--- silence, the network path, staleness and each phase.
function M.explain_lines(result)
  local lines = {}
  local name = result.relativePath ~= vim.NIL and result.relativePath or result.path
  table.insert(lines, ('%s (%s)'):format(result.title ~= vim.NIL and result.title or '?', name))
  table.insert(lines, result.summary)
  if not result.found then
    return lines
  end
  table.insert(lines, '')
  table.insert(
    lines,
    ('query %q · ranker %s · terms: %s'):format(result.query, result.ranker, table.concat(result.tokens, ', '))
  )
  if type(result.rank) == 'number' then
    table.insert(lines, ('rank %d of %d · score %s'):format(result.rank, result.ranked, number(result.score)))
  else
    table.insert(lines, ('not ranked (%d memories ranked)'):format(result.ranked))
  end
  for _, part in ipairs(result.parts or {}) do
    local term = type(part.term) == 'string' and part.term or ''
    local detail = type(part.detail) == 'string' and ('  ' .. part.detail) or ''
    table.insert(lines, ('  %-12s %-16s %8s%s'):format(part.field, term, number(part.value), detail))
  end
  local silence = result.silence
  if type(silence) == 'table' then
    table.insert(
      lines,
      ('silence: covers %s of the query (threshold %s)%s'):format(
        number(silence.coverage),
        number(silence.threshold),
        silence.silenced and ': silenced' or ''
      )
    )
  end
  if type(result.network) == 'table' then
    table.insert(lines, ('network: %s (activation %s)'):format(result.network.describe, number(result.network.activation)))
  end
  if type(result.stale) == 'table' then
    table.insert(lines, 'stale: ' .. tostring(result.stale.reason))
  end
  if result.noise then
    table.insert(lines, 'dropped as noise: it only documents a tool in recent use')
  end
  if result.excluded then
    table.insert(lines, 'excluded: already in the conversation (excludePaths)')
  end
  table.insert(lines, ('model candidate: %s'):format(result.candidate and 'yes' or 'no'))
  for _, phase in ipairs(result.phases or {}) do
    local where = type(phase.rank) == 'number' and (' #' .. phase.rank) or ''
    table.insert(
      lines,
      ('%s phase: %s%s — %s'):format(phase.phase, phase.delivered and 'delivered' or 'not delivered', where, phase.reason)
    )
  end
  return lines
end

--- What :MemoryExplain explains: the memory under the cursor of a :MemoryRecall
--- window (with that recall), else the current file when a recall delivered it.
--- `query` (the command's argument) asks "why for this query" instead.
local function explain_target(query)
  local view = ui.views[vim.api.nvim_get_current_buf()]
  if view then
    local doc = view.doc_under_cursor()
    if not doc then
      return nil, 'put the cursor on a memory of the window'
    end
    if query ~= '' then
      return { path = doc.path, query = query }
    end
    return { path = doc.path, token = view.token }
  end
  local path = vim.api.nvim_buf_get_name(0)
  if path == '' then
    return nil, 'open a memory, or use it in the :MemoryRecall window'
  end
  if query ~= '' then
    return { path = path, query = query }
  end
  local seen = memory().delivered(path)
  if not seen then
    return nil, ('no recall delivered %s in this session: give a query, :MemoryExplain {query}'):format(short(path))
  end
  return { path = path, token = seen.token }
end

--- :MemoryExplain [query]: why the memory was (or was not) delivered, in a window.
--- `on_done(view|nil, result|nil, err)` for tests.
function M.explain(query, on_done)
  on_done = on_done or function() end
  local params, problem = explain_target(vim.trim(query or ''))
  if not params then
    fail(problem)
    return on_done(nil, nil, problem)
  end
  memory().explain(params, function(result, err)
    if not result then
      fail(err)
      return on_done(nil, nil, err)
    end
    local buf, win = ui.open_float('Why this memory', M.explain_lines(result))
    on_done({ buf = buf, win = win }, result)
  end)
end

return M
