-- The language server from Neovim's side: its configuration, attaching it by path to memory buffers,
-- the running client, :KinMemoryRestart, the code lens, and `execute` (one custom command), through
-- which every feature module talks to it. It also takes an `info` answer as the truth about the store.
local core = require('kin_memory.core')

local S = {}

local notify, state = core.notify, core.state

--- Attach the client to loaded memory buffers that have none: those opened before the root was known
--- (even files given on Neovim's command line), or all of them after a restart. The filetype is never
--- touched: a memory stays `markdown` (or whatever the user gave it).
function S.recheck_buffers()
  if not core.root() then
    return
  end
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) and core.is_memory_buffer(buf) then
      S.attach(buf)
    end
  end
end

--- Take an `info` answer (from the CLI or the server) as the truth about the store.
function S.learn(info)
  if type(info) ~= 'table' or type(info.root) ~= 'string' or info.root == '' then
    return false
  end
  local changed = core.root() ~= info.root
  state.info = info
  state.failure = nil
  if changed then
    S.recheck_buffers()
  end
  return true
end

-- ---------------------------------------------------------------------------------------------
-- The active workspace the server sees: the project Neovim was started in (git top level of the
-- working directory, else the directory). Inside the store that is the operator's unfiltered view.

local function workspace_dir()
  local cwd = core.uv.cwd()
  return vim.fs.root(cwd, '.git') or cwd
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
  local how = signal ~= 0 and ('killed by signal %d'):format(signal) or ('exit status %d'):format(code)
  vim.schedule(function()
    -- Plain Neovim has no :LspLog: the server's own log file, and :checkhealth, are always there.
    local log = vim.fn.fnamemodify(S.log_file(), ':~')
    local brief = signal ~= 0 and ('signal %d'):format(signal) or ('exit %d'):format(code)
    notify(('the language server stopped (%s); :KinMemoryRestart or any command starts it again. Its log: %s')
      :format(how, log), vim.log.levels.ERROR,
      ('the server stopped (%s); any command restarts it. Log: %s'):format(brief, log))
    if core.builtin_notify() then
      -- Neovim says "Client kin_memory quit with exit code … Check log for errors: …" next, in a line
      -- too long for most command lines (a hit-enter prompt): this one message says it instead.
      local builtin, prefix, wrapper = vim.notify, ('Client %s quit with exit code'):format(core.name), nil
      local function restore()
        if vim.notify == wrapper then -- not when something else has replaced it since
          vim.notify = builtin
        end
      end
      wrapper = function(msg, ...)
        if type(msg) ~= 'string' or msg:sub(1, #prefix) ~= prefix then
          return builtin(msg, ...)
        end
        restore()
      end
      vim.notify = wrapper
      vim.defer_fn(restore, 1000)
    end
  end)
end

--- The server's own log file (`kin-memory serve` keeps it in its cache folder).
function S.log_file()
  local cache = vim.env.XDG_CACHE_HOME
  if not cache or cache == '' then
    cache = vim.fs.joinpath(vim.env.HOME or vim.fn.expand('~'), '.cache')
  end
  return vim.fs.joinpath(cache, 'kin-memory', 'server.log')
end

function S.lsp_config()
  local settings = vim.deepcopy(core.options.settings)
  return {
    cmd = core.options.cmd,
    -- Attached by path, not by a filetype of its own: memory files stay `markdown`, so the user's
    -- markdown setup (FileType autocmds, marksman, markdown-oxide, syntax) applies to them unchanged.
    filetypes = { 'markdown' },
    root_dir = function(buf, on_dir)
      if core.is_memory_buffer(buf) then
        on_dir(workspace_dir())
      end
    end,
    -- One server per store: memory files live outside any project, so buffers opened from another
    -- working directory share the client instead of starting a second indexer on the same root.
    reuse_client = function(client, config)
      return client.name == config.name and not client:is_stopped()
    end,
    on_exit = on_server_exit,
    -- The server asks for fresh lenses when what they show changes under an unchanged buffer (Mark
    -- reviewed, a re-stamp, a write from outside): Neovim has no handler of its own for that request.
    capabilities = { workspace = { codeLens = { refreshSupport = core.options.codelens and true or false } } },
    handlers = {
      ['workspace/codeLens/refresh'] = function()
        vim.schedule(S.refresh_lenses)
        return vim.NIL
      end,
    },
    settings = { kinMemory = settings },
    init_options = { kinMemory = settings },
  }
end

--- The configuration to start a client with: the user's `vim.lsp.config` (or ours), for this workspace.
local function start_config()
  local config = vim.deepcopy(vim.lsp.config[core.name] or S.lsp_config())
  config.name = core.name
  config.root_dir = workspace_dir()
  return config
end

--- Attach the kin-memory client to memory buffer `buf` (starting the server when none runs).
function S.attach(buf)
  for _, c in ipairs(vim.lsp.get_clients({ bufnr = buf, name = core.name })) do
    if not c:is_stopped() then
      return -- a client still being stopped (a restart) does not count
    end
  end
  local config = start_config()
  if type(config.cmd) == 'table' and vim.fn.executable(config.cmd[1]) ~= 1 then
    return -- the bootstrap already said so
  end
  vim.lsp.start(config, { bufnr = buf, silent = true })
end

-- ---------------------------------------------------------------------------------------------
-- Talking to the server.

--- The client of the current buffer, else any kin-memory client, else nil (nothing is started).
function S.current_client()
  local buf_clients = vim.lsp.get_clients({ bufnr = 0, name = core.name })
  if buf_clients[1] then
    return buf_clients[1]
  end
  return vim.lsp.get_clients({ name = core.name })[1]
end

--- The running kin-memory client, started (without attaching a buffer) when none runs yet.
function S.client()
  local client = S.current_client()
  local fresh = false
  if not client then
    local config = start_config()
    local cmd = config.cmd
    if type(cmd) == 'table' and vim.fn.executable(cmd[1]) ~= 1 then
      notify(core.not_found(cmd[1]), vim.log.levels.ERROR)
      return nil
    end
    local id = vim.lsp.start(config, { attach = false, silent = true })
    client = id and vim.lsp.get_client_by_id(id)
    if not client then
      notify('the language server did not start; see :checkhealth kin_memory.', vim.log.levels.ERROR)
      return nil
    end
    fresh = true
  end
  if not client.initialized then
    vim.wait(core.options.start_timeout_ms, function()
      return client.initialized or client:is_stopped()
    end, 20)
  end
  if not client.initialized or client:is_stopped() then
    notify('the language server did not initialize; see :checkhealth kin_memory.', vim.log.levels.ERROR)
    return nil
  end
  S.refresh_info(client)
  if fresh then -- back after a crash: every open memory buffer is attached again (lens, diagnostics)
    S.recheck_buffers()
  end
  return client
end

local refreshed = {} -- client id → true once kin.memory.info was asked

--- Ask the running server where the store is (`kin.memory.info`), once per client: its answer
--- replaces the bootstrap's (same resolution, and it follows the settings the client sent).
function S.refresh_info(client)
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
      if err or not S.learn(result) then
        vim.lsp.log.warn('kin.memory.info gave no store root: ' .. (err and core.error_text(err) or vim.inspect(result)))
      end
    end)
