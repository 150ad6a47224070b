-- kin-memory for Neovim 0.11+: the language server through vim.lsp.config/vim.lsp.enable, attached by
-- path to the memory files of the store (which keep the filetype `markdown`, so markdown's ftplugin,
-- syntax, `FileType markdown` autocmds and other markdown servers still apply), and user commands for
-- the server's custom commands.
local M = {}

M.name = 'kin_memory'

local defaults = {
  cmd = { 'kin-memory', 'serve' },
  -- The command that prints `kin-memory info --json` for this server; derived from `cmd` when nil.
  info_cmd = nil,
  settings = {}, -- the `kinMemory` section: memoryDir, workspace, staleDays, toolMode, severity, reflection…
  search_limit = 10,
  codelens = true, -- the server's code lens (category · visibility · lifecycle) on a memory's first line
  start_timeout_ms = 10000,
  info_timeout_ms = 20000,
}

M.options = vim.deepcopy(defaults)

local uv = vim.uv or vim.loop

local function absolute(path)
  path = vim.fs.normalize(path)
  if path:sub(1, 1) ~= '/' then
    path = vim.fs.joinpath(uv.cwd(), path)
  end
  return vim.fs.normalize(path)
end

local function realpath(path)
  return uv.fs_realpath(path) or path
end

local function notify(msg, level)
  vim.notify('kin-memory: ' .. msg, level or vim.log.levels.INFO)
end

local function setup_hint(key)
  return ("require('kin_memory').setup({ %s = … })"):format(key or 'cmd')
end

-- ---------------------------------------------------------------------------------------------
-- Where the store is. The plugin never works this out itself: the server's own resolution
-- (KIN_MEMORY_DIR, the memoryDir setting, memory_dir in the global ~/.kin/settings.toml, the
-- default) answers, through `kin-memory info --json` before the server runs and `kin.memory.info`
-- once it does. A second copy of those rules in Lua would drift from the server's.

local state = {
  generation = 0, -- bumped by every setup(): an answer for an older setup is dropped
  info = nil, -- the last `info` answer (CLI or server)
  failure = nil, -- the sentence shown when the bootstrap failed
}

--- The memory store's root directory as the server resolves it, or nil while it is not known yet
--- (the bootstrap has not answered, or failed).
function M.root()
  return state.info and state.info.root or nil
end

--- The last answer of `kin-memory info --json` / `kin.memory.info` (nil until one arrived).
function M.info()
  return state.info
end

local function is_lsp_alias(arg)
  local base = vim.fs.basename(arg)
  return base == 'kin-memory-lsp' or base == 'kin-memory-lsp.exe'
end

