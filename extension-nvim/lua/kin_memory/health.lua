-- :checkhealth kin_memory — whether the server is there and which one, where the store is and how it
-- was found, whether the settings files are valid, the recall index, and whether reflection is
-- configured with its SDK importable by the server's Python. Every ERROR says what to do.
local core = require('kin_memory.core')
local bootstrap = require('kin_memory.bootstrap')

local H = {}

local health = vim.health

local function printable(s)
  return core.printable(core.one_line(s))
end

local SETUP = "require('kin_memory').setup({ … })"

--- `kin-memory info --json` for the configured server, run now (bounded): the table, or nil and why.
local function ask_info(cmd)
  local ok, proc = pcall(vim.system, cmd, { text = true, timeout = 20000 })
  if not ok then
    return nil, printable(proc)
  end
  local out = proc:wait()
  if out.code ~= 0 then
    local first = vim.split(vim.trim(out.stderr or ''), '\n', { plain = true })
    return nil, ('`%s` exited with status %d%s'):format(table.concat(cmd, ' '), out.code,
      first[#first] ~= '' and (': ' .. printable(first[#first])) or '')
  end
  local decoded, info = pcall(vim.json.decode, vim.trim(out.stdout or ''), { luanil = { object = true } })
  if not decoded or type(info) ~= 'table' or type(info.root) ~= 'string' then
    return nil, ('`%s` did not answer with the store facts (an older kin-memory?)'):format(table.concat(cmd, ' '))
  end
  return info
end

--- The Python interpreter that runs the server: `cmd[1]` itself, or the one named by the `#!` line of
--- the `kin-memory` script pip installed. Nil when it cannot be told.
local function server_python(cmd)
  local exe = vim.fn.exepath(cmd[1])
  if exe == '' then
    return nil
  end
  if vim.fs.basename(exe):match('^python') then
    return exe
  end
  local f = io.open(exe, 'rb')
  if not f then
    return nil
  end
  local first = f:read(256) or ''
  f:close()
  local shebang = first:match('^#!([^\n]*)')
  if not shebang then
    return nil
  end
  local env_python = shebang:match('^%s*%S*/env%s+(%S*python[%w.]*)')
  if env_python then
    return vim.fn.exepath(env_python) ~= '' and vim.fn.exepath(env_python) or nil
  end
  return shebang:match('^%s*(%S*python[%w.]*)%s*$')
end

local function check_server()
  health.start('kin-memory: server')
  local cmd = core.options.cmd
  if type(cmd) ~= 'table' or type(cmd[1]) ~= 'string' then
    health.info('`cmd` is not a list of strings: the server command cannot be checked here.')
    return nil
  end
  if vim.fn.executable(cmd[1]) ~= 1 then
    health.error(('the kin-memory server was not found: `%s` is not an executable on PATH.'):format(printable(cmd[1])), {
      'Install kin-memory so that `kin-memory` is on PATH (pip install kin-memory, or pip install . in a checkout).',
      "Or give its full path: require('kin_memory').setup({ cmd = { '/path/to/kin-memory', 'serve' } }).",
    })
    return nil
  end
  health.ok(('server command: `%s` (%s)'):format(printable(table.concat(cmd, ' ')), printable(vim.fn.exepath(cmd[1]))))
  local info_cmd = bootstrap.info_command()
  if not info_cmd then
    health.warn('cannot tell from `cmd` how to ask the server where the store is.',
      { ('Set `info_cmd` in %s, for example info_cmd = { "kin-memory", "info", "--json" }.'):format(SETUP) })
    return nil
  end
  local info, why = ask_info(info_cmd)
  if not info then
    health.error(('the kin-memory server could not be run: %s.'):format(why), {
      'Run that command in a shell to see the whole error; reinstall kin-memory if its package is missing.',
      ('Or point `cmd` at a working kin-memory in %s.'):format(SETUP),
    })
    return nil
  end
  health.ok(('kin-memory %s answers'):format(printable(info.version or '?')))
  return info
end

local ROOT_SOURCES = {
  argument = 'the --root argument in `cmd`',
  KIN_MEMORY_DIR = 'the KIN_MEMORY_DIR environment variable',
  ['editor setting'] = 'settings.memoryDir in setup()',
  ['global settings'] = 'memory_dir in the global settings file',
  default = 'the default location (nothing else names one)',
}

local function check_store(info, running)
  health.start('kin-memory: store')
  local root = printable(info.root)
  health.ok(('store: %s, found through %s'):format(root, ROOT_SOURCES[info.rootSource] or printable(info.rootSource)))
  local st = vim.uv.fs_stat(info.root)
  if not st then
    health.info('the store folder does not exist yet: it is created with the first memory.')
  elseif st.type ~= 'directory' then
    health.error(('%s is not a folder.'):format(root), { 'Point the store at a folder: settings.memoryDir in setup(), '
      .. 'KIN_MEMORY_DIR, or memory_dir in the global settings file.' })
  end
  for _, f in ipairs(type(info.settingsFiles) == 'table' and info.settingsFiles or {}) do
    local what = ('%s settings file %s'):format(printable(f.scope), printable(f.path))
    if not f.exists then
      health.info(what .. ': none (optional)')
    elseif (tonumber(f.problems) or 0) > 0 then
      health.warn(('%s: %d problem(s)'):format(what, f.problems),
        { 'Open it: its diagnostics say what is wrong; until then the defaults apply to those keys.' })
    else
      health.ok(what .. ': valid')
    end
  end
  local idx = type(info.indexState) == 'table' and info.indexState or {}
  if idx.state == 'ready' then
    health.ok(('recall index: ready, %s memories'):format(idx.memories or 0))
  elseif idx.state == 'building' then
    health.info(('recall index: building (%s memories so far)'):format(idx.memories or 0))
  elseif running then
    health.warn('recall index: unavailable: search and hover recall are off.',
      { 'Run :KinMemoryReindex; the server log (' .. require('kin_memory.server').log_file() .. ') says why it is unavailable.' })
  else
    health.info('recall index: the running server builds it (none runs yet: it starts with the first memory file).')
  end
  if info.memoryEnabled == false then
    health.warn('memory is off for agents (memory_enabled = false in the global settings file).',
      { ':KinMemoryHealth, then t, turns it back on.' })
  elseif info.memoryEnabled ~= nil then
    health.ok('memory is on for agents')
  end
end

local SDK = { anthropic = 'anthropic', openai = 'openai' }
local KEY_ENV = { anthropic = 'ANTHROPIC_API_KEY', openai = 'OPENAI_API_KEY' }

local function check_reflection()
  health.start('kin-memory: reflection')
  local r = (core.options.settings or {}).reflection or {}
  if not r.provider or not r.model then
    health.info('not configured (optional). :KinMemoryReflect, :KinMemoryInit and :KinMemoryConsolidate need '
      .. "settings.reflection = { provider = 'anthropic' or 'openai', model = '…' } in setup().")
    return
  end
  if not SDK[r.provider] then
    health.error(('settings.reflection.provider is %q: it must be anthropic or openai.'):format(printable(r.provider)))
    return
  end
  health.ok(('provider %s, model %s%s'):format(r.provider, printable(r.model),
    r.baseUrl and (', at ' .. printable(r.baseUrl)) or ''))
  local key_env = r.apiKeyEnv or KEY_ENV[r.provider]
  if vim.env[key_env] and vim.env[key_env] ~= '' then
    health.ok(('the API key is in %s'):format(key_env))
  else
    health.warn(('%s is not set in this Neovim, so the server has no API key.'):format(printable(key_env)),
      { ('Export %s before starting Neovim, or name another variable as settings.reflection.apiKeyEnv.'):format(
        printable(key_env)) })
  end
  local cmd = core.options.cmd
  local python = type(cmd) == 'table' and type(cmd[1]) == 'string' and server_python(cmd) or nil
  if not python then
    health.info(('cannot tell which Python runs the server, so whether it can import %s is not checked.'):format(
      SDK[r.provider]))
    return
  end
  local out = vim.system({ python, '-c', 'import ' .. SDK[r.provider] }, { text = true, timeout = 20000 }):wait()
  if out.code == 0 then
    health.ok(('the server can import the %s SDK'):format(SDK[r.provider]))
  else
    health.error(('the server cannot import the %s SDK (%s).'):format(SDK[r.provider], printable(python)),
      { ("Install it into the server's environment: %s -m pip install %s"):format(printable(python), SDK[r.provider]) })
  end
end

local function check_client()
  health.start('kin-memory: in this Neovim')
  if vim.fn.has('nvim-0.11') ~= 1 then
    health.error('Neovim 0.11 or newer is needed (vim.lsp.config and vim.lsp.enable).')
  end
  local clients = vim.lsp.get_clients({ name = core.name })
  if #clients == 0 then
    health.info('the language server is not running: it starts when a memory file opens.')
  end
  for _, c in ipairs(clients) do
    local n = vim.tbl_count(c.attached_buffers or {})
    health.ok(('the language server runs (client %d), attached to %d memory buffer(s)'):format(c.id, n))
  end
  health.ok(('code lens: %s'):format(core.options.codelens and 'on' or 'off (codelens = false in setup())'))
end

function H.check()
  local running = #vim.lsp.get_clients({ name = core.name }) > 0
  check_client()
  local info = check_server()
  if info then
    -- The running server's answer has the live index state; the CLI's is the same store otherwise.
    local client = running and vim.lsp.get_clients({ name = core.name })[1] or nil
    if client and client.initialized then
      local answer = client:request_sync('workspace/executeCommand',
        { command = 'kin.memory.info', arguments = { vim.empty_dict() } }, 5000)
      if answer and type(answer.result) == 'table' and answer.result.root then
        info = answer.result
      end
    end
    check_store(info, running)
  end
  check_reflection()
end

return H
