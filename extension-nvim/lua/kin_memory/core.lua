-- The bottom of the plugin: its options, what it knows about the store, and the small UI helpers every
-- other module shares (one way to notify, escape, flatten and show scratch text). It requires no other
-- module of the plugin, so every module may require it.
local C = {}

C.name = 'kin_memory'

C.defaults = {
  cmd = { 'kin-memory', 'serve' },
  -- The command that prints `kin-memory info --json` for this server; derived from `cmd` when nil.
  info_cmd = nil,
  settings = {}, -- the `kinMemory` section: memoryDir, workspace, staleDays, toolMode, severity, reflection…
  search_limit = 10,
  codelens = true, -- the server's code lens (category · visibility · lifecycle) on a memory's first line
  start_timeout_ms = 10000,
  info_timeout_ms = 20000,
}

-- Replaced as a whole by setup() (and by whoever assigns `require('kin_memory').options`): read it
-- through `C.options` at call time, never keep a copy.
C.options = vim.deepcopy(C.defaults)

local uv = vim.uv or vim.loop
C.uv = uv

-- ---------------------------------------------------------------------------------------------
-- Where the store is. The plugin never works this out itself: the server's own resolution
-- (KIN_MEMORY_DIR, the memoryDir setting, memory_dir in the global ~/.kin/settings.toml, the
-- default) answers, through `kin-memory info --json` before the server runs and `kin.memory.info`
-- once it does. A second copy of those rules in Lua would drift from the server's.

C.state = {
  generation = 0, -- bumped by every setup(): an answer for an older setup is dropped
  info = nil, -- the last `info` answer (CLI or server)
  failure = nil, -- the sentence shown when the bootstrap failed
}

--- The memory store's root directory as the server resolves it, or nil while it is not known yet
--- (the bootstrap has not answered, or failed).
function C.root()
  return C.state.info and C.state.info.root or nil
end

--- The last answer of `kin-memory info --json` / `kin.memory.info` (nil until one arrived).
function C.info()
  return C.state.info
end

function C.absolute(path)
  path = vim.fs.normalize(path)
  if path:sub(1, 1) ~= '/' then
    path = vim.fs.joinpath(uv.cwd(), path)
  end
  return vim.fs.normalize(path)
end

function C.realpath(path)
  return uv.fs_realpath(path) or path
end

