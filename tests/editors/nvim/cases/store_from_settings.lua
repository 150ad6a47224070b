-- e2e: store-in-global-settings
-- The store is only named by `memory_dir` in the global ~/.kin/settings.toml: no KIN_MEMORY_DIR, no
-- memoryDir setting. The plugin has no rules of its own for that file; it learns the root from the
-- server's resolution (`kin-memory info`), so a memory opened there gets the filetype, the client and
-- the server's diagnostics, and the server's `kin.memory.info` agrees.
local T = dofile(vim.env.KIN_NVIM_HARNESS)
local kin = require('kin_memory')

T.run(function()
  T.eq(vim.env.KIN_MEMORY_DIR, nil, 'KIN_MEMORY_DIR in this Neovim')
  T.eq(kin.options.settings.memoryDir, nil, 'the memoryDir setting')
  T.check(T.read(vim.env.HOME .. '/.kin/settings.toml'):find('memory_dir', 1, true), 'the global settings name the store')

  local buf, client = T.open('facts/cache.md')
  local d = T.wait_diag(buf, 'KM201')
  T.eq(d.source, 'kin-memory', 'diagnostic source')
  T.eq(kin.root(), T.store, 'the root the plugin learned')
  T.eq(kin.info().rootSource, 'global settings', 'how the root was found')

  local info = T.exec(client, 'kin.memory.info', vim.empty_dict())
  T.eq(info.root, T.store, 'kin.memory.info root')
  T.eq(info.rootSource, 'global settings', 'kin.memory.info rootSource')
  T.eq(info.settingsFiles[1].scope, 'global', 'first settings file')
  T.eq(info.settingsFiles[1].exists, true, 'the global settings file exists')

  -- The default store is not a memory root here; a project file is no memory either.
  vim.cmd.edit(vim.fn.fnameescape(T.project .. '/notes.md'))
  T.eq(vim.bo.filetype, 'markdown', 'filetype of a project file')
  T.eq(#vim.lsp.get_clients({ bufnr = 0, name = 'kin_memory' }), 0, 'no client on a project file')

  vim.cmd('KinMemoryInfo')
  local n = T.wait(function()
    return T.noted('store: ' .. vim.pesc(T.store) .. ' %(from global settings%)')
  end, 'the :KinMemoryInfo summary')
  T.eq(n.level, vim.log.levels.INFO, 'level of the summary')
end)
