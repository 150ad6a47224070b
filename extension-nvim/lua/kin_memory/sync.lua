-- The store synced through git, from Neovim: `:KinMemorySync [URL]` (commit, fetch, merge, push; the
-- remote asked once when the store has none), and the KM800 quick fixes of a conflict a sync left:
-- keep one machine's version (the server's `kin.memory.resolveConflict`, followed by a reload of the
-- buffer) or open both versions side by side (`kinMemory.compareConflict`, this plugin's command).
local core = require('kin_memory.core')
local server = require('kin_memory.server')

local Y = {}

local notify, printable = core.notify, core.printable

--- Reload the unmodified buffers of memories from disk: a sync or a resolution rewrote files under them.
local function follow_disk(buf)
  local bufs = buf and { buf } or vim.api.nvim_list_bufs()
  for _, b in ipairs(bufs) do
    if vim.api.nvim_buf_is_loaded(b) and core.is_memory_buffer(b) and not vim.bo[b].modified then
      vim.api.nvim_buf_call(b, function()
        vim.cmd('silent! checktime')
      end)
    end
  end
end

--- What the user typed as the remote, as git should get it: `~` expanded and a relative folder made
--- absolute (the server runs elsewhere); URLs and ssh addresses as they are.
function Y.address(text)
  text = vim.trim(text or '')
  if text:sub(1, 1) == '~' then
    return vim.fs.normalize(text)
  end
  if text ~= '' and text:sub(1, 1) ~= '/' and not text:match('^%a[%w+.-]*://') and vim.fn.isdirectory(text) == 1 then
    return core.absolute(text)
  end
  return text
end

local function list(value)
  return type(value) == 'table' and value or {}
end

--- A memory's path as a message names it: /memories/ dropped, escaped, one line.
local function shown(path)
  return (printable(core.one_line(path)):gsub('^/memories/', ''))
end

--- The sync's answer on one line, for a command line that shows one: what conflicted (first: a
--- narrow command line cuts the end), came in and went out, then the server's other sentences (a
--- merged buffer, a file left for the next sync).
function Y.short_report(result)
  local incoming, outgoing, conflicts = list(result.incoming), list(result.outgoing), list(result.conflicts)
  local summary = list(result.summary)
  local parts = {}
  if #conflicts == 1 then
    parts[#parts + 1] = ('%s in conflict: see KM800 on it'):format(shown(conflicts[1].path))
  elseif #conflicts > 1 then
    parts[#parts + 1] = ('%d in conflict: see KM800 on each'):format(#conflicts)
  end
  if #incoming == 1 then
    parts[#parts + 1] = ('%s came in from %s'):format(shown(incoming[1].path), printable(core.one_line(incoming[1].machine)))
  elseif #incoming > 1 then
    parts[#parts + 1] = ('%d changes came in'):format(#incoming)
  end
  if #outgoing > 0 then
    parts[#parts + 1] = ('%d change%s went out'):format(#outgoing, #outgoing == 1 and '' or 's')
  end
  -- The summary's order: came in, went out, one sentence per conflict, then the rest.
  local said = (#incoming > 0 and 1 or 0) + (#outgoing > 0 and 1 or 0) + #conflicts
  local rest = {}
  for i = said + 1, #summary do
    rest[#rest + 1] = printable(core.one_line(summary[i]))
  end
  if #parts == 0 then
    return #rest > 0 and table.concat(rest, ' ') or 'the store is synced.'
  end
  local line = 'synced: ' .. table.concat(parts, '; ') .. '.'
  return #rest > 0 and (line .. ' ' .. table.concat(rest, ' ')) or line
end

--- The notification for a sync's answer: the server's sentences, each one line and escaped (one line
--- in all where the command line shows it: Y.short_report).
function Y.report(result)
  local lines = {}
  for _, line in ipairs(list(result.summary)) do
    lines[#lines + 1] = printable(core.one_line(line))
  end
  if #lines == 0 then
    lines[1] = 'the store is synced.'
  end
  local conflicts = #list(result.conflicts)
  if conflicts > 0 then
    lines[#lines + 1] = 'A memory in conflict carries the warning KM800: its quick fixes keep one version or show both.'
  end
  notify(table.concat(lines, '\n'), conflicts > 0 and vim.log.levels.WARN or vim.log.levels.INFO, Y.short_report(result))
end

local function show_error(err)
  -- the server's message is a sentence for people: shown as it is, on one line, escaped
  notify(printable(core.one_line(core.error_text(err))), vim.log.levels.ERROR)
end

--- :KinMemorySync [URL]: sync the store; with a URL (or when the store has none yet, after asking for
--- it) the store's remote is set first.
function Y.sync(remote, name)
  local arg = {}
  if remote and vim.trim(remote) ~= '' then
    arg.remote = Y.address(remote)
  end
  if name and vim.trim(name) ~= '' then
    arg.name = vim.trim(name)
  end
  vim.api.nvim_echo({ { 'kin-memory: syncing the store…' } }, false, {})
  server.execute('kin.memory.sync', arg, function(result)
    if type(result) ~= 'table' then
      return
    end
    if result.needsRemote then
      if arg.remote then -- cannot happen with a remote given; never ask in a loop
        return Y.report(result)
      end
      vim.ui.input({ prompt = 'Sync the memory store with (a folder, ssh or https git URL): ', completion = 'dir' },
        function(answer)
          if not answer or vim.trim(answer) == '' then
            notify('not synced: the store has no remote yet (:KinMemorySync URL sets it).')
            return
          end
          -- Once, with the remote (as `kin-memory sync --name`): how the other machines call this one.
          vim.ui.input({ prompt = 'This machine\'s name, as the other machines show it: ',
            default = core.uv.os_gethostname() }, function(name)
            if name == nil then
              notify('not synced: no name was given for this machine.')
              return
            end
            Y.sync(answer, name)
          end)
        end)
      return
    end
    follow_disk()
    Y.report(result)
  end, show_error)
end

local function command_arg(command)
  local arg = type(command) == 'table' and type(command.arguments) == 'table' and command.arguments[1] or nil
  return type(arg) == 'table' and type(arg.uri) == 'string' and arg or nil
end

--- The "Keep …'s version" quick fixes: the server settles the conflict on disk; the buffer follows.
function Y.resolve_command(command)
  local arg = command_arg(command)
  if not arg or (arg.keep ~= 'mine' and arg.keep ~= 'theirs') then
    notify('the quick fix came without the memory and the version to keep.', vim.log.levels.ERROR)
    return
  end
  local buf = vim.fn.bufnr(vim.uri_to_fname(arg.uri))
  server.execute('kin.memory.resolveConflict', { uri = arg.uri, keep = arg.keep }, function()
    if buf ~= -1 and vim.bo[buf].modified then
      notify('the file on disk now keeps the chosen version, but this buffer has unsaved changes: '
        .. ':edit! shows the file.', vim.log.levels.WARN)
    elseif buf ~= -1 then
      follow_disk(buf)
    end
    local title = type(command.title) == 'string' and command.title:gsub('^Keep', 'kept') or 'kept the version'
    local file = printable(vim.fn.fnamemodify(vim.uri_to_fname(arg.uri), ':t'))
    notify(('%s of %s; the next :KinMemorySync sends it to the other machines.'):format(printable(title), file),
      nil, ('%s of %s; :KinMemorySync sends it out.'):format(printable(title), file))
  end, show_error)
end

local function text_lines(text)
  if type(text) ~= 'string' then
    return {}
  end
  local lines = vim.split(text, '\n', { plain = true })
  if lines[#lines] == '' then
    lines[#lines] = nil
  end
  return lines
end

--- One side of the comparison: a read-only scratch buffer in the current window, in diff mode.
local function side(name, text)
  local old = vim.fn.bufnr(name)
  if old ~= -1 then
    pcall(vim.api.nvim_buf_delete, old, { force = true }) -- a comparison shown before
  end
  local buf = vim.api.nvim_create_buf(false, true)
  pcall(vim.api.nvim_buf_set_name, buf, name)
  vim.api.nvim_win_set_buf(0, buf)
  vim.bo[buf].buftype = 'nofile'
  vim.bo[buf].bufhidden = 'wipe'
  vim.bo[buf].swapfile = false
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, text_lines(text))
  vim.bo[buf].modifiable = false
  vim.bo[buf].readonly = true
  vim.bo[buf].filetype = 'markdown'
  vim.cmd('diffthis')
  vim.keymap.set('n', 'q', '<Cmd>tabclose<CR>', { buffer = buf, nowait = true, desc = 'kin-memory: close' })
  return buf
end

--- Both versions of a memory in conflict, in a new tab: this machine's on the left, the other's on the
--- right (a deleted side is empty and says so in its name).
function Y.compare(uri)
  server.execute('kin.memory.conflictVersions', { uri = uri }, function(result)
    if type(result) ~= 'table' then
      return
    end
    -- Named by the memory and the machine, with no folder: the tab's label (the buffer's name, its
    -- folders cut to one letter each) then reads "db.md — laptop", not "k//c/m/f/db.md (laptop)".
    local file = vim.fs.basename(printable(core.one_line(result.path)))
    local other = printable(core.one_line(result.other))
    local function name(who, text)
      return ('%s — %s%s'):format(file, who, type(text) == 'string' and '' or ', deleted')
    end
    vim.cmd('tabnew')
    local scratch = vim.api.nvim_get_current_buf()
    side(name('this machine', result.mine), result.mine)
    vim.cmd('rightbelow vnew')
    side(name(other, result.theirs), result.theirs)
    if vim.api.nvim_buf_is_valid(scratch) then
      pcall(vim.api.nvim_buf_delete, scratch, { force = true }) -- the empty buffer tabnew made
    end
  end, show_error)
end

--- The "Open both versions side by side" quick fix: `{uri}` from the server.
function Y.compare_command(command)
  local arg = command_arg(command)
  if not arg then
    notify('the quick fix came without the memory to compare.', vim.log.levels.ERROR)
    return
  end
  Y.compare(arg.uri)
end

function Y.define_commands()
  vim.api.nvim_create_user_command('KinMemorySync', function(o)
    Y.sync(o.args)
  end, { nargs = '?', complete = 'dir', desc = 'kin-memory: sync the store through git (a URL sets its remote)' })
  vim.lsp.commands['kinMemory.compareConflict'] = Y.compare_command
  -- The server's own command, run by the client so that the buffer follows the file it rewrites.
  vim.lsp.commands['kin.memory.resolveConflict'] = Y.resolve_command
end

return Y
