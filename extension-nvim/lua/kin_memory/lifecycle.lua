-- Memories reaching the end of their life: :KinMemorySweep (delete the expired, exactly the list shown),
-- the "Delete this memory" quick fix (asks first) and :KinMemoryReviewed (a stale fact stays true).
local core = require('kin_memory.core')
local server = require('kin_memory.server')

local L = {}

local notify, printable = core.notify, core.printable

local MAX_SWEEP_ASKS = 3 -- the question is asked again when the list changed under it, this many times

--- Ask about one dry run's list, then sweep exactly that list: the real sweep presents the dry run's
--- token, and the server deletes only the files it listed (a file changed since is kept and reported).
--- When the list changed in between, the server answers with the new list instead, and we ask again.
local function confirm_sweep(plan, asked)
  local swept = type(plan) == 'table' and plan.swept or {}
  if type(swept) ~= 'table' or #swept == 0 or type(plan.token) ~= 'string' then
    notify(('nothing expired (%s kept)'):format(plan and plan.kept or 0))
    return
  end
  if asked >= MAX_SWEEP_ASKS then
    notify('the expired memories keep changing; nothing was deleted. Try again later.', vim.log.levels.WARN)
    return
  end
  local lines = { '# Expired memories', '' }
  if asked > 0 then
    vim.list_extend(lines, { 'The list changed since it was shown.', '' })
  end
  lines[#lines + 1] = 'A sweep deletes:'
  for _, p in ipairs(swept) do
    lines[#lines + 1] = '- ' .. printable(p)
  end
  local _, win = core.scratch('kin-memory://sweep', lines)
  core.confirm(('Delete %d expired memories? History keeps them: :KinMemoryRevert brings one back.'):format(#swept),
    'Delete', function(yes)
    core.close_window(win)
    if not yes then
      notify('sweep cancelled')
      return
    end
    server.execute('kin.memory.sweep', { dryRun = false, token = plan.token }, function(result)
      if type(result) ~= 'table' then
        return
      end
      if type(result.token) == 'string' then
        confirm_sweep(result, asked + 1) -- nothing deleted: this is the current list
        return
      end
      local n = type(result.swept) == 'table' and #result.swept or 0
      local msg = ('swept %d expired memories (%s kept)'):format(n, result.kept or 0)
      local changed = type(result.changed) == 'table' and result.changed or {}
      if #changed > 0 then
        msg = msg .. ('; %d changed since the list was shown and kept: %s'):format(#changed,
          table.concat(vim.tbl_map(printable, changed), ', '))
      end
      notify(msg)
    end)
  end)
end

--- :KinMemorySweep: list what a sweep would delete, ask, then sweep exactly that list.
function L.sweep()
  server.execute('kin.memory.sweep', { dryRun = true }, function(plan)
    confirm_sweep(plan, 0)
  end)
end

--- The "Delete this memory" quick fix: the server's code action names this command with {uri, path}
--- instead of a file deletion Neovim would apply at once. Ask, then delete through the memory tool
--- (its guard and audit log apply) and wipe the memory's buffer unless it has unsaved changes.
function L.confirm_delete(command)
  local arg = type(command) == 'table' and type(command.arguments) == 'table' and command.arguments[1] or nil
  local path = type(arg) == 'table' and arg.path or nil
  if type(path) ~= 'string' or path:sub(1, #'/memories/') ~= '/memories/' then
    notify('the delete quick fix came without the memory to delete.', vim.log.levels.ERROR)
    return
  end
  local shown = printable(path)
  core.confirm(('Delete %s? Its history keeps it: :KinMemoryRevert %s (or :KinMemoryHistory) brings it back.')
    :format(shown, shown), 'Delete', function(yes)
    if not yes then
      notify('kept ' .. shown)
      return
    end
    -- the person picked this memory: the operator's view reaches another workspace's memory too
    server.execute('kin.memory.tool', { command = 'delete', path = path, workspace = 'none' }, function(result)
      if type(result) ~= 'table' or result.isError then
        notify(('%s was not deleted: %s'):format(shown, core.one_line(result and result.content)), vim.log.levels.ERROR)
        return
      end
      local buf = type(arg.uri) == 'string' and vim.fn.bufnr(vim.uri_to_fname(arg.uri)) or -1
      if buf ~= -1 and vim.api.nvim_buf_is_valid(buf) and not vim.bo[buf].modified then
        pcall(vim.api.nvim_buf_delete, buf, {})
      end
      notify('deleted ' .. shown)
    end)
  end)
end

--- :KinMemoryReviewed: mark the current stale fact reviewed (touches its mtime, not its text).
function L.reviewed()
  local buf = vim.api.nvim_get_current_buf()
  local name = vim.api.nvim_buf_get_name(buf)
  if not core.is_memory_file(name) then
    if core.root() then
      notify('the current buffer is not a memory file of ' .. core.root() .. '.', vim.log.levels.ERROR)
    elseif core.state.failure then
      notify(core.state.failure, vim.log.levels.ERROR)
    else
      notify('the memory store is not known yet (the kin-memory server has not answered); try again in a moment.',
        vim.log.levels.ERROR)
    end
    return
  end
  server.execute('kin.memory.markReviewed', { uri = vim.uri_from_bufnr(buf) }, function(result)
    if type(result) == 'table' and result.ok then
      -- The file's mtime moved on disk but not its text: take the new timestamp quietly.
      if vim.api.nvim_buf_is_valid(buf) and not vim.bo[buf].modified then
        vim.api.nvim_buf_call(buf, function()
          vim.cmd('silent! checktime')
        end)
      end
      notify('marked reviewed: ' .. vim.fs.basename(name))
    end
  end)
end

return L
