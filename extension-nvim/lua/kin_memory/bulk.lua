-- Bulk fixes in Neovim: `:KinMemoryFixAll` (the store's safe fixes: fences and categories) and
-- `:KinMemoryRestamp {stamp} [{to}]` (every memory of a moved repository; `global` makes them global),
-- also run by the KM301 quick fixes. The server answers one proposal, reviewed like a reflection's.
local B = {}

local function core()
  return require('kin_memory')
end

local function notify(msg, level)
  vim.notify('kin-memory: ' .. msg, level or vim.log.levels.INFO)
end

local function review(proposal, nothing)
  if type(proposal) ~= 'table' or type(proposal.changes) ~= 'table' or #proposal.changes == 0 then
    notify(nothing)
    return
  end
  core().review(proposal)
end

function B.fix_all()
  core().execute('kin.memory.fixAll', {}, function(proposal)
    review(proposal, 'no memory has a safe fix to make.')
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
    core().execute('kin.memory.restamp', { stamp = stamp, to = vim.fn.expand(new) }, function(proposal)
      review(proposal, 'no memory is stamped ' .. stamp .. ' any more.')
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

function B.define_commands()
  local cmd = vim.api.nvim_create_user_command
  cmd('KinMemoryFixAll', B.fix_all, { nargs = 0, desc = "kin-memory: the store's safe fixes, as one proposal to review" })
  cmd('KinMemoryRestamp', function(o)
    B.restamp(o.fargs[1], o.fargs[2])
  end, { nargs = '+', complete = 'dir', desc = 'kin-memory: re-stamp every memory of a moved repository' })
  vim.lsp.commands['kinMemory.restamp'] = B.restamp_command
end

return B
