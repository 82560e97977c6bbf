--- What the user sees: the results window (or quickfix list) of :MemoryRecall
--- and the :MemoryStatus window. Pure formatting functions are exported for tests.
local M = {}

local ns = vim.api.nvim_create_namespace('memory_recall')

--- The open :MemoryRecall windows by buffer (for :MemoryExplain on the memory under the cursor).
M.views = {}

--- A short human age, the same words as the daemon's prompt (`3 days ago`).
function M.format_age(mtime_ms, now_ms)
  now_ms = now_ms or (os.time() * 1000)
  local seconds = math.max(0, (now_ms - mtime_ms) / 1000)
  local units = {
    { 365 * 86400, 'year', 'years' },
    { 30 * 86400, 'month', 'months' },
    { 86400, 'day', 'days' },
    { 3600, 'h', 'h' },
    { 60, 'min', 'min' },
  }
  for _, unit in ipairs(units) do
    if seconds >= unit[1] then
      local n = math.floor(seconds / unit[1])
      return ('%d %s ago'):format(n, n == 1 and unit[2] or unit[3])
    end
  end
  return 'just now'
end

local function phase_label(phase)
  local how = phase.phase == 'fast' and 'fast'
    or (phase.strategy == 'model' and 'chosen by the model' or 'lexical')
  return ('%s · %d ms'):format(how, math.floor(phase.elapsedMs + 0.5))
end

--- `scope · type · age` of a memory.
function M.doc_meta(doc, now_ms)
  return ('%s · %s · %s'):format(doc.scope, doc.type, M.format_age(doc.mtimeMs, now_ms))
end

local function nonempty(phase)
  return type(phase) == 'table' and type(phase.docs) == 'table' and #phase.docs > 0
end

