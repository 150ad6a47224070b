-- kin-memory for Neovim 0.11+: the language server through vim.lsp.config/vim.lsp.enable, filetype
-- detection for the memory store, and user commands for the server's custom commands.
local M = {}

M.name = 'kin_memory'
M.filetype = 'markdown.kinmemory' -- dotted: markdown's ftplugin and syntax still apply

local defaults = {
  cmd = { 'kin-memory', 'serve' },
  settings = {}, -- the `kinMemory` section: memoryDir, workspace, staleDays, toolMode, severity, reflection…
  search_limit = 10,
  start_timeout_ms = 10000,
}

M.options = vim.deepcopy(defaults)

local uv = vim.uv or vim.loop

-- ---------------------------------------------------------------------------------------------
-- The store root, resolved like the server does: KIN_MEMORY_DIR, the editor setting, memory_dir in
-- the global ~/.kin/settings.toml, else ~/.kin/memory.

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

-- Only the one top-level key matters here; a full TOML parser is the server's job.
local function global_memory_dir()
  local file = io.open(vim.fs.joinpath(vim.fs.normalize('~'), '.kin', 'settings.toml'), 'r')
  if not file then
    return nil
  end
  local text = file:read('*a')
  file:close()
  for line in text:gmatch('[^\n]+') do
    if line:match('^%s*%[') then
      return nil -- past the top-level table
    end
    local value = line:match('^%s*memory_dir%s*=%s*"([^"]*)"') or line:match("^%s*memory_dir%s*=%s*'([^']*)'")
    if value and value:match('%S') then
      return value
    end
  end
  return nil
end

--- The memory store's root directory (absolute, symlinks resolved when it exists).
function M.root()
  local env = vim.env.KIN_MEMORY_DIR
  if env and env ~= '' then
    return realpath(absolute(env))
  end
  local setting = M.options.settings.memoryDir
  if type(setting) == 'string' and setting ~= '' then
    return realpath(absolute(setting))
  end
  local global = global_memory_dir()
  if global then
    return realpath(absolute(global))
  end
  return realpath(absolute('~/.kin/memory'))
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

-- ---------------------------------------------------------------------------------------------
-- The active workspace the server sees: the project Neovim was started in (git top level of the
-- working directory, else the directory). Inside the store that is the operator's unfiltered view.

local function workspace_dir()
  local cwd = uv.cwd()
  return vim.fs.root(cwd, '.git') or cwd
end

local function notify(msg, level)
  vim.notify('kin-memory: ' .. msg, level or vim.log.levels.INFO)
end

local function error_text(err)
  if type(err) == 'table' then
    return err.message or vim.inspect(err)
  end
  return tostring(err)
end

local function lsp_config()
  local settings = vim.deepcopy(M.options.settings)
  return {
    cmd = M.options.cmd,
    filetypes = { M.filetype },
    root_dir = function(_, on_dir)
      on_dir(workspace_dir())
    end,
    -- One server per store: memory files live outside any project, so buffers opened from another
    -- working directory share the client instead of starting a second indexer on the same root.
    reuse_client = function(client, config)
      return client.name == config.name and not client:is_stopped()
    end,
    settings = { kinMemory = settings },
    init_options = { kinMemory = settings },
  }
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
      notify(("server command not found: %s (set `cmd` in require('kin_memory').setup{})"):format(cmd[1]),
        vim.log.levels.ERROR)
      return nil
    end
    local id = vim.lsp.start(config, { attach = false, silent = true })
    client = id and vim.lsp.get_client_by_id(id)
    if not client then
      notify('the language server did not start', vim.log.levels.ERROR)
      return nil
    end
  end
  if not client.initialized then
    vim.wait(M.options.start_timeout_ms, function()
      return client.initialized or client:is_stopped()
    end, 20)
  end
  if not client.initialized or client:is_stopped() then
    notify('the language server did not initialize (see :LspLog)', vim.log.levels.ERROR)
    return nil
  end
  return client
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
      notify(('%s failed: %s'):format(command, error_text(err)), vim.log.levels.ERROR)
      return
    end
    if callback then
      callback(result)
    end
  end)
  if not ok then
    notify(command .. ': the request could not be sent (server stopped?)', vim.log.levels.ERROR)
  end
  return ok
end

-- ---------------------------------------------------------------------------------------------
-- UI helpers.

local function one_line(text)
  return (tostring(text or ''):gsub('%s+', ' '))
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
  return buf, win