--- The CLI command that prints the store facts for the configured server: `info_cmd` when given,
--- else `cmd` with its `serve` (or `kin-memory-lsp`) turned into `info --json`, keeping `--root` and
--- `--workspace`. Nil when `cmd` has neither shape (a function, a wrapper of another form).
function M.info_command()
  local opts = M.options
  local cmd
  if type(opts.info_cmd) == 'table' and #opts.info_cmd > 0 then
    cmd = vim.deepcopy(opts.info_cmd)
  elseif type(opts.cmd) == 'table' then
    for i, arg in ipairs(opts.cmd) do
      if type(arg) ~= 'string' then
        return nil
      end
      if arg == 'serve' or is_lsp_alias(arg) then
        cmd = vim.list_slice(opts.cmd, 1, i - 1)
        if arg ~= 'serve' then
          cmd[#cmd + 1] = (arg:gsub('%-lsp(%.?%a*)$', '%1')) -- kin-memory-lsp → kin-memory
        end
        vim.list_extend(cmd, { 'info', '--json' })
        local rest = vim.list_slice(opts.cmd, i + 1)
        local j = 1
        while j <= #rest do
          local a = rest[j]
          if (a == '--root' or a == '--workspace') and rest[j + 1] then
            vim.list_extend(cmd, { a, rest[j + 1] })
            j = j + 1
          elseif a:match('^%-%-root=') or a:match('^%-%-workspace=') then
            cmd[#cmd + 1] = a
          end
          j = j + 1
        end
        break
      end
    end
  end
  if not cmd then
    return nil
  end
  local memory_dir = opts.settings and opts.settings.memoryDir
  if type(memory_dir) == 'string' and memory_dir ~= '' then
    vim.list_extend(cmd, { '--editor-memory-dir', memory_dir })
  end
  return cmd
end

local function not_found(exe)
  return ('the kin-memory server was not found: `%s` is not an executable on PATH. Install kin-memory so that '
    .. '`kin-memory` is on PATH, or give its full path as `cmd` in %s.'):format(exe, setup_hint())
end

local function shown(cmd)
  return '`' .. table.concat(cmd, ' ') .. '`'
end

local function fail(gen, msg, detail)
  if gen ~= state.generation or state.failure then
    return -- one notification per setup()
  end
  state.failure = msg
  if detail and detail ~= '' then
    vim.lsp.log.error('kin-memory info: ' .. detail) -- the raw output, for :LspLog
  end
  notify(msg, vim.log.levels.ERROR)
end

local recheck_buffers -- defined below, with the memory file test

--- Take an `info` answer (from the CLI or the server) as the truth about the store.
local function learn(info)
  if type(info) ~= 'table' or type(info.root) ~= 'string' or info.root == '' then
    return false
  end
  local changed = M.root() ~= info.root
  state.info = info
  state.failure = nil
  if changed then
    recheck_buffers()
  end
  return true
end

local function on_info_exit(gen, cmd, out)
  if gen ~= state.generation then
    return
  end
  local stderr = vim.trim(out.stderr or '')
  if out.code == 0 then
    local ok, info = pcall(vim.json.decode, vim.trim(out.stdout or ''), { luanil = { object = true } })
    if ok and learn(info) then
      return
    end
    fail(gen, ('%s did not answer with the store\'s location: the installed kin-memory is too old for this '
      .. 'plugin, or `cmd` runs something else. Upgrade kin-memory, or set `info_cmd` in %s. Memory files '
      .. 'are not recognised until then.'):format(shown(cmd), setup_hint('info_cmd')), out.stdout)
  elseif out.code == 124 and out.signal ~= 0 then
    fail(gen, ('%s did not answer within %d s, so the memory store is not known and memory files are not '
      .. 'recognised. Run that command in a shell to see why, or fix `cmd` in %s.'):format(shown(cmd),
      math.floor(M.options.info_timeout_ms / 1000), setup_hint()), stderr)
  elseif out.code == 2 and stderr:find('invalid choice', 1, true) then
    fail(gen, ('the installed kin-memory is too old for this plugin (it has no `info` command). Upgrade it, or '
      .. 'point `cmd` in %s at a newer one. Memory files are not recognised until then.'):format(setup_hint()),
      stderr)
  else
    fail(gen, ('the kin-memory server could not be run: %s exited with status %d. Make sure kin-memory is '
      .. 'installed, or point `cmd` in %s at a working one; run that command in a shell to see its error. '
      .. 'Memory files are not recognised until then.'):format(shown(cmd), out.code, setup_hint()), stderr)
  end
end

-- The ONE bootstrap path. Before any server runs, Neovim must know which buffers are memory files
-- (the client attaches by path), so setup() asks the configured server's
-- CLI once: `kin-memory info --json` (plus `--editor-memory-dir` for the memoryDir setting),
-- asynchronously with vim.system so startup is not delayed. When the answer arrives the root is
-- remembered and every loaded buffer is checked again; a memory opened before that (even one given
-- on Neovim's command line) gets its client then. After the client attaches, the
-- server's `kin.memory.info` refreshes the answer (see the LspAttach handler below).
local function bootstrap()
  state.generation = state.generation + 1
  state.info, state.failure = nil, nil
  local gen = state.generation
  local cmd = M.info_command()
  if not cmd then
    fail(gen, ('cannot tell from `cmd` how to ask the kin-memory server where the memory store is. Set '
      .. "`info_cmd`, for example require('kin_memory').setup({ info_cmd = { 'kin-memory', 'info', '--json' } }). "
      .. 'Memory files are not recognised until then.'))
    return
  end
  if vim.fn.executable(cmd[1]) ~= 1 then
    fail(gen, not_found(cmd[1]) .. ' Memory files are not recognised until then.')
    return
  end
  local ok, err = pcall(vim.system, cmd, { text = true, timeout = M.options.info_timeout_ms }, function(out)
    vim.schedule(function()
      on_info_exit(gen, cmd, out)
    end)
  end)
  if not ok then
    fail(gen, ('the kin-memory server could not be started (%s). Check `cmd` in %s. Memory files are not '
      .. 'recognised until then.'):format(tostring(err):gsub('%s+$', ''), setup_hint()))
  end
end

local function relative_to(root, path)
  if path:sub(1, #root + 1) == root .. '/' then
    return path:sub(#root + 2)
  end
  return nil
end

--- Whether `path` is a memory file of the store: a `*.md` below the root, no hidden component
--- (the server keeps its index in a hidden folder).
function M.is_memory_file(path)
  if not path or path == '' or not path:match('%.md$') or path:match('^%a[%w+.-]*://') then
    return false
  end
  local root = M.root()
  if not root then
    return false -- not known yet: buffers are checked again when it is
  end
  path = absolute(path)
  -- A new file has no realpath yet: resolve its folder instead.
  local real = uv.fs_realpath(path) or vim.fs.joinpath(realpath(vim.fs.dirname(path)), vim.fs.basename(path))
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
function M.is_memory_buffer(buf)
  buf = (buf == nil or buf == 0) and vim.api.nvim_get_current_buf() or buf
  return vim.api.nvim_buf_is_valid(buf) and vim.bo[buf].buftype == ''
    and M.is_memory_file(vim.api.nvim_buf_get_name(buf))
end

--- Attach the client to loaded memory buffers that have none: those opened before the root was known
--- (even files given on Neovim's command line), or all of them after a restart. The filetype is never
--- touched: a memory stays `markdown` (or whatever the user gave it).
recheck_buffers = function()
  if not M.root() then
    return
  end
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) and M.is_memory_buffer(buf) then
      M.attach(buf)
    end
  end
end

-- ---------------------------------------------------------------------------------------------
-- The active workspace the server sees: the project Neovim was started in (git top level of the
-- working directory, else the directory). Inside the store that is the operator's unfiltered view.

local function workspace_dir()
  local cwd = uv.cwd()
  return vim.fs.root(cwd, '.git') or cwd
end

local function error_text(err)
  if type(err) == 'table' then
    return err.message or vim.inspect(err)
  end
  return tostring(err)
end

local stopping = {} -- client id → true while the plugin itself stops that client (:KinMemoryRestart)

--- The server's exit, when nobody asked for it: say so, and how to get it back.
local function on_server_exit(code, signal, client_id)
  if stopping[client_id] or vim.v.exiting ~= vim.NIL or (code == 0 and signal == 0) then
    return
  end
  local client = vim.lsp.get_client_by_id(client_id)
  if client and client._is_stopping then -- :LspStop, vim.lsp.enable(false): asked for
    return
  end
  local how = signal ~= 0 and ('it was killed by signal %d'):format(signal) or ('it exited with status %d'):format(code)
  vim.schedule(function()
    notify(('the language server stopped (%s): memory files have no diagnostics, completion or code lens until '
      .. 'it runs again. :KinMemoryRestart starts it; :LspLog shows its last messages.'):format(how),
      vim.log.levels.ERROR)
  end)
end

local function lsp_config()
  local settings = vim.deepcopy(M.options.settings)
  return {
    cmd = M.options.cmd,
    -- Attached by path, not by a filetype of its own: memory files stay `markdown`, so the user's
    -- markdown setup (FileType autocmds, marksman, markdown-oxide, syntax) applies to them unchanged.
    filetypes = { 'markdown' },
    root_dir = function(buf, on_dir)
      if M.is_memory_buffer(buf) then
        on_dir(workspace_dir())
      end
    end,
    -- One server per store: memory files live outside any project, so buffers opened from another
    -- working directory share the client instead of starting a second indexer on the same root.
    reuse_client = function(client, config)
      return client.name == config.name and not client:is_stopped()
    end,
    on_exit = on_server_exit,
    settings = { kinMemory = settings },
    init_options = { kinMemory = settings },
  }
end

--- Attach the kin-memory client to memory buffer `buf` (starting the server when none runs).
function M.attach(buf)
  for _, c in ipairs(vim.lsp.get_clients({ bufnr = buf, name = M.name })) do
    if not c:is_stopped() then
      return -- a client still being stopped (a restart) does not count
    end
  end
  local config = vim.deepcopy(vim.lsp.config[M.name] or lsp_config())
  config.name = M.name
  config.root_dir = workspace_dir()
  if type(config.cmd) == 'table' and vim.fn.executable(config.cmd[1]) ~= 1 then
    return -- the bootstrap already said so
  end
  vim.lsp.start(config, { bufnr = buf, silent = true })
end

-- ---------------------------------------------------------------------------------------------
-- Talking to the server.

local function current_client()
  local buf_clients = vim.lsp.get_clients({ bufnr = 0, name = M.name })
  if buf_clients[1] then
    return buf_clients[1]
  end
  return vim.lsp.get_clients({ name = M.name })[1]
end

--- The running kin-memory client, started (without attaching a buffer) when none runs yet.
function M.client()
  local client = current_client()
  if not client then
    local config = vim.deepcopy(vim.lsp.config[M.name] or lsp_config())
    config.name = M.name
    config.root_dir = workspace_dir()
    local cmd = config.cmd
    if type(cmd) == 'table' and vim.fn.executable(cmd[1]) ~= 1 then
      notify(not_found(cmd[1]), vim.log.levels.ERROR)
      return nil
    end
    local id = vim.lsp.start(config, { attach = false, silent = true })
    client = id and vim.lsp.get_client_by_id(id)
    if not client then
      notify('the language server did not start (see :LspLog).', vim.log.levels.ERROR)
      return nil
    end
  end
  if not client.initialized then
    vim.wait(M.options.start_timeout_ms, function()
      return client.initialized or client:is_stopped()
    end, 20)
  end
  if not client.initialized or client:is_stopped() then
    notify('the language server did not initialize (see :LspLog).', vim.log.levels.ERROR)
    return nil
  end
  M.refresh_info(client)
  return client
end

local refreshed = {} -- client id → true once kin.memory.info was asked

--- The memory buffers the kin-memory client is attached to.
local function attached_buffers()
  local bufs = {}
  for _, client in ipairs(vim.lsp.get_clients({ name = M.name })) do
    for buf in pairs(client.attached_buffers or {}) do
      if vim.api.nvim_buf_is_loaded(buf) then
        bufs[#bufs + 1] = buf
      end
    end
  end
  return bufs
end

--- Ask for the code lens of every attached memory again (after a command, the store may have changed).
function M.refresh_lenses()
  if not M.options.codelens then
    return
  end
  for _, buf in ipairs(attached_buffers()) do
    pcall(vim.lsp.codelens.refresh, { bufnr = buf })
  end
end

--- Code lens on a memory buffer the client just attached to, kept fresh as the buffer is edited.
local function enable_lenses(buf, group)
  if not M.options.codelens then
    return
  end
  pcall(vim.lsp.codelens.refresh, { bufnr = buf })
  vim.api.nvim_clear_autocmds({ group = group, buffer = buf })
  vim.api.nvim_create_autocmd({ 'BufEnter', 'InsertLeave', 'BufWritePost', 'FocusGained' }, {
    group = group,
    buffer = buf,
    callback = function()
      if #vim.lsp.get_clients({ bufnr = buf, name = M.name }) > 0 then
        pcall(vim.lsp.codelens.refresh, { bufnr = buf })
      end
    end,
  })
end

--- :KinMemoryRestart: stop the server (if it still runs) and start it again for every memory buffer.
function M.restart()
  local bufs = {}
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) and M.is_memory_buffer(buf) then
      bufs[#bufs + 1] = buf
    end
  end
  local old = vim.lsp.get_clients({ name = M.name })
  for _, client in ipairs(old) do
    stopping[client.id] = true
    client:stop()
  end
  vim.wait(3000, function()
    return #vim.tbl_filter(function(c)
      return not c:is_stopped()
    end, old) == 0
  end, 20)
  for _, client in ipairs(old) do
    if not client:is_stopped() then
      client:stop(true)
    end
  end
  if #bufs > 0 then
    for _, buf in ipairs(bufs) do
      M.attach(buf)
    end
  elseif not M.client() then
    return
  end
  notify('the language server restarted.')
end

--- Ask the running server where the store is (`kin.memory.info`), once per client: its answer
--- replaces the bootstrap's (same resolution, and it follows the settings the client sent).
function M.refresh_info(client)
  if not client or refreshed[client.id] or client:is_stopped() then
    return
  end
  refreshed[client.id] = true
  local gen = state.generation
  client:request('workspace/executeCommand', { command = 'kin.memory.info', arguments = { vim.empty_dict() } },
    function(err, result)
      if gen ~= state.generation then
        return
      end
      if err or not learn(result) then
        vim.lsp.log.warn('kin.memory.info gave no store root: ' .. (err and error_text(err) or vim.inspect(result)))
      end
    end)
end

-- What each command does, in words, for the messages that say it failed (the wire name is jargon).
local DOING = {
  ['kin.memory.search'] = 'the search', ['kin.memory.reflect'] = 'the reflection',
  ['kin.memory.latestSession'] = 'finding the newest session',
  ['kin.memory.init'] = 'reading the repository', ['kin.memory.consolidate'] = 'the consolidation',
  ['kin.memory.consolidationCandidates'] = 'finding consolidation candidates',
  ['kin.memory.applyProposal'] = 'applying the proposal', ['kin.memory.discardProposal'] = 'discarding the proposal',
  ['kin.memory.sweep'] = 'the sweep', ['kin.memory.markReviewed'] = 'marking the memory reviewed',
  ['kin.memory.indexPreview'] = 'the prompt block preview', ['kin.memory.reindex'] = 'the reindex',
  ['kin.memory.info'] = 'asking where the store is', ['kin.memory.history'] = 'reading the history',
  ['kin.memory.version'] = 'reading a kept version', ['kin.memory.restore'] = 'restoring the version',
  ['kin.memory.changes'] = 'listing the changes', ['kin.memory.acceptChanges'] = 'accepting the changes',
  ['kin.memory.revertChanges'] = 'reverting the changes', ['kin.memory.fixAll'] = 'finding the safe fixes',
  ['kin.memory.restamp'] = 'the re-stamp', ['kin.memory.tool'] = 'the memory tool',
  ['kin.memory.list'] = 'listing the memories', ['kin.memory.stats'] = 'reading the store statistics',
  ['kin.memory.setMemoryEnabled'] = 'turning memory on or off',
}

function M.doing(command)
  return DOING[command] or ('the command ' .. command)
end

--- Run one `workspace/executeCommand` with a single JSON object argument; `callback(result)` runs
--- only on success, a server error becomes an error notification.
function M.execute(command, arg, callback)
  local client = M.client()
  if not client then
    return false
  end
  if arg == nil or (type(arg) == 'table' and next(arg) == nil) then
    arg = vim.empty_dict() -- `{}` must reach the server as an object, not an empty list
  end
  local params = { command = command, arguments = { arg } }
  local ok = client:request('workspace/executeCommand', params, function(err, result)
    if err then
      notify(('%s failed: %s'):format(M.doing(command), M.printable(M.one_line(error_text(err)))), vim.log.levels.ERROR)
      return
    end
    if callback then
      callback(result)
    end
    M.refresh_lenses() -- a command may have changed what a lens says (reviewed, re-stamped, moved)
  end)
  if not ok then
    notify(('could not reach the server for %s (did it stop?). :KinMemoryRestart starts it again.'):format(M.doing(command)),
      vim.log.levels.ERROR)
  end
  return ok
end

-- ---------------------------------------------------------------------------------------------
-- UI helpers.

local function one_line(text)
  return (tostring(text or ''):gsub('%s+', ' '))
end

--- A path from the store shown in a message: control characters (a newline would fake a line) escaped.
local function printable(text)
  return (tostring(text or ''):gsub('[%c\127]', function(c)
    return ('\\x%02x'):format(c:byte())
  end))
end

--- Show `lines` in a scratch buffer named `name` (reused), in a split; returns buffer and window.
local function scratch(name, lines, filetype)
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
  M.close_with_q(buf)
  return buf, win
end

--- `q` closes a scratch buffer's window (or, in the last window, the buffer), as in help and quickfix.
function M.close_with_q(buf)
  vim.keymap.set('n', 'q', function()
    if #vim.api.nvim_list_wins() > 1 then
      vim.api.nvim_win_close(0, true)
    else
      pcall(vim.api.nvim_buf_delete, buf, { force = true })
    end
  end, { buffer = buf, nowait = true, desc = 'kin-memory: close' })
end

-- For the plugin's other modules: one way to notify, escape, flatten and show scratch text.
M.notify, M.printable, M.one_line, M.scratch = notify, printable, one_line, scratch

local function close_window(win)
  if win and vim.api.nvim_win_is_valid(win) and #vim.api.nvim_list_wins() > 1 then
    vim.api.nvim_win_close(win, true)
  end
end

--- Ask yes/no through vim.ui.select (which pickers like telescope or fzf-lua restyle).
local function confirm(prompt, yes, callback)
  vim.ui.select({ yes, 'Cancel' }, { prompt = prompt, kind = 'kin_memory_confirm' }, function(choice)
    callback(choice == yes)
  end)
end

local function open_uri(uri)
  vim.cmd.edit(vim.fn.fnameescape(vim.uri_to_fname(uri)))
end

-- ---------------------------------------------------------------------------------------------
-- Commands.

function M.format_result(item)
  local title = one_line(item.title ~= vim.NIL and item.title or '')
  local label = title ~= '' and (title .. '  ') or ''
  local snippet = one_line(item.snippet ~= vim.NIL and item.snippet or '')
  return ('%s%s [%s]  %s'):format(label, item.path, item.category, snippet)
end

--- :KinMemorySearch [query]: ranked recall, pick one with vim.ui.select, open it.
function M.search(query, everywhere)
  if not query or not query:match('%S') then
    vim.ui.input({ prompt = 'Search memories: ' }, function(input)
      if input and input:match('%S') then
        M.search(input, everywhere)
      end
    end)
    return
  end
  -- `category:…`, `status:…` and `age:<N` words in the query are filters (read by the server);
  -- with `everywhere` (:KinMemorySearch!) every workspace's memories are searched.
  local arg = { query = query, limit = M.options.search_limit }
  if everywhere then
    arg.workspace = 'none'
  end
  M.execute('kin.memory.search', arg, function(result)
    local results = type(result) == 'table' and result.results or nil
    local incomplete = type(result) == 'table' and result.complete == false
    if incomplete then
      -- the index was still catching up: an empty or short list is not "no such memory"
      notify('indexing… the results may be incomplete; search again in a moment', vim.log.levels.WARN)
    end
    local hidden = type(result) == 'table' and tonumber(result.hidden) or 0
    if hidden > 0 then
      notify(('%d more in other workspaces: :KinMemorySearch! %s shows them'):format(hidden, one_line(query)))
    end
    if type(results) ~= 'table' or #results == 0 then
      if not incomplete then
        notify(('no memory matches %q'):format(query), vim.log.levels.WARN)
      end
      return
    end
    vim.ui.select(results, {
      prompt = ('Memories for %q'):format(query),
      kind = 'kin_memory_search',
      format_item = M.format_result,
    }, function(choice)
      if choice then
        open_uri(choice.uri)
      end
    end)
  end)
end

local function change_label(c)
  if c.kind == 'rename' then
    return ('rename %s → %s'):format(printable(c.path or '?'), printable(c.newPath ~= vim.NIL and c.newPath or '?'))
  end
  return ('%s %s'):format(printable(c.kind or '?'), printable(c.path or '?'))
end

--- The review buffer: every change's unified diff, each under a `### <n>. <change>` line, so the
--- change under the cursor is known. Returns the lines and, per line, the index of its change in
--- `changes` (the changes still to decide on).
local function review_lines(proposal, changes, decided)
  -- A consolidation explains each change on a line of its own ("\n- edits …; read …"): keep those lines.
  local parts = vim.split(type(proposal.summary) == 'string' and proposal.summary or '', '\n- ', { plain = true })
  local lines = { '# Proposal ' .. proposal.id, '', one_line(parts[1]) }
  for i = 2, #parts do
    lines[#lines + 1] = '- ' .. one_line(parts[i])
  end
  vim.list_extend(lines, { '', 'a: apply all   c: apply the change under the cursor   d: discard   q: close (keeps the proposal)', '' })
  if decided > 0 then
    lines[#lines + 1] = ('%d change(s) already applied or refused are no longer listed.'):format(decided)
    lines[#lines + 1] = ''
  end
  local owner = {}
  for n, c in ipairs(changes) do
    lines[#lines + 1] = ('### %d. %s'):format(n, change_label(c))
    owner[#lines] = n
    for _, line in ipairs(vim.split((c.diff or ''):gsub('\n$', ''), '\n', { plain = true })) do
      lines[#lines + 1] = line
      owner[#lines] = n
    end
    lines[#lines + 1] = ''
  end
  return lines, owner
end

--- The file on disk of a store path (`/memories/…`), or nil.
local function disk_path(vpath)
  local root = M.root()
  if not root or type(vpath) ~= 'string' or vpath:sub(1, #'/memories/') ~= '/memories/' then
    return nil
  end
  return root .. vpath:sub(#'/memories' + 1)
end

--- The loaded file buffer showing `file` (compared through real paths), or nil.
local function buffer_of(file)
  if not file then
    return nil
  end
  local want = realpath(file)
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    local name = vim.api.nvim_buf_get_name(buf)
    if vim.api.nvim_buf_is_loaded(buf) and vim.bo[buf].buftype == '' and name ~= '' then
      local real = uv.fs_realpath(name) or vim.fs.joinpath(realpath(vim.fs.dirname(name)), vim.fs.basename(name))
      if real == want or name == file then
        return buf
      end
    end
  end
end

--- After applying: buffers of the proposal's files follow the disk, as after any outside write. An
--- unmodified buffer reloads (a deleted or renamed-away memory's buffer is wiped); a buffer with unsaved
--- changes is left alone (the server did not write its file: it reported a conflict).
local function reload_buffers(changes, applied)
  local done = {}
  for _, p in ipairs(applied) do
    done[p] = true
  end
  for _, c in ipairs(changes) do
    local gone = done[c.newPath ~= vim.NIL and c.newPath or c.path] and (c.kind == 'delete' or c.kind == 'rename')
    for _, vpath in ipairs({ c.path, c.newPath ~= vim.NIL and c.newPath or nil }) do
      local buf = buffer_of(disk_path(vpath))
      if buf and not vim.bo[buf].modified then
        if gone and vpath == c.path then
          pcall(vim.api.nvim_buf_delete, buf, {})
        else
          vim.cmd('silent! checktime ' .. buf)
        end
      end
    end
  end
end

--- Opens the review of a proposal (drawn before any question) with its keys. `c` applies one change
--- and keeps reviewing the others; `a` applies every change still listed; `d` discards what is left.
function M.review(proposal)
  local pending = vim.deepcopy(proposal.changes)
  for i, c in ipairs(pending) do
    c.index = i - 1 -- changes are chosen by their index, never by path (a rename and a create can share one)
  end
  local decided = 0
  local lines, owner = review_lines(proposal, pending, decided)
  local name = 'kin-memory://proposal/' .. proposal.id
  local buf, win = scratch(name, lines, 'diff')
  local function close()
    close_window(win)
    if vim.api.nvim_buf_is_valid(buf) then -- the review was the last window: show another buffer there
      pcall(vim.api.nvim_buf_delete, buf, { force = true })
    end
  end
  local function apply(chosen)
    local args = { id = proposal.id }
    if #chosen < #proposal.changes then
      args.changes = vim.tbl_map(function(c)
        return c.index
      end, chosen)
    end
    M.execute('kin.memory.applyProposal', args, function(result)
      local applied = type(result) == 'table' and type(result.applied) == 'table' and result.applied or {}
      local conflicts = type(result) == 'table' and type(result.conflicts) == 'table' and result.conflicts or {}
      local message = ('applied %d of %d change(s)'):format(#applied, #chosen)
      for _, c in ipairs(conflicts) do
        message = message .. ('\nnot applied: %s (%s)'):format(printable(c.path or '?'), one_line(c.reason))
      end
      -- Applied or refused, a chosen change is decided: the review keeps only the others.
      local picked = {}
      for _, c in ipairs(chosen) do
        picked[c] = true
      end
      pending = vim.tbl_filter(function(c)
        return not picked[c]
      end, pending)
      decided = #proposal.changes - #pending
      if #pending == 0 or not vim.api.nvim_buf_is_valid(buf) then
        close()
      else
        lines, owner = review_lines(proposal, pending, decided)
        buf, win = scratch(name, lines, 'diff')
        message = message .. ('\n%d change(s) still to review'):format(#pending)
      end
      notify(message, #conflicts > 0 and vim.log.levels.WARN or vim.log.levels.INFO)
      reload_buffers(chosen, applied)
    end)
  end
  local map = function(lhs, fn, desc)
    vim.keymap.set('n', lhs, fn, { buffer = buf, nowait = true, desc = desc })
  end
  map('a', function() apply(pending) end, 'kin-memory: apply every proposed change')
  map('c', function()
    local n = owner[vim.api.nvim_win_get_cursor(0)[1]]
    if not n then
      notify('put the cursor on a change first', vim.log.levels.WARN)
      return
    end
    apply({ pending[n] })
  end, 'kin-memory: apply the change under the cursor')
  map('d', function()
    M.execute('kin.memory.discardProposal', { id = proposal.id }, function()
      close()
      notify(decided > 0 and 'proposal discarded; nothing else was written' or 'proposal discarded; nothing was written')
    end)
  end, 'kin-memory: discard the proposal')
  map('q', function()
    close()
    if decided == 0 then
      notify(('review closed; nothing was written. The proposal is kept for 7 days: `kin-memory proposal show %s`')
        :format(proposal.id))
    end
  end, 'kin-memory: close the review (the proposal is kept)')
  return buf, win
end

--- :KinMemoryReflect {file}: one reflection pass; its proposal opens in a review buffer. Nothing is
--- written until you apply there (exactly what the buffer shows; the model is not asked again).
function M.reflect(file)
  if not file or file == '' then
    -- No file: the newest Claude Code or Codex session of this workspace, as `kin-memory reflect --latest`.
    M.execute('kin.memory.latestSession', {}, function(latest)
      if type(latest) == 'table' and type(latest.path) == 'string' then
        notify(('the newest %s session: %s'):format(printable(latest.agent or 'agent'), printable(latest.path)))
        M.reflect(latest.path)
      else
        local searched = type(latest) == 'table' and type(latest.searched) == 'table' and latest.searched or {}
        notify('no Claude Code or Codex session of this workspace was found (looked in '
          .. table.concat(vim.tbl_map(printable, searched), ', ') .. '); give a transcript: :KinMemoryReflect {file}',
          vim.log.levels.WARN)
      end
    end)
    return
  end
  local path = absolute(vim.fn.expand(file))
  if not uv.fs_stat(path) then
    notify('no such transcript: ' .. path, vim.log.levels.ERROR)
    return
  end
  notify('reflecting on ' .. vim.fs.basename(path) .. '…')
  M.execute('kin.memory.reflect', { transcript = path }, function(proposal)
    local changes = type(proposal) == 'table' and proposal.changes or {}
    if type(changes) ~= 'table' or #changes == 0 then
      local summary = type(proposal) == 'table' and one_line(proposal.summary or '') or ''
      notify('reflection proposes no changes' .. (summary ~= '' and (': ' .. summary) or ''))
      return
    end
    M.review(proposal)
  end)
end

--- A pass's proposal opens in the review buffer; none means nothing to review (the summary says why).
local function review_or_say(what)
  return function(proposal)
    local changes = type(proposal) == 'table' and proposal.changes or {}
    if type(changes) ~= 'table' or #changes == 0 then
      local summary = type(proposal) == 'table' and one_line(proposal.summary or '') or ''
      notify(what .. ' proposes no changes' .. (summary ~= '' and (': ' .. summary) or ''))
      return
    end
    M.review(proposal)
  end
end

--- :KinMemoryInit [dir]: one model pass over the repository's AGENTS.md, README, docs/ …; its proposal
--- of stamped project facts opens in the review buffer. Default: the current working directory.
function M.init(dir)
  local path = absolute(vim.fn.expand(dir and dir ~= '' and dir or vim.fn.getcwd()))
  local st = uv.fs_stat(path)
  if not st or st.type ~= 'directory' then
    notify('not a folder: ' .. printable(path), vim.log.levels.ERROR)
    return
  end
  notify('reading the documents of ' .. printable(vim.fs.basename(path)) .. '…')
  M.execute('kin.memory.init', { folder = path }, review_or_say('initialization'))
end

--- Group `n`'s memories side by side: the first in the current window, each other one in a split.
local function open_group(group)
  for i, uri in ipairs(type(group.uris) == 'table' and group.uris or {}) do
    vim.cmd((i == 1 and 'edit ' or 'vsplit ') .. vim.fn.fnameescape(vim.uri_to_fname(uri)))
  end
end

--- The consolidation candidates (no model) in the quickfix list: one entry per memory, each naming its
--- group's number, kind and reason. With `n` (:KinMemoryCandidates n), group n opens side by side.
function M.candidates(n)
  local wanted = tonumber(n)
  M.execute('kin.memory.consolidationCandidates', vim.empty_dict(), function(result)
    local found = type(result) == 'table' and type(result.candidates) == 'table' and result.candidates or {}
    if #found == 0 then
      notify('no consolidation candidates: no duplicates, contradictions, stale facts or episodes to keep')
      return
    end
    if wanted then
      if not found[wanted] then
        notify(('there are %d candidate groups; no group %d'):format(#found, wanted), vim.log.levels.ERROR)
        return
      end
      open_group(found[wanted])
      return
    end
    local items = {}
    for n, c in ipairs(found) do
      for _, uri in ipairs(type(c.uris) == 'table' and c.uris or {}) do
        items[#items + 1] = { filename = vim.uri_to_fname(uri), lnum = 1,
          text = ('[%d] %s: %s'):format(n, one_line(c.kind or '?'), one_line(c.reason or '')) }
      end
    end
    vim.fn.setqflist({}, ' ', { title = ('kin-memory: %d consolidation candidates'):format(#found), items = items })
    vim.cmd('copen')
    notify(('%d consolidation candidate group(s) in the quickfix list; :KinMemoryCandidates {n} opens one side by side'):format(#found))
  end)
end

--- :KinMemoryConsolidate: with reflection settings, one model pass over the candidates, reviewed like a
--- reflection; without them, the candidates in the quickfix list.
function M.consolidate()
  local reflection = (M.options.settings or {}).reflection or {}
  if not reflection.provider or not reflection.model then
    notify('no model configured (settings.reflection.provider and .model in setup): listing the candidates')
    M.candidates()
    return
  end
  notify('consolidating memories…')
  M.execute('kin.memory.consolidate', vim.empty_dict(), review_or_say('consolidation'))
end

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
  local _, win = scratch('kin-memory://sweep', lines)
  confirm(('Delete %d expired memories?'):format(#swept), 'Delete', function(yes)
    close_window(win)
    if not yes then
      notify('sweep cancelled')
      return
    end
    M.execute('kin.memory.sweep', { dryRun = false, token = plan.token }, function(result)
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
function M.sweep()
  M.execute('kin.memory.sweep', { dryRun = true }, function(plan)
    confirm_sweep(plan, 0)
  end)
end

--- The "Delete this memory" quick fix: the server's code action names this command with {uri, path}
--- instead of a file deletion Neovim would apply at once. Ask, then delete through the memory tool
--- (its guard and audit log apply) and wipe the memory's buffer unless it has unsaved changes.
function M.confirm_delete(command)
  local arg = type(command) == 'table' and type(command.arguments) == 'table' and command.arguments[1] or nil
  local path = type(arg) == 'table' and arg.path or nil
  if type(path) ~= 'string' or path:sub(1, #'/memories/') ~= '/memories/' then
    notify('the delete quick fix came without the memory to delete.', vim.log.levels.ERROR)
    return
  end
  local shown = printable(path)
  confirm(('Delete %s? This cannot be undone.'):format(shown), 'Delete', function(yes)
    if not yes then
      notify('kept ' .. shown)
      return
    end
    -- the person picked this memory: the operator's view reaches another workspace's memory too
    M.execute('kin.memory.tool', { command = 'delete', path = path, workspace = 'none' }, function(result)
      if type(result) ~= 'table' or result.isError then
        notify(('%s was not deleted: %s'):format(shown, one_line(result and result.content)), vim.log.levels.ERROR)
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
function M.reviewed()
  local buf = vim.api.nvim_get_current_buf()
  local name = vim.api.nvim_buf_get_name(buf)
  if not M.is_memory_file(name) then
    if M.root() then
      notify('the current buffer is not a memory file of ' .. M.root() .. '.', vim.log.levels.ERROR)
    elseif state.failure then
      notify(state.failure, vim.log.levels.ERROR)
    else
      notify('the memory store is not known yet (the kin-memory server has not answered); try again in a moment.',
        vim.log.levels.ERROR)
    end
    return
  end
  M.execute('kin.memory.markReviewed', { uri = vim.uri_from_bufnr(buf) }, function(result)
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

local preview_ns = vim.api.nvim_create_namespace('kin_memory_preview')
local CAP_WORDS = { lines = '200-line', bytes = '25 KB' }

local function plural(n, one, many)
  return ('%d %s'):format(n, n == 1 and one or many)
end

--- The sentence under the preview's notification: the counts, what the cap cut, what is hidden.
function M.preview_summary(result)
  local parts = { ('prompt block: %s lines, %s bytes'):format(result.lines, result.bytes) }
  local cut = tonumber(result.cut) or 0
  local reason = result.cutReason ~= vim.NIL and result.cutReason or nil
  if cut > 0 and reason then
    parts[#parts + 1] = ('%s past the %s cap %s not inlined'):format(plural(cut, 'line', 'lines'),
      CAP_WORDS[reason] or reason, cut == 1 and 'is' or 'are')
  elseif result.truncated then
    parts[#parts + 1] = 'truncated at the cap: the rest is not in the prompt'
  end
  local hidden = tonumber(result.hidden) or 0
  if hidden > 0 then
    parts[#parts + 1] = ('%s of other workspaces %s hidden (one line says so)'):format(
      plural(hidden, 'memory', 'memories'), hidden == 1 and 'is' or 'are')
  end
  return table.concat(parts, '; ')
end

--- Under the preview's text, as virtual lines (the buffer stays exactly the prompt block): what the
--- cap cut (the memories the listing no longer reaches) and what the workspace filter hides.
local function annotate_preview(buf, result, cut_memories)
  vim.api.nvim_buf_clear_namespace(buf, preview_ns, 0, -1)
  local notes = {}
  local function note(text, hl)
    notes[#notes + 1] = { { text, hl or 'Comment' } }
  end
  note('── ' .. M.preview_summary(result) .. ' ──', 'Title')
  if #cut_memories > 0 then
    note(('Cut by the cap (the agent never sees them listed): %s'):format(plural(#cut_memories, 'memory', 'memories')),
      'WarningMsg')
    for i, path in ipairs(cut_memories) do
      if i > 20 then
        note(('  … and %d more'):format(#cut_memories - 20))
        break
      end
      note('  ' .. printable(path))
    end
  end
  local hidden = tonumber(result.hidden) or 0
  if hidden > 0 then
    note(('Hidden: %s of other workspaces (:KinMemorySearch! or :KinMemoryList! shows them)')
      :format(plural(hidden, 'memory', 'memories')))
  end
  local last = vim.api.nvim_buf_line_count(buf) - 1
  vim.api.nvim_buf_set_extmark(buf, preview_ns, last, 0, { virt_lines = notes })
end

--- :KinMemoryPreview: the prompt block the agent would get, in a scratch buffer; under it, what the
--- caps cut and what the workspace filter hides.
function M.preview()
  local arg = {}
  local ws = M.options.settings.workspace
  if type(ws) == 'string' and ws ~= '' then
    arg.workspace = ws
  end
  M.execute('kin.memory.indexPreview', arg, function(result)
    if type(result) ~= 'table' or type(result.text) ~= 'string' then
      notify('the server sent no prompt block.', vim.log.levels.ERROR)
      return
    end
    local buf = scratch('kin-memory://index-preview', vim.split(result.text, '\n', { plain = true }))
    annotate_preview(buf, result, {})
    notify(M.preview_summary(result))
    if not result.truncated then
      return
    end
    -- Which memories the cut took: the visible ones (sessions are never listed) not in the text.
    M.execute('kin.memory.list', vim.empty_dict(), function(list)
      local cut = {}
      for _, m in ipairs(type(list) == 'table' and list.memories or {}) do
        if m.visible and m.category ~= 'session' and not result.text:find('- ' .. m.path .. ' (', 1, true) then
          cut[#cut + 1] = m.path
        end
      end
      table.sort(cut)
      if vim.api.nvim_buf_is_valid(buf) then
        annotate_preview(buf, result, cut)
      end
    end)
  end)
end

local function info_lines(info)
  local lines = {
    ('kin-memory %s'):format(info.version or '?'),
    ('store: %s (from %s)'):format(info.root, info.rootSource or '?'),
  }
  local ws = type(info.workspaces) == 'table' and table.concat(info.workspaces, ', ') or ''
  lines[#lines + 1] = 'workspaces: ' .. (ws ~= '' and ws or 'none (the operator view: every memory)')
  for _, f in ipairs(type(info.settingsFiles) == 'table' and info.settingsFiles or {}) do
    local what = not f.exists and 'missing' or (f.problems or 0) > 0 and (f.problems .. ' problem(s)') or 'ok'
    lines[#lines + 1] = ('%s settings: %s (%s)'):format(f.scope or '?', f.path or '?', what)
  end
  if type(info.indexState) == 'table' then
    lines[#lines + 1] = ('recall index: %s, %s memories'):format(info.indexState.state, info.indexState.memories)
  end
  if info.memoryEnabled ~= nil then
    lines[#lines + 1] = 'memory: ' .. (info.memoryEnabled and 'enabled' or 'disabled')
  end
  return lines
end

--- :KinMemoryInfo: where the store is and how the server found it, its settings files and index.
--- Asks the running server; before one runs, shows the bootstrap's answer.
function M.show_info()
  local client = current_client()
  if client and client.initialized and not client:is_stopped() then
    M.execute('kin.memory.info', {}, function(result)
      if not learn(result) then
        notify('the server did not say where the memory store is (see :LspLog).', vim.log.levels.ERROR)
        return
      end
      notify(table.concat(info_lines(result), '\n'))
    end)
  elseif state.info then
    notify(table.concat(info_lines(state.info), '\n'))
  elseif state.failure then
    notify(state.failure, vim.log.levels.ERROR)
  else
    notify('the kin-memory server has not answered yet; try again in a moment.', vim.log.levels.WARN)
  end
end

local function define_commands()
  local cmd = vim.api.nvim_create_user_command
  cmd('KinMemorySearch', function(o)
    M.search(o.args, o.bang)
  end, { nargs = '*', bang = true, desc = 'kin-memory: search memories (ranked recall; ! for every workspace)' })
  cmd('KinMemoryReflect', function(o)
    M.reflect(o.args)
  end, { nargs = '?', complete = 'file', desc = 'kin-memory: reflect on a transcript, or the newest session (asks before applying)' })
  cmd('KinMemoryInit', function(o)
    M.init(o.args)
  end, { nargs = '?', complete = 'dir', desc = 'kin-memory: propose memories from a repository (asks before applying)' })
  cmd('KinMemoryConsolidate', M.consolidate, { nargs = 0, desc = 'kin-memory: merge duplicates, fix contradictions (asks before applying)' })
  cmd('KinMemoryCandidates', function(o)
    M.candidates(o.args)
  end, { nargs = '?', desc = 'kin-memory: consolidation candidates in the quickfix list (with n: group n side by side)' })
  cmd('KinMemorySweep', M.sweep, { nargs = 0, desc = 'kin-memory: delete expired memories (asks first)' })
  cmd('KinMemoryReviewed', M.reviewed, { nargs = 0, desc = 'kin-memory: mark this memory reviewed' })
  cmd('KinMemoryPreview', M.preview, { nargs = 0, desc = 'kin-memory: preview the prompt block' })
  cmd('KinMemoryInfo', M.show_info, { nargs = 0, desc = 'kin-memory: where the store is and how it was found' })
  require('kin_memory.history').define_commands()
  require('kin_memory.bulk').define_commands()
  require('kin_memory.manage').define_commands()
  require('kin_memory.stats').define_commands()
end

--- Set everything up. Options: `cmd` (server command, default `{'kin-memory', 'serve'}`),
--- `info_cmd` (the command printing `kin-memory info --json`; derived from `cmd` when unset),
--- `settings` (the `kinMemory` section), `search_limit`, `start_timeout_ms`, `info_timeout_ms`.
function M.setup(opts)
  M.options = vim.tbl_deep_extend('force', vim.deepcopy(defaults), opts or {})
  for _, key in ipairs({ 'cmd', 'info_cmd' }) do
    if opts and opts[key] then
      M.options[key] = opts[key] -- a list: replace, never merge element-wise
    end
  end
  vim.lsp.config(M.name, lsp_config())
  vim.lsp.enable(M.name)
  local group = vim.api.nvim_create_augroup('kin_memory', { clear = true })
  local lens_group = vim.api.nvim_create_augroup('kin_memory_codelens', { clear = true })
  vim.api.nvim_create_autocmd('LspAttach', {
    group = group,
    callback = function(args)
      local client = vim.lsp.get_client_by_id(args.data.client_id)
      if client and client.name == M.name then
        M.refresh_info(client)
        enable_lenses(args.buf, lens_group)
        require('kin_memory.frontmatter').attach(args.buf)
      end
    end,
  })
  define_commands()
  vim.lsp.commands['kinMemory.confirmDelete'] = M.confirm_delete
  bootstrap() -- last: an answer (or failure) arriving later finds everything above in place
end

return M
