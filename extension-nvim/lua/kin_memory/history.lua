-- History and the review queue in Neovim: `:KinMemoryHistory` (pick a kept version, diff it against the
-- file in a split, or restore it), `:KinMemoryChanges` (what changed since the last review, as a quickfix
-- list), `:KinMemoryDiff` (the current memory against its reviewed text, in a diff split),
-- `:KinMemoryAccept[!] [path…]` and `:KinMemoryRevert [path…]`. Every write goes through the server.
local core = require('kin_memory.core')
local server = require('kin_memory.server')

local H = {}

local notify, printable = core.notify, core.printable

local function when(t)
  return type(t) == 'number' and os.date('%Y-%m-%d %H:%M', math.floor(t)) or '?'
end

local CHANGES_TITLE = 'kin-memory changes since the last review'

--- The store path (`/memories/…`) of a buffer, or nil.
local function vpath_of(buf)
  local name = vim.api.nvim_buf_get_name(buf)
  local root = core.root()
  if name == '' or not root or not core.is_memory_file(name) then
    return nil
  end
  local rel
  for _, p in ipairs({ vim.fn.fnamemodify(name, ':p'), vim.uv.fs_realpath(name) or name }) do
    rel = rel or (p:sub(1, #root + 1) == root .. '/' and p:sub(#root + 2) or nil)
  end
  return rel and ('/memories/' .. rel) or nil
end

local function disk_path(vpath)
  return core.root() .. vpath:sub(#'/memories' + 1)
end

--- The buffer showing `vpath`'s file, reloaded from disk when it has no unsaved changes.
local function follow_disk(vpath)
  local buf = vim.fn.bufnr(disk_path(vpath))
  if buf ~= -1 and vim.api.nvim_buf_is_loaded(buf) and not vim.bo[buf].modified then
    vim.api.nvim_buf_call(buf, function()
      vim.cmd('silent! checktime')
    end)
  end
end

--- Opens `lines` beside the file of `vpath` in a vertical diff split (the file on the right, when there).
local function diff_split(name, lines, vpath)
  local file = disk_path(vpath)
  vim.cmd('tabnew')
  if vim.uv.fs_stat(file) then
    vim.cmd.edit(vim.fn.fnameescape(file))
  else
    local empty = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_win_set_buf(0, empty)
    vim.bo[empty].bufhidden = 'wipe'
  end
  vim.cmd('diffthis')
  vim.cmd('leftabove vnew')
  local buf = vim.api.nvim_get_current_buf()
  pcall(vim.api.nvim_buf_set_name, buf, name)
  vim.bo[buf].buftype = 'nofile'
  vim.bo[buf].bufhidden = 'wipe'
  vim.bo[buf].swapfile = false
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].filetype = 'markdown'
  vim.cmd('diffthis')
  -- `q` closes the comparison, as it does the conflict's (only on this read-only side: the file's own
  -- buffer keeps `q` for macros)
  vim.keymap.set('n', 'q', '<Cmd>tabclose<CR>', { buffer = buf, nowait = true, desc = 'kin-memory: close' })
  return buf
end

local function text_lines(text)
  local lines = vim.split(text or '', '\n', { plain = true })
  if lines[#lines] == '' then
    lines[#lines] = nil
  end
  return lines
end

--- Shows version `version` of `vpath` against the file now (version nil: an empty left side).
function H.diff(vpath, version, label)
  local name = ('kin-memory://%s/%s%s'):format(label or ('version/' .. tostring(version)), '', vpath:sub(2))
  if not version then
    return diff_split(name, {}, vpath)
  end
  server.execute('kin.memory.version', { path = vpath, version = version }, function(result)
    diff_split(name, text_lines(result.text), vpath)
  end)
end

function H.restore(vpath, version)
  server.execute('kin.memory.restore', { path = vpath, version = version }, function(result)
    follow_disk(vpath)
    notify(('restored %s to version %d (%d bytes)'):format(printable(vpath), version, result.bytes or 0))
  end)
end

--- `now`: this is the version the file holds now (the server's `current`: the newest, byte for byte).
function H.format_version(v, now)
  return printable(('Version %d%s  %s  %s  %s'):format(v.version, now and ' (now)' or '',
    v.deleted and 'deleted' or (tostring(v.bytes) .. ' bytes'), v.by or ('by ' .. v.source), when(v.time)))
end

--- :KinMemoryHistory: the current memory's kept versions; pick one, then diff or restore it.
function H.history()
  local vpath = vpath_of(vim.api.nvim_get_current_buf())
  if not vpath then
    notify('the current buffer is not a memory file of the store.', vim.log.levels.ERROR)
    return
  end
  server.execute('kin.memory.history', { path = vpath }, function(result)
    local versions = result.versions or {}
    if #versions == 0 then
      notify('no versions of ' .. printable(vpath) .. ' are kept yet.')
      return
    end
    vim.ui.select(versions, {
      prompt = 'History of ' .. printable(vpath),
      kind = 'kin_memory_history',
      format_item = function(v)
        return H.format_version(v, result.current ~= nil and result.current ~= vim.NIL and v.version == result.current)
      end,
    }, function(v)
      if not v then
        return
      end
      if v.deleted then
        notify(('version %d is the deletion of %s; pick an older one.'):format(v.version, printable(vpath)))
        return
      end
      vim.ui.select({ 'Diff against the current file', 'Restore this version' },
        { prompt = ('Version %d of %s'):format(v.version, printable(vpath)), kind = 'kin_memory_version' },
        function(choice)
          if choice == 'Diff against the current file' then
            H.diff(vpath, v.version)
          elseif choice == 'Restore this version' then
            H.restore(vpath, v.version)
          end
        end)
    end)
  end)
end

H.last_changes = {}

--- :KinMemoryChanges: everything changed since the last review, as the quickfix list.
function H.changes(callback)
  server.execute('kin.memory.changes', { rescan = true }, function(result)
    local changes = result.changes or {}
    H.last_changes = {}
    local items = {}
    for _, c in ipairs(changes) do
      H.last_changes[c.path] = c
      items[#items + 1] = {
        filename = disk_path(c.path),
        lnum = 1,
        text = printable(('%s %s since %s'):format(c.kind, c.by or ('by ' .. c.source), when(c.since))),
        type = c.kind == 'deleted' and 'W' or 'I',
      }
    end
    vim.fn.setqflist({}, 'r', { title = CHANGES_TITLE, items = items })
    if #items > 0 then
      vim.cmd('botright copen')
    end
    notify(#items == 0 and 'no changes since the last review'
      or ('%d change%s since the last review'):format(#items, #items == 1 and '' or 's'))
    if callback then
      callback(changes)
    end
  end)
end

--- The memory a command is about: the current buffer, or the quickfix entry under the cursor.
local function target_vpath()
  local buf = vim.api.nvim_get_current_buf()
  if vim.bo[buf].buftype == 'quickfix' then
    local idx = vim.fn.line('.')
    local item = vim.fn.getqflist()[idx]
    if item and item.bufnr and item.bufnr > 0 then
      return vpath_of(item.bufnr)
    end
  end
  return vpath_of(buf)
end

--- :KinMemoryDiff: the current memory (or quickfix entry) against the text last reviewed.
function H.diff_reviewed()
  local vpath = target_vpath()
  if not vpath then
    notify('no memory here: open one, or use it from the :KinMemoryChanges list.', vim.log.levels.ERROR)
    return
  end
  local function show(c)
    if not c then
      notify(printable(vpath) .. ' has not changed since the last review.')
      return
    end
    local version = c.reviewedVersion ~= vim.NIL and c.reviewedVersion or nil
    H.diff(vpath, version, 'reviewed')
  end
  if H.last_changes[vpath] then
    return show(H.last_changes[vpath])
  end
  server.execute('kin.memory.changes', {}, function(result)
    for _, c in ipairs(result.changes or {}) do
      H.last_changes[c.path] = c
    end
    show(H.last_changes[vpath])
  end)
end

local function paths_arg(args)
  local paths = {}
  for _, a in ipairs(args) do
    paths[#paths + 1] = a:sub(1, 1) == '/' and a:sub(1, #'/memories/') == '/memories/' and a
      or ('/memories/' .. a:gsub('^/+', ''))
  end
  if #paths == 0 then
    paths[1] = target_vpath()
  end
  return paths
end

--- The accepted memories leave the open changes list (:KinMemoryChanges's quickfix list), the rest stays.
local function drop_from_quickfix(paths)
  local list = vim.fn.getqflist({ title = 0, items = 0 })
  if list.title ~= CHANGES_TITLE then
    return
  end
  local done = {}
  for _, p in ipairs(paths) do
    done[p] = true
  end
  local keep = vim.tbl_filter(function(item)
    return not (item.bufnr > 0 and done[vpath_of(item.bufnr)])
  end, list.items)
  if #keep ~= #list.items then
    vim.fn.setqflist({}, 'r', { title = CHANGES_TITLE, items = keep })
  end
end

--- :KinMemoryAccept[!] [path…]: mark changes reviewed (! : every change of the queue).
function H.accept(bang, args)
  local arg
  if bang then
    arg = { paths = {}, all = true }
  else
    local paths = paths_arg(args)
    if #paths == 0 then
      notify('name the memories to accept, or use :KinMemoryAccept! for all.', vim.log.levels.ERROR)
      return
    end
    arg = { paths = paths }
  end
  server.execute('kin.memory.acceptChanges', arg, function(result)
    H.last_changes = {}
    drop_from_quickfix(result.paths or {})
    notify(('accepted %d change%s'):format(#result.paths, #result.paths == 1 and '' or 's'))
  end)
end

--- :KinMemoryRevert [path…]: bring memories back to the text last reviewed (a created one is deleted).
function H.revert(args)
  local paths = paths_arg(args)
  if #paths == 0 then
    notify('name the memories to revert.', vim.log.levels.ERROR)
    return
  end
  server.execute('kin.memory.revertChanges', { paths = paths }, function(result)
    H.last_changes = {}
    for _, vpath in ipairs(result.paths or {}) do
      follow_disk(vpath)
    end
    for _, c in ipairs(result.conflicts or {}) do
      notify(('%s was not reverted: %s'):format(printable(c.path), printable(c.reason)), vim.log.levels.WARN)
    end
    notify(('reverted %d memor%s'):format(#result.paths, #result.paths == 1 and 'y' or 'ies'))
  end)
end

function H.define_commands()
  local cmd = vim.api.nvim_create_user_command
  cmd('KinMemoryHistory', H.history, { nargs = 0, desc = 'kin-memory: kept versions of this memory (diff, restore)' })
  cmd('KinMemoryChanges', function()
    H.changes()
  end, { nargs = 0, desc = 'kin-memory: what changed since the last review (quickfix)' })
  cmd('KinMemoryDiff', H.diff_reviewed, { nargs = 0, desc = 'kin-memory: this memory against its reviewed text' })
  cmd('KinMemoryAccept', function(o)
    H.accept(o.bang, o.fargs)
  end, { nargs = '*', bang = true, desc = 'kin-memory: mark changes reviewed (! for all)' })
  cmd('KinMemoryRevert', function(o)
    H.revert(o.fargs)
  end, { nargs = '*', desc = 'kin-memory: back to the reviewed text' })
end

return H