end

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
function M.search(query)
  if not query or not query:match('%S') then
    vim.ui.input({ prompt = 'Search memories: ' }, function(input)
      if input and input:match('%S') then
        M.search(input)
      end
    end)
    return
  end
  M.execute('kin.memory.search', { query = query, limit = M.options.search_limit }, function(result)
    local results = type(result) == 'table' and result.results or nil
    if type(results) ~= 'table' or #results == 0 then
      notify(('no memory matches %q'):format(query), vim.log.levels.WARN)
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

local function change_lines(changes)
  local lines = {}
  for _, c in ipairs(changes or {}) do
    local what = c.kind == 'rename' and c.from and ('%s → %s'):format(c.from, c.path) or (c.path or '?')
    lines[#lines + 1] = ('- %s %s%s'):format(c.kind or '?', what, c.conflict and '  (conflict: changed on disk)' or '')
  end
  return lines
end

--- :KinMemoryReflect {file}: a dry run first, the proposed changes shown, then apply on confirmation
--- (Neovim applies workspace edits without a preview of its own).
function M.reflect(file)
  if not file or file == '' then
    notify('usage: :KinMemoryReflect {transcript file}', vim.log.levels.ERROR)
    return
  end
  local path = absolute(vim.fn.expand(file))
  if not uv.fs_stat(path) then
    notify('no such transcript: ' .. path, vim.log.levels.ERROR)
    return
  end
  notify('reflecting on ' .. vim.fs.basename(path) .. '…')
  M.execute('kin.memory.reflect', { transcript = path, apply = false }, function(result)
    local changes = type(result) == 'table' and result.changes or {}
    local summary = one_line(result and result.summary ~= vim.NIL and result.summary or '')
    if type(changes) ~= 'table' or #changes == 0 then
      notify('reflection proposes no changes' .. (summary ~= '' and (': ' .. summary) or ''))
      return
    end
    local lines = { '# Reflection on ' .. vim.fs.basename(path), '', summary, '', 'Proposed changes:' }
    vim.list_extend(lines, change_lines(changes))
    if type(result.diff) == 'string' and result.diff ~= '' then
      vim.list_extend(lines, { '', '```diff' })
      vim.list_extend(lines, vim.split(result.diff:gsub('\n$', ''), '\n', { plain = true }))
      lines[#lines + 1] = '```'
    end
    local _, win = scratch('kin-memory://reflect', lines)
    confirm(('Apply %d change(s) to the memory store?'):format(#changes), 'Apply', function(yes)
      close_window(win)
      if not yes then
        notify('reflection not applied')
        return
      end
      M.execute('kin.memory.reflect', { transcript = path, apply = true }, function(applied)
        local n = type(applied) == 'table' and type(applied.changes) == 'table' and #applied.changes or 0
        if type(applied) == 'table' and applied.applied then
          notify(('reflection applied %d change(s)'):format(n))
        else
          notify('reflection was not applied', vim.log.levels.WARN)
        end
      end)
    end)
  end)
end

--- :KinMemorySweep: list what a sweep would delete, ask, then sweep.
function M.sweep()
  M.execute('kin.memory.sweep', { dryRun = true }, function(plan)
    local swept = type(plan) == 'table' and plan.swept or {}
    if type(swept) ~= 'table' or #swept == 0 then
      notify(('nothing expired (%s kept)'):format(plan and plan.kept or 0))
      return
    end
    local lines = { '# Expired memories', '', 'A sweep deletes:' }
    for _, p in ipairs(swept) do
      lines[#lines + 1] = '- ' .. p
    end
    local _, win = scratch('kin-memory://sweep', lines)
    confirm(('Delete %d expired memories?'):format(#swept), 'Delete', function(yes)
      close_window(win)
      if not yes then
        notify('sweep cancelled')
        return
      end
      M.execute('kin.memory.sweep', { dryRun = false }, function(result)
        local n = type(result) == 'table' and type(result.swept) == 'table' and #result.swept or 0
        notify(('swept %d expired memories (%s kept)'):format(n, result and result.kept or 0))
      end)
    end)
  end)
end

--- :KinMemoryReviewed: mark the current stale fact reviewed (touches its mtime, not its text).
function M.reviewed()
  local buf = vim.api.nvim_get_current_buf()
  local name = vim.api.nvim_buf_get_name(buf)
  if not M.is_memory_file(name) then
    notify('the current buffer is not a memory file of ' .. M.root(), vim.log.levels.ERROR)
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

--- :KinMemoryPreview: the prompt block the agent would get, in a scratch buffer.
function M.preview()
  local arg = {}
  local ws = M.options.settings.workspace
  if type(ws) == 'string' and ws ~= '' then
    arg.workspace = ws
  end
  M.execute('kin.memory.indexPreview', arg, function(result)
    if type(result) ~= 'table' or type(result.text) ~= 'string' then
      notify('indexPreview returned no text', vim.log.levels.ERROR)
      return
    end
    scratch('kin-memory://index-preview', vim.split(result.text, '\n', { plain = true }))
    notify(('prompt block: %s lines, %s bytes%s'):format(result.lines, result.bytes,
      result.truncated and ' (truncated at the cap)' or ''))
  end)
end

local function define_commands()
  local cmd = vim.api.nvim_create_user_command
  cmd('KinMemorySearch', function(o)
    M.search(o.args)
  end, { nargs = '*', desc = 'kin-memory: search memories (ranked recall)' })
  cmd('KinMemoryReflect', function(o)
    M.reflect(o.args)
  end, { nargs = 1, complete = 'file', desc = 'kin-memory: reflect on a transcript (asks before applying)' })
  cmd('KinMemorySweep', M.sweep, { nargs = 0, desc = 'kin-memory: delete expired memories (asks first)' })
  cmd('KinMemoryReviewed', M.reviewed, { nargs = 0, desc = 'kin-memory: mark this memory reviewed' })
  cmd('KinMemoryPreview', M.preview, { nargs = 0, desc = 'kin-memory: preview the prompt block' })
end

--- Set everything up. Options: `cmd` (server command, default `{'kin-memory', 'serve'}`),
--- `settings` (the `kinMemory` section), `search_limit`.
function M.setup(opts)
  M.options = vim.tbl_deep_extend('force', vim.deepcopy(defaults), opts or {})
  if opts and opts.cmd then
    M.options.cmd = opts.cmd -- a list: replace, never merge element-wise
  end
  vim.filetype.add({
    pattern = {
      ['.*%.md'] = {
        function(path)
          if M.is_memory_file(path) then
            return M.filetype
          end
        end,
        { priority = 10 }, -- before the plain `md` extension rule
      },
    },
  })
  vim.lsp.config(M.name, lsp_config())
  vim.lsp.enable(M.name)
  define_commands()
end

return M
