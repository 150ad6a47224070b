-- e2e: open facts/cache.md
-- e2e: open prefs/tone.md
-- `nvim store/facts/cache.md store/prefs/tone.md`: the first memory is loaded during startup, before
-- the plugin's asynchronous question to the server (`kin-memory info`) can have been answered. It is
-- plain markdown without a client until the answer arrives, then gets the client and diagnostics (and
-- stays markdown)
-- without the user doing anything. The second file loads later and is recognised at once.
local T = dofile(vim.env.KIN_NVIM_HARNESS)
local kin = require('kin_memory')

-- This runs during startup (`-S`), after Neovim read its first file argument.
local early = {
  root = kin.root(),
  buf = vim.api.nvim_get_current_buf(),
  name = vim.api.nvim_buf_get_name(0),
  filetype = vim.bo.filetype,
}

T.run(function()
  T.eq(early.root, nil, 'store root known to the plugin during startup')
  T.eq(vim.uv.fs_realpath(early.name), T.path('facts/cache.md'), 'the buffer opened from the command line')
  T.eq(early.filetype, 'markdown', 'its filetype before the answer')

  T.wait_filetype(early.buf, 'facts/cache.md')
  T.wait_client(early.buf, 'facts/cache.md')
  T.wait_diag(early.buf, 'KM201')
  T.eq(kin.root(), T.store, 'the root the plugin learned')

  vim.cmd('next')
  local buf = vim.api.nvim_get_current_buf()
  T.eq(vim.uv.fs_realpath(vim.api.nvim_buf_get_name(buf)), T.path('prefs/tone.md'), 'the second argument')
  T.eq(vim.bo[buf].filetype, 'markdown', 'filetype of a memory opened once the root is known')
  T.wait_client(buf, 'prefs/tone.md')
end)
