-- e2e: broken-server
-- The configured server cannot run (here: a kin-memory whose Python package is gone). The user gets
-- exactly one ERROR notification, a sentence that says how to fix the setup, with no Python exception
-- and no Lua traceback; memory files stay plain markdown. A server command that does not exist at all
-- gets its own clear sentence.
local T = dofile(vim.env.KIN_NVIM_HARNESS)
local kin = require('kin_memory')

local function clean(msg)
  for _, bad in ipairs({ 'Traceback', 'Error:', 'Exception', 'stack traceback', 'kinMemory%.' }) do
    T.check(not msg:find(bad), 'message shows %q: %s', bad, msg)
  end
end

T.run(function()
  local n = T.wait(function()
    return T.noted('could not be run')
  end, 'a notification that the server could not be run')
  T.log('said:', n.msg)
  T.eq(n.level, vim.log.levels.ERROR, 'level')
  T.check(n.msg:find("require('kin_memory').setup", 1, true) and n.msg:find('`cmd`', 1, true),
    'the message names the setup option to fix: %s', n.msg)
  T.check(n.msg:find('kin-memory info --json', 1, true), 'the message shows the command that failed: %s', n.msg)
  clean(n.msg)

  vim.cmd.edit(vim.fn.fnameescape(T.path('facts/cache.md')))
  vim.wait(500)
  T.eq(vim.bo.filetype, 'markdown', 'filetype of a memory while the server is broken')
  T.eq(kin.root(), nil, 'store root')
  T.eq(#vim.lsp.get_clients({ name = 'kin_memory' }), 0, 'kin_memory clients')
  T.eq(#T.notes, 1, 'notifications so far (one)')

  -- Asking for the root later repeats the same fix, not a traceback.
  vim.cmd('KinMemoryReviewed')
  T.eq(#T.notes, 2, 'notifications after :KinMemoryReviewed')
  T.eq(T.notes[2].msg, n.msg, ':KinMemoryReviewed repeats the setup fix')

  -- A command that is not installed at all.
  kin.setup({ cmd = { 'kin-memory-not-installed', 'serve' } })
  vim.wait(300)
  T.eq(#T.notes, 3, 'notifications after setup with a missing command (one more)')
  local missing = T.notes[3]
  T.log('said:', missing.msg)
  T.eq(missing.level, vim.log.levels.ERROR, 'level')
  T.check(missing.msg:find('was not found', 1, true) and missing.msg:find('kin-memory-not-installed', 1, true)
    and missing.msg:find('PATH', 1, true), 'the message names the missing command and PATH: %s', missing.msg)
  clean(missing.msg)
end)
