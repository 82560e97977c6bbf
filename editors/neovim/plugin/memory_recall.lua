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