local function relative_to(root, path)
  if path:sub(1, #root + 1) == root .. '/' then
    return path:sub(#root + 2)
  end
  return nil
end

--- Whether `path` is a memory file of the store: a `*.md` below the root, no hidden component
--- (the server keeps its index in a hidden folder).
function C.is_memory_file(path)
  if not path or path == '' or not path:match('%.md$') or path:match('^%a[%w+.-]*://') then
    return false
  end
  local root = C.root()
  if not root then
    return false -- not known yet: buffers are checked again when it is
  end
  path = C.absolute(path)
  -- A new file has no realpath yet: resolve its folder instead.
  local real = uv.fs_realpath(path) or vim.fs.joinpath(C.realpath(vim.fs.dirname(path)), vim.fs.basename(path))
  local rel = relative_to(root, path) or relative_to(root, real)
  if not rel then
    return false
  end
  for part in rel:gmatch('[^/]+') do
    if part:sub(1, 1) == '.' then
      return false
    end
  end
  return true
end

--- Whether `buf` is a loaded file buffer showing a memory file of the store.
function C.is_memory_buffer(buf)
  buf = (buf == nil or buf == 0) and vim.api.nvim_get_current_buf() or buf
  return vim.api.nvim_buf_is_valid(buf) and vim.bo[buf].buftype == ''
    and C.is_memory_file(vim.api.nvim_buf_get_name(buf))
end

-- ---------------------------------------------------------------------------------------------
-- Messages.

--- Whether vim.notify is Neovim's own (an echo on the command line), not a notifier plugin's.
function C.builtin_notify()
  local info = debug.getinfo(vim.notify, 'S')
  return info ~= nil and (info.source or ''):match('vim/_editor%.lua$') ~= nil
end

--- `text` cut to `width` display cells, with "…" where it was cut: at a word's end when one is near,
--- without the punctuation before the cut.
function C.fit(text, width)
  if vim.fn.strdisplaywidth(text) <= width then
    return text
  end
  local out = vim.fn.strcharpart(text, 0, math.max(width - 1, 0))
  while vim.fn.strdisplaywidth(out) > width - 1 and out ~= '' do
    out = vim.fn.strcharpart(out, 0, vim.fn.strchars(out) - 1)
  end
  local after = vim.fn.strcharpart(text, vim.fn.strchars(out), 1)
  if after ~= ' ' then
    local head = out:match('^(.*%S)%s+%S*$') -- the words before the one cut
    if head and #out - #head <= 15 then
      out = head
    end
  end
  return (out:gsub('[%s,;:.]+$', '')) .. '…'
end

--- Say `msg` to the user. Neovim's own vim.notify echoes on the command line, where a message of more
--- than one line (or wider than the room left there) stops everything at a hit-enter prompt: there
--- `short`, one line, is said instead when `msg` does not fit, and cut to the room when even it does
--- not. A notifier plugin (which shows several lines without stopping) gets `msg` as it is.
function C.notify(msg, level, short)
  msg = 'kin-memory: ' .. msg
  if short and C.builtin_notify() then
    local room = math.max(vim.v.echospace, 20)
    if msg:find('\n') or vim.fn.strdisplaywidth(msg) > room then
      msg = C.fit('kin-memory: ' .. C.one_line(short), room)
    end
  end
  vim.notify(msg, level or vim.log.levels.INFO)
end

function C.setup_hint(key)
  return ("require('kin_memory').setup({ %s = … })"):format(key or 'cmd')
end

function C.not_found(exe)
  return ('the kin-memory server was not found: `%s` is not an executable on PATH. Install kin-memory so that '
    .. '`kin-memory` is on PATH, or give its full path as `cmd` in %s.'):format(exe, C.setup_hint())
end

function C.error_text(err)
  if type(err) == 'table' then
    return err.message or vim.inspect(err)
  end
  return tostring(err)
end

function C.one_line(text)
  return (tostring(text or ''):gsub('%s+', ' '))
end

--- A path from the store shown in a message: control characters (a newline would fake a line) escaped.
function C.printable(text)
  return (tostring(text or ''):gsub('[%c\127]', function(c)
    return ('\\x%02x'):format(c:byte())
  end))
end

-- ---------------------------------------------------------------------------------------------
-- Windows and questions.

--- `q` closes a scratch buffer's window (or, in the last window, the buffer), as in help and quickfix.
function C.close_with_q(buf)
  vim.keymap.set('n', 'q', function()
    if #vim.api.nvim_list_wins() > 1 then
      vim.api.nvim_win_close(0, true)
    else
      pcall(vim.api.nvim_buf_delete, buf, { force = true })
    end
  end, { buffer = buf, nowait = true, desc = 'kin-memory: close' })
end

--- Show `lines` in a scratch buffer named `name` (reused), in a split; returns buffer and window.
function C.scratch(name, lines, filetype)
  local buf = vim.fn.bufnr(name)
  if buf == -1 or not vim.api.nvim_buf_is_valid(buf) then
    buf = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_name(buf, name)
  end
  vim.bo[buf].buftype = 'nofile'
  vim.bo[buf].bufhidden = 'wipe'
  vim.bo[buf].swapfile = false
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].filetype = filetype or 'markdown'
  local win = vim.fn.bufwinid(buf)
  if win == -1 then
    vim.cmd('botright split')
    win = vim.api.nvim_get_current_win()
    vim.api.nvim_win_set_buf(win, buf)
  end
  C.close_with_q(buf)
  return buf, win
end

function C.close_window(win)
  if win and vim.api.nvim_win_is_valid(win) and #vim.api.nvim_list_wins() > 1 then
    vim.api.nvim_win_close(win, true)
  end
end

--- Ask yes/no through vim.ui.select (which pickers like telescope or fzf-lua restyle).
--- Ask before a destructive step: "Cancel" comes first, so the choice a bare <CR> takes changes nothing.
function C.confirm(prompt, yes, callback)
  vim.ui.select({ 'Cancel', yes }, { prompt = prompt, kind = 'kin_memory_confirm' }, function(choice)
    callback(choice == yes)
  end)
end

function C.open_uri(uri)
  vim.cmd.edit(vim.fn.fnameescape(vim.uri_to_fname(uri)))
end

return C
