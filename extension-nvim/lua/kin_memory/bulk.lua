-- Bulk fixes in Neovim: `:KinMemoryFixAll` (the store's safe fixes: fences and categories) and
-- `:KinMemoryRestamp {stamp} [{to}]` (every memory of a moved repository; `global` makes them global),
-- also run by the KM301 quick fixes. The server answers one proposal, reviewed like a reflection's.
local core = require('kin_memory.core')
local review = require('kin_memory.review')
local server = require('kin_memory.server')

local B = {}

local notify = core.notify

local function open_review(proposal, nothing)
  if type(proposal) ~= 'table' or type(proposal.changes) ~= 'table' or #proposal.changes == 0 then
    notify(nothing)
    return
  end
  review.review(proposal)
end

function B.fix_all()
  server.execute('kin.memory.fixAll', {}, function(proposal)
    open_review(proposal, 'no memory has a safe fix to make.')
  end)
end

function B.restamp(stamp, to)
  if type(stamp) ~= 'string' or stamp == '' then
    notify('name the workspace stamp to replace.', vim.log.levels.ERROR)
    return
  end
  local function run(new)
    if not new or new == '' then
      return
    end
    server.execute('kin.memory.restamp', { stamp = stamp, to = vim.fn.expand(new) }, function(proposal)
      open_review(proposal, 'no memory is stamped ' .. stamp .. ' any more.')
    end)
  end
  if to then
    return run(to)
  end
  vim.ui.input({ prompt = ('Where is the repository of %s now (a path, or global)? '):format(stamp),
    default = vim.uv.cwd(), completion = 'dir' }, run)
end

--- The KM301 quick fixes' command: `{stamp, to?}` from the server.
function B.restamp_command(command)
  local arg = type(command) == 'table' and type(command.arguments) == 'table' and command.arguments[1] or {}
  B.restamp(arg.stamp, arg.to ~= vim.NIL and arg.to or nil)
end

--- :KinMemoryRename {new}: rename or move the current memory through the memory tool; MEMORY.md's links
--- and other memories' `/memories/…` references follow it. The buffer then shows the file at its new path.
function B.rename(new)
  local buf = vim.api.nvim_get_current_buf()
  local name = vim.api.nvim_buf_get_name(buf)
  local root = core.root()
  if not root or not core.is_memory_file(name) then
    notify('the current buffer is not a memory file of the store.', vim.log.levels.ERROR)
    return
  end
  if vim.bo[buf].modified then
    notify('save the memory before renaming it.', vim.log.levels.ERROR)
    return
  end
  local real = vim.uv.fs_realpath(name) or name
  local old = '/memories/' .. real:sub(#root + 2)
  local target = '/memories/' .. new:gsub('^/memories/', ''):gsub('^/+', '')
  if not target:match('%.md$') then
    target = target .. '.md'
  end
  server.execute('kin.memory.tool', { command = 'rename', old_path = old, new_path = target, workspace = 'none' }, function(result)
    if type(result) ~= 'table' or result.isError then
      notify(('%s was not renamed: %s'):format(old, result and result.content or '?'), vim.log.levels.ERROR)
      return
    end
    vim.cmd.edit(vim.fn.fnameescape(root .. target:sub(#'/memories' + 1)))
    pcall(vim.api.nvim_buf_delete, buf, {})
    for _, b in ipairs(vim.api.nvim_list_bufs()) do -- links in open memories followed on disk
      if vim.api.nvim_buf_is_loaded(b) and vim.bo[b].buftype == '' and not vim.bo[b].modified then
        vim.api.nvim_buf_call(b, function()
          vim.cmd('silent! checktime')
        end)
      end
    end
    notify(('renamed %s to %s; links and references follow'):format(old, target))
  end)
end

function B.define_commands()
  local cmd = vim.api.nvim_create_user_command
  cmd('KinMemoryFixAll', B.fix_all, { nargs = 0, desc = "kin-memory: the store's safe fixes, as one proposal to review" })
  cmd('KinMemoryRestamp', function(o)
    B.restamp(o.fargs[1], o.fargs[2])
  end, { nargs = '+', complete = 'dir', desc = 'kin-memory: re-stamp every memory of a moved repository' })
  cmd('KinMemoryRename', function(o)
    B.rename(o.args)
  end, { nargs = 1, desc = 'kin-memory: rename or move this memory (links and references follow)' })
  vim.lsp.commands['kinMemory.restamp'] = B.restamp_command
end

return B