--- The results as buffer lines: a header per phase, then per memory its
--- title with scope · type · age, and its description on the next line.
--- Returns lines, docs (line number → memory) and highlights.
function M.result_lines(fast, refined, status_line, now_ms)
  local lines, docs, highlights = {}, {}, {}
  for _, phase in ipairs({ fast or false, refined or false }) do
    if nonempty(phase) then
      table.insert(lines, phase_label(phase))
      table.insert(highlights, { #lines, 'Comment' })
      for _, doc in ipairs(phase.docs) do
        table.insert(lines, ('  %s  (%s)'):format(doc.title, M.doc_meta(doc, now_ms)))
        docs[#lines] = doc
        table.insert(highlights, { #lines, 'Title' })
        local detail = doc.description ~= '' and doc.description or doc.relativePath
        table.insert(lines, '    ' .. detail:gsub('%s+', ' '))
        docs[#lines] = doc
      end
    end
  end
  table.insert(lines, status_line)
  table.insert(highlights, { #lines, 'Comment' })
  return lines, docs, highlights
end

--- The keys of the :MemoryRecall float, shown in its status line.
M.FLOAT_KEYS = '<CR> open · e explain · q close'

--- The status line under the results once the recall is over; `keys` (the
--- view's key hints, e.g. M.FLOAT_KEYS) follows the count when given.
function M.summary(fast, refined, err, keys)
  if err then
    return err == 'cancelled' and 'Cancelled' or ('Recall failed: ' .. err)
  end
  local count = (nonempty(fast) and #fast.docs or 0) + (nonempty(refined) and #refined.docs or 0)
  if count == 0 then
    return 'No relevant memories'
  end
  local failure = ''
  if type(refined) == 'table' and type(refined.failure) == 'string' then
    failure = ' (model not used: ' .. refined.failure .. ')'
  end
  return ('%d %s%s%s'):format(count, count == 1 and 'memory' or 'memories', keys and (' — ' .. keys) or '', failure)
end

local function float_config(title, line_count)
  local width = math.min(100, vim.o.columns - 4)
  local height = math.max(1, math.min(line_count, vim.o.lines - 6))
  return {
    relative = 'editor',
    width = width,
    height = height,
    row = math.floor((vim.o.lines - height) / 2) - 1,
    col = math.floor((vim.o.columns - width) / 2),
    style = 'minimal',
    border = 'rounded',
    title = ' ' .. title .. ' ',
    title_pos = 'center',
  }
end

--- A scratch floating window; `q`/`<Esc>` close it. Returns buf, win.
function M.open_float(title, lines)
  local buf = vim.api.nvim_create_buf(false, true)
  vim.bo[buf].bufhidden = 'wipe'
  vim.bo[buf].filetype = 'memory_recall'
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  local win = vim.api.nvim_open_win(buf, true, float_config(title, #lines))
  vim.wo[win].wrap = false
  vim.wo[win].cursorline = true
  for _, key in ipairs({ 'q', '<Esc>' }) do
    vim.keymap.set('n', key, function()
      if vim.api.nvim_win_is_valid(win) then
        vim.api.nvim_win_close(win, true)
      end
    end, { buffer = buf, nowait = true, desc = 'Close' })
  end
  return buf, win
end

local function set_lines(buf, win, title, lines, highlights)
  if not vim.api.nvim_buf_is_valid(buf) then
    return
  end
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.api.nvim_buf_clear_namespace(buf, ns, 0, -1)
  for _, hl in ipairs(highlights or {}) do
    vim.api.nvim_buf_set_extmark(buf, ns, hl[1] - 1, 0, { line_hl_group = hl[2] })
  end
  if vim.api.nvim_win_is_valid(win) then
    vim.api.nvim_win_set_config(win, float_config(title, #lines))
  end
end

--- Open `path` in the window the user came from.
local function open_memory(path, from_win)
  if from_win and vim.api.nvim_win_is_valid(from_win) then
    vim.api.nvim_set_current_win(from_win)
  end
  vim.cmd.edit(vim.fn.fnameescape(path))
end

--- The :MemoryRecall window. `view:update(fast, refined, status_line)`
--- re-renders; `on_close` runs when the user closes it (to cancel the recall).
function M.results_float(query, on_close)
  local from_win = vim.api.nvim_get_current_win()
  local title = 'Memory: ' .. query
  local buf, win = M.open_float(title, { 'Recalling…' })
  local view = { buf = buf, win = win, docs = {}, keys = M.FLOAT_KEYS, query = query }
  M.views[buf] = view

  --- The memory under the cursor, if any.
  function view.doc_under_cursor()
    if not vim.api.nvim_win_is_valid(win) then
      return nil
    end
    return view.docs[vim.api.nvim_win_get_cursor(win)[1]]
  end

  vim.keymap.set('n', 'e', function()
    vim.cmd('MemoryExplain')
  end, { buffer = buf, nowait = true, desc = 'Explain why this memory was delivered' })

  vim.keymap.set('n', '<CR>', function()
    local doc = view.docs[vim.api.nvim_win_get_cursor(0)[1]]
    if not doc then
      return
    end
    vim.api.nvim_win_close(win, true)
    open_memory(doc.path, from_win)
  end, { buffer = buf, nowait = true, desc = 'Open this memory' })

  vim.api.nvim_create_autocmd('BufWipeout', {
    buffer = buf,
    once = true,
    callback = function()
      view.closed = true
      M.views[buf] = nil
      if on_close then
        on_close()
      end
    end,
  })

  function view.update(_, fast, refined, status_line)
    if view.closed then
      return
    end
    local lines, docs, highlights = M.result_lines(fast, refined, status_line)
    view.docs = docs
    set_lines(buf, win, title, lines, highlights)
    -- Put the cursor on the first memory.
    if vim.api.nvim_win_is_valid(win) and vim.api.nvim_get_current_win() == win then
      for lnum = 1, #lines do
        if docs[lnum] then
          vim.api.nvim_win_set_cursor(win, { lnum, 0 })
          break
        end
      end
    end
  end

  return view
end

--- The quickfix alternative: one entry per memory, replaced when the refined
--- phase arrives. Its keys are quickfix's own (`<CR>` opens, `:cclose`), so the
--- title carries no key hints.
function M.results_quickfix(query)
  local title = 'Memory: ' .. query
  vim.fn.setqflist({}, ' ', { title = title, items = {} })
  local view = {}
  function view.update(_, fast, refined, status_line)
    local items = {}
    for _, phase in ipairs({ fast or false, refined or false }) do
      if nonempty(phase) then
        for _, doc in ipairs(phase.docs) do
          table.insert(items, {
            filename = doc.path,
            lnum = 1,
            text = ('%s — %s — %s'):format(doc.title, M.doc_meta(doc), doc.description),
          })
        end
      end
    end
    vim.fn.setqflist({}, 'r', { title = title .. ' — ' .. status_line, items = items })
    if #items > 0 then
      vim.cmd('botright copen')
    end
  end
  return view
end

--- The :MemoryStatus float. `view:update(status)` re-renders it (the daemon
--- may still be indexing); `view.closed` is set once the user closed it.
function M.status_float(status)
  local title = 'Memory Status'
  local lines = M.status_lines(status)
  local buf, win = M.open_float(title, lines)
  local view = { buf = buf, win = win }
  vim.api.nvim_create_autocmd('BufWipeout', {
    buffer = buf,
    once = true,
    callback = function()
      view.closed = true
    end,
  })
  function view.update(_, new_status)
    if not view.closed then
      set_lines(buf, win, title, M.status_lines(new_status))
    end
  end
  return view
end

--- :MemoryStatus lines.
function M.status_lines(status)
  local lines = {
    ('protocol v%d%s'):format(status.protocolVersion, status.ready and '' or ' (indexing…)'),
    ('%d %s, index built in %s'):format(
      status.documents,
      status.documents == 1 and 'memory' or 'memories',
      type(status.indexBuildMs) == 'number' and (math.floor(status.indexBuildMs + 0.5) .. ' ms') or '—'
    ),
    ('watcher: %s%s'):format(
      status.watcher.state,
      type(status.watcher.detail) == 'string' and (' (' .. status.watcher.detail .. ')') or ''
    ),
    ('selector: %s, ranker: %s'):format(status.selector, status.ranker),
    '',
    'Roots:',
  }
  for _, root in ipairs(status.roots) do
    table.insert(
      lines,
      ('  %-7s %5d  %s%s'):format(root.scope, root.documents, root.path, root.exists and '' or '  (missing)')
    )
  end
  if #status.skipped > 0 then
    table.insert(lines, '')
    table.insert(lines, ('Skipped files (%d):'):format(#status.skipped))
    for _, skipped in ipairs(status.skipped) do
      table.insert(lines, ('  %s: %s'):format(skipped.path, skipped.reason))
    end
  end
  local r = status.recall or {}
  table.insert(lines, '')
  table.insert(
    lines,
    ('Recalls: %d (%d completed, %d cancelled, %d failed), selector failures: %d'):format(
      r.recalls or 0,
      r.completed or 0,
      r.cancelled or 0,
      r.failed or 0,
      r.selectorFailures or 0
    )
  )
  if type(status.sync) == 'table' and #status.sync > 0 then
    table.insert(lines, '')
    table.insert(lines, 'Sync (git):')
    for _, s in ipairs(status.sync) do
      table.insert(
        lines,
        ('  %s → %s (%s): %s, %s'):format(
          s.path,
          type(s.remote) == 'string' and s.remote or '(no remote)',
          s.branch,
          s.auto and 'automatic' or 'manual',
          s.state
        )
      )
      local err = (type(s.lastError) == 'string' and s.state ~= 'idle') and ('; last error: ' .. s.lastError) or ''
      table.insert(lines, ('    %d ahead, %d behind, %d to commit%s'):format(s.ahead, s.behind, s.pending, err))
      for _, held in ipairs(s.held or {}) do
        table.insert(lines, ('    stays here: %s (%s)'):format(held.path, held.reason))
      end
    end
  end
  return lines
end

return M
