-- :MemoryRecall and :MemoryStatus. The daemon starts on setup() (or on the
-- first command, with the defaults, when setup() was never called).
if vim.g.loaded_memory_recall then
  return
end
vim.g.loaded_memory_recall = true

vim.api.nvim_create_user_command('MemoryRecall', function(args)
  require('memory_recall').recall_command(args.args)
end, { nargs = '*', desc = 'Recall memories for a query (fast result first, then the refined one)' })

vim.api.nvim_create_user_command('MemoryStatus', function()
  require('memory_recall').status_command()
end, { nargs = 0, desc = 'Show the memory daemon status: roots, counts, skipped files, watcher' })

-- Protocol v2: writing and organising memories.
local function manage()
  return require('memory_recall.manage')
end

local SCOPES = { 'project', 'team', 'user' }
local function complete_scope(lead)
  return vim.tbl_filter(function(scope)
    return scope:find(lead, 1, true) == 1
  end, SCOPES)
end

vim.api.nvim_create_user_command('MemoryRemember', function(args)
  local scope, text = manage().split_scope(args.args)
  if args.range > 0 then
    local lines = vim.api.nvim_buf_get_lines(0, args.line1 - 1, args.line2, false)
    text = table.concat(lines, '\n')
  end
  manage().remember(text, { scope = scope })
end, {
  nargs = '*',
  range = true,
  desc = 'Remember a text (the argument, the selected lines, or a prompt); ++team, ++user, ++project name the root',
})

vim.api.nvim_create_user_command('MemoryForget', function(args)
  manage().forget(args.args, args.bang)
end, {
  nargs = '?',
  bang = true,
  complete = 'file',
  desc = 'Forget a memory (a path, or pick one); ! deletes it for good after asking',
})

vim.api.nvim_create_user_command('MemoryUndo', function(args)
  manage().undo(args.args)
end, { nargs = '?', desc = 'Undo the last memory change made from this Neovim (or the operation given)' })

vim.api.nvim_create_user_command('MemoryConsolidate', function(args)
  manage().consolidate(args.bang, args.args)
end, {
  nargs = '?',
  bang = true,
  complete = complete_scope,
  desc = 'Show what consolidation would do (dry run); ! carries it out',
})

vim.api.nvim_create_user_command('MemoryTree', function(args)
  manage().tree(args.args, args.bang)
end, {
  nargs = '?',
  bang = true,
  complete = complete_scope,
  desc = 'The topic tree of the memories; ! picks one with vim.ui.select',
})

vim.api.nvim_create_user_command('MemoryExplain', function(args)
  manage().explain(args.args)
end, {
  nargs = '*',
  desc = 'Why the memory under the cursor (or this file) was delivered; with a query: why for that query',
})
