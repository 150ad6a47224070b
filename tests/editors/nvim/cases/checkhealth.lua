-- :checkhealth kin_memory on a good setup: the server and its version, the store and how it was found,
-- the settings files, the index, reflection with its SDK importable by the server's Python, and no
-- ERROR anywhere. Then with a server command that is not installed: one ERROR that names the fix.
local T = dofile(vim.env.KIN_NVIM_HARNESS)
local kin = require('kin_memory')

local function checkhealth()
  vim.cmd('checkhealth kin_memory')
  local buf = vim.api.nvim_get_current_buf()
  T.eq(vim.bo[buf].filetype, 'checkhealth', 'the checkhealth buffer')
  local text = table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), '\n')
  vim.cmd('tabclose')
  return text
end

local function has(text, needle)
  T.check(text:find(needle, 1, true), 'checkhealth says %q:\n%s', needle, text)
end

T.run(function()
  vim.env.KIN_E2E_HEALTH_KEY = 'not-a-real-key'
  T.setup({ reflection = { provider = 'openai', model = 'e2e-model', apiKeyEnv = 'KIN_E2E_HEALTH_KEY' } })
  T.open('facts/build.md')
  local info = T.wait(function()
    local info = T.exec(vim.lsp.get_clients({ name = 'kin_memory' })[1], 'kin.memory.info', vim.empty_dict())
    return info.indexState.state == 'ready' and info.indexState.memories >= 8 and info
  end, 'the recall index to be ready with the fixture memories')

  local good = checkhealth()
  T.log(good)
  T.check(not good:find('ERROR', 1, true), 'no ERROR on a good setup:\n%s', good)
  T.check(not good:find('WARNING', 1, true), 'no WARNING on a good setup:\n%s', good)
  has(good, 'kin-memory 0.1.0 answers')
  has(good, ('store: %s, found through the KIN_MEMORY_DIR environment variable'):format(T.store))
  has(good, 'global settings file')
  has(good, ('recall index: ready, %d memories'):format(info.indexState.memories))
  has(good, 'memory is on for agents')
  has(good, 'provider openai, model e2e-model')
  has(good, 'the API key is in KIN_E2E_HEALTH_KEY')
  has(good, 'the server can import the openai SDK')
  has(good, 'attached to 1 memory buffer(s)')
  has(good, 'code lens: on')
  T.check(not good:find('not-a-real-key', 1, true), 'the key itself is never shown')

  -- The same Neovim, now set up with a server that is not installed.
  kin.setup({ cmd = { 'kin-memory-not-installed', 'serve' } })
  local bad = checkhealth()
  T.log(bad)
  local errors = {}
  for line in bad:gmatch('[^\n]+') do
    if line:find('ERROR', 1, true) then
      errors[#errors + 1] = line
    end
  end
  T.eq(#errors, 1, 'ERROR lines with the server missing')
  T.check(errors[1]:find('`kin-memory-not-installed` is not an executable on PATH', 1, true),
    'the ERROR names the missing command: %s', errors[1])
  has(bad, 'Install kin-memory so that `kin-memory` is on PATH')
  has(bad, "Or give its full path: require('kin_memory').setup({ cmd = { '/path/to/kin-memory', 'serve' } })")
  T.check(not bad:find('kinMemory.', 1, true), 'no VS Code setting names:\n%s', bad)
end)