end

--- The memory buffers the kin-memory client is attached to.
local function attached_buffers()
  local bufs = {}
  for _, client in ipairs(vim.lsp.get_clients({ name = core.name })) do
    for buf in pairs(client.attached_buffers or {}) do
      if vim.api.nvim_buf_is_loaded(buf) then
        bufs[#bufs + 1] = buf
      end
    end
  end
  return bufs
end

--- Ask for the code lens of every attached memory again (after a command, the store may have changed).
function S.refresh_lenses()
  if not core.options.codelens then
    return
  end
  for _, buf in ipairs(attached_buffers()) do
    pcall(vim.lsp.codelens.refresh, { bufnr = buf })
  end
end

--- Code lens on a memory buffer the client just attached to, kept fresh as the buffer is edited.
function S.enable_lenses(buf, group)
  if not core.options.codelens then
    return
  end
  pcall(vim.lsp.codelens.refresh, { bufnr = buf })
  vim.api.nvim_clear_autocmds({ group = group, buffer = buf })
  vim.api.nvim_create_autocmd({ 'BufEnter', 'InsertLeave', 'BufWritePost', 'FocusGained' }, {
    group = group,
    buffer = buf,
    callback = function()
      if #vim.lsp.get_clients({ bufnr = buf, name = core.name }) > 0 then
        pcall(vim.lsp.codelens.refresh, { bufnr = buf })
      end
    end,
  })
end

--- :KinMemoryRestart: stop the server (if it still runs) and start it again for every memory buffer.
function S.restart()
  local bufs = {}
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) and core.is_memory_buffer(buf) then
      bufs[#bufs + 1] = buf
    end
  end
  local old = vim.lsp.get_clients({ name = core.name })
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
      S.attach(buf)
    end
  elseif not S.client() then
    return
  end
  notify('the language server restarted.')
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
  ['kin.memory.setMemoryEnabled'] = 'turning memory on or off', ['kin.memory.sync'] = 'the sync',
  ['kin.memory.resolveConflict'] = 'settling the conflict', ['kin.memory.conflictVersions'] = 'reading both versions',
}

function S.doing(command)
  return DOING[command] or ('the command ' .. command)
end

--- Run one `workspace/executeCommand` with a single JSON object argument; `callback(result)` runs
--- only on success, a server error becomes an error notification (or goes to `on_error(err)`, for
--- commands whose errors are sentences to show as they are).
function S.execute(command, arg, callback, on_error)
  local client = S.client()
  if not client then
    return false
  end
  if arg == nil or (type(arg) == 'table' and next(arg) == nil) then
    arg = vim.empty_dict() -- `{}` must reach the server as an object, not an empty list
  end
  local params = { command = command, arguments = { arg } }
  local ok = client:request('workspace/executeCommand', params, function(err, result)
    if err and on_error then
      on_error(err)
      return
    elseif err then
      notify(('%s failed: %s'):format(S.doing(command), core.printable(core.one_line(core.error_text(err)))),
        vim.log.levels.ERROR)
      return
    end
    if callback then
      callback(result)
    end
    S.refresh_lenses() -- a command may have changed what a lens says (reviewed, re-stamped, moved)
  end)
  if not ok then
    notify(('could not reach the server for %s (did it stop?). :KinMemoryRestart starts it again.'):format(S.doing(command)),
      vim.log.levels.ERROR)
  end
  return ok
end

return S
