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
end

return M
