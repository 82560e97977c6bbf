--- :checkhealth memory_recall
local M = {}

function M.check()
  vim.health.start('memory_recall')
  if vim.fn.has('nvim-0.10') == 1 then
    vim.health.ok('Neovim ' .. tostring(vim.version()))
  else
    vim.health.error('Neovim 0.10 or later is required')
  end

  local config = require('memory_recall').config()
  local exe = config.cmd[1]
  if vim.fn.executable(exe) == 1 then
    vim.health.ok(('daemon command: %s'):format(table.concat(config.cmd, ' ')))
  else
    vim.health.error(
      ('%q is not executable'):format(exe),
      {
        'It is not on PyPI: install it from the repository (`python3 -m pip install --user .` in a clone)',
        'or set `cmd` in setup() to its full path',
      }
    )
    return
  end

  local client = require('memory_recall.daemon').client()
  if not client then
    vim.health.info('the daemon is not running (it starts on setup() or on the first :MemoryRecall)')
    return
  end
  local done, status, err = false, nil, nil
  require('memory_recall').status(function(s, e)
    done, status, err = true, s, e
  end)
  vim.wait(2000, function()
    return done
  end, 10)
  if not status then
    vim.health.error('memory/status failed: ' .. tostring(err or 'no answer in 2 s'))
    return
  end
  vim.health.ok(('%d memories, watcher %s, selector %s'):format(status.documents, status.watcher.state, status.selector))
  for _, root in ipairs(status.roots) do
    local line = ('%s root %s: %d memories'):format(root.scope, root.path, root.documents)
    if root.exists then
      vim.health.ok(line)
    else
      vim.health.warn(line .. ' (missing)', { 'Create it, or set `roots` in setup()' })
    end
  end
  for _, skipped in ipairs(status.skipped) do
    vim.health.warn(('skipped %s: %s'):format(skipped.path, skipped.reason))
  end
  for _, fault in ipairs(status.faults or {}) do
    vim.health.warn(fault)
  end
  M.report_store(status)
  M.report_model(status, config)
end

--- The memory network and what feedback taught it (protocol v2, docs/network.md).
function M.report_network(status)
  local net = status.network
  if type(net) == 'table' then
    vim.health.info(
      ('memory network: %d memories, %d edges, %d co-use pairs%s'):format(
        net.memories,
        net.edges,
        net.coUsePairs,
        net.loadedFromState and ' (co-use links loaded from the state store)' or ''
      )
    )
  end
  if type(status.usage) == 'table' then
    local used, delivered = 0, 0
    for _, row in ipairs(status.usage) do
      used, delivered = used + row.used, delivered + row.delivered
    end
    vim.health.info(('feedback: %d of %d deliveries reported used (memory_recall.feedback())'):format(used, delivered))
  end
  if type(status.stale) == 'table' and #status.stale > 0 then
    vim.health.warn(('%d memories may be outdated, e.g. %s: %s'):format(#status.stale, status.stale[1].path, status.stale[1].reason))
  end
end

--- The state store (journal, statistics) and each root's MEMORY.md.
function M.report_store(status)
  vim.health.start('memory_recall: state store')
  local write = status.write
  if type(write) ~= 'table' then
    vim.health.warn('the daemon reports no write side (protocol v1): remember/forget/undo are not served', {
      'Install a daemon of protocol v2 or later',
    })
    return
  end
  if type(write.statePath) == 'string' then
    vim.health.ok(('state store %s (schema %s)'):format(write.statePath, tostring(write.schemaVersion)))
  else
    vim.health.warn('the state store is off: recall works, writes (remember, forget, undo, consolidate) are refused', {
      'Unset MEMORY_RECALL_STATE_DIR=off, or point it at a writable folder',
    })
  end
  if type(write.stateProblem) == 'string' then
    vim.health.error('state store problem: ' .. write.stateProblem)
  end
  for _, index in ipairs(write.indexes or {}) do
    local line = ('%s: %d of %d lines'):format(index.path, index.lines, index.cap)
    if type(index.problem) == 'string' then
      vim.health.error(line .. ': ' .. index.problem)
    elseif (index.omittedCount or 0) > 0 then
      vim.health.warn(('%s; %d memories have no line'):format(line, index.omittedCount), {
        'Raise write.indexCap, or consolidate (:MemoryConsolidate)',
      })
    else
      vim.health.ok(line)
    end
  end
end

--- Who answers recall's refined phase and extraction: the selector kind, the hooks.
function M.report_model(status, config)
  vim.health.start('memory_recall: model channel')
  local kind = status.selector
  if kind == 'none' then
    vim.health.info(
      'selector none: recall is lexical only, and extraction (sessionEnd, codeAccepted, explicit) has no model'
    )
  elseif kind == 'http' then
    local url = config.init_options.selector and config.init_options.selector.url
    vim.health.ok(('selector http: the daemon asks %s itself'):format(tostring(url)))
  elseif kind == 'client' then
    if type(config.select) == 'function' then
      vim.health.ok('selector client: memory/select answered by your select hook')
    else
      vim.health.warn('selector client without a select hook: every refined phase is the lexical fallback', {
        'Set `select` in setup(), or selector kind none',
      })
    end
    if type(config.complete) == 'function' then
      vim.health.ok('memory/complete answered by your complete hook (extraction uses your model)')
    else
      vim.health.info('no complete hook: extraction needs selector http or a `complete` hook')
    end
  end
  M.report_network(status)
  local r = status.recall or {}
  if (r.selectorFailures or 0) > 0 then
    vim.health.warn(('%d of %d recalls fell back to the lexical ranking'):format(r.selectorFailures, r.recalls or 0))
  end
  local e = status.extract
  if type(e) == 'table' then
    local line = ('extraction: %d calls, %d written, %d skipped, %d refused without a model, %d model failures'):format(
      e.calls,
      e.written,
      e.skipped,
      e.refused,
      e.modelFailures
    )
    if (e.modelFailures or 0) > 0 then
      vim.health.warn(line)
    else
      vim.health.info(line)
    end
  end
end

return M
