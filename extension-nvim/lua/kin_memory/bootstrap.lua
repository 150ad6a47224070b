-- Where the store is before any server runs: setup() asks the configured server's CLI once
-- (`kin-memory info --json`), and :KinMemoryInfo shows the answer (the running server's, once one runs).
local core = require('kin_memory.core')
local server = require('kin_memory.server')

local B = {}

local notify, state, setup_hint = core.notify, core.state, core.setup_hint

local function is_lsp_alias(arg)
  local base = vim.fs.basename(arg)
  return base == 'kin-memory-lsp' or base == 'kin-memory-lsp.exe'
end

--- `kin-memory … info --json` from the part of `cmd` before its `serve` (or `kin-memory-lsp`) at
--- index `i`, keeping the `--root` and `--workspace` given after it.
local function info_from_serve(cmd, i)
  local arg = cmd[i]
  local info = vim.list_slice(cmd, 1, i - 1)
  if arg ~= 'serve' then
    info[#info + 1] = (arg:gsub('%-lsp(%.?%a*)$', '%1')) -- kin-memory-lsp → kin-memory
  end
  vim.list_extend(info, { 'info', '--json' })
  local rest = vim.list_slice(cmd, i + 1)
  local j = 1
  while j <= #rest do
    local a = rest[j]
    if (a == '--root' or a == '--workspace') and rest[j + 1] then
      vim.list_extend(info, { a, rest[j + 1] })
      j = j + 1
    elseif a:match('^%-%-root=') or a:match('^%-%-workspace=') then
      info[#info + 1] = a
    end
    j = j + 1
  end
  return info
end

--- The CLI command that prints the store facts for the configured server: `info_cmd` when given,
--- else `cmd` with its `serve` (or `kin-memory-lsp`) turned into `info --json`, keeping `--root` and
--- `--workspace`. Nil when `cmd` has neither shape (a function, a wrapper of another form).
function B.info_command()
  local opts = core.options
  local cmd
  if type(opts.info_cmd) == 'table' and #opts.info_cmd > 0 then
    cmd = vim.deepcopy(opts.info_cmd)
  elseif type(opts.cmd) == 'table' then
    for i, arg in ipairs(opts.cmd) do
      if type(arg) ~= 'string' then
        return nil
      end
      if arg == 'serve' or is_lsp_alias(arg) then
        cmd = info_from_serve(opts.cmd, i)
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

local function on_info_exit(gen, cmd, out)
  if gen ~= state.generation then
    return
  end
  local stderr = vim.trim(out.stderr or '')
  if out.code == 0 then
    local ok, info = pcall(vim.json.decode, vim.trim(out.stdout or ''), { luanil = { object = true } })
    if ok and server.learn(info) then
      return
    end
    fail(gen, ('%s did not answer with the store\'s location: the installed kin-memory is too old for this '
      .. 'plugin, or `cmd` runs something else. Upgrade kin-memory, or set `info_cmd` in %s. Memory files '
      .. 'are not recognised until then.'):format(shown(cmd), setup_hint('info_cmd')), out.stdout)
  elseif out.code == 124 and out.signal ~= 0 then
    fail(gen, ('%s did not answer within %d s, so the memory store is not known and memory files are not '
      .. 'recognised. Run that command in a shell to see why, or fix `cmd` in %s.'):format(shown(cmd),
      math.floor(core.options.info_timeout_ms / 1000), setup_hint()), stderr)
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
-- server's `kin.memory.info` refreshes the answer (see the LspAttach handler in setup()).
function B.bootstrap()
  state.generation = state.generation + 1
  state.info, state.failure = nil, nil
  local gen = state.generation
  local cmd = B.info_command()
  if not cmd then
    fail(gen, ('cannot tell from `cmd` how to ask the kin-memory server where the memory store is. Set '
      .. "`info_cmd`, for example require('kin_memory').setup({ info_cmd = { 'kin-memory', 'info', '--json' } }). "
      .. 'Memory files are not recognised until then.'))
    return
  end
  if vim.fn.executable(cmd[1]) ~= 1 then
    fail(gen, core.not_found(cmd[1]) .. ' Memory files are not recognised until then.')
    return
  end
  local ok, err = pcall(vim.system, cmd, { text = true, timeout = core.options.info_timeout_ms }, function(out)
    vim.schedule(function()
      on_info_exit(gen, cmd, out)
    end)
  end)
  if not ok then
    fail(gen, ('the kin-memory server could not be started (%s). Check `cmd` in %s. Memory files are not '
      .. 'recognised until then.'):format(tostring(err):gsub('%s+$', ''), setup_hint()))
  end
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

--- The answer on one line, for a command line that shows one: store, index, memory on/off, version
--- (:checkhealth kin_memory lists the settings files).
local function info_line(info)
  local parts = { ('store: %s (from %s)'):format(vim.fn.fnamemodify(info.root, ':~'), info.rootSource or '?') }
  if type(info.indexState) == 'table' then
    parts[#parts + 1] = ('index %s, %s memories'):format(info.indexState.state, info.indexState.memories)
  end
  if info.memoryEnabled ~= nil then
    parts[#parts + 1] = 'memory ' .. (info.memoryEnabled and 'on' or 'off')
  end
  parts[#parts + 1] = 'version ' .. (info.version or '?')
  return table.concat(parts, ' · ')
end

--- :KinMemoryInfo: where the store is and how the server found it, its settings files and index.
--- Asks the running server; before one runs, shows the bootstrap's answer.
function B.show_info()
  local client = server.current_client()
  if client and client.initialized and not client:is_stopped() then
    server.execute('kin.memory.info', {}, function(result)
      if not server.learn(result) then
        notify('the server did not say where the memory store is; see :checkhealth kin_memory.', vim.log.levels.ERROR)
        return
      end
      notify(table.concat(info_lines(result), '\n'), nil, info_line(result))
    end)
  elseif state.info then
    notify(table.concat(info_lines(state.info), '\n'), nil, info_line(state.info))
  elseif state.failure then
    notify(state.failure, vim.log.levels.ERROR)
  else
    notify('the kin-memory server has not answered yet; try again in a moment.', vim.log.levels.WARN)
  end
end

return B
