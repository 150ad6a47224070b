-- e2e: no-store-env
-- setup() with a server command of another shape (`python -m kin_memory serve`) and the store named
-- only by the memoryDir setting: the plugin derives `python -m kin_memory info --json
-- --editor-memory-dir DIR` for its startup question, and the root it learns is the server's (from the
-- editor setting). The other command shapes derive as documented.
local T = dofile(vim.env.KIN_NVIM_HARNESS)
local kin = require('kin_memory')
local python = vim.env.KIN_PYTHON

-- During startup, like a user's init.lua would (a second setup() replaces the first one).
kin.setup({ cmd = { python, '-m', 'kin_memory', 'serve' }, settings = { memoryDir = vim.env.KIN_NVIM_STORE } })

T.run(function()
  T.eq(vim.env.KIN_MEMORY_DIR, nil, 'KIN_MEMORY_DIR in this Neovim')
  T.eq(kin.info_command(),
    { python, '-m', 'kin_memory', 'info', '--json', '--editor-memory-dir', vim.env.KIN_NVIM_STORE },
    'the startup question for `python -m kin_memory serve`')

  local buf, client = T.open('facts/cache.md')
  T.wait_diag(buf, 'KM201')
  T.eq(kin.root(), T.store, 'the root the plugin learned')
  T.eq(kin.info().rootSource, 'editor setting', 'how the root was found')
  local info = T.exec(client, 'kin.memory.info', vim.empty_dict())
  T.eq({ info.root, info.rootSource }, { T.store, 'editor setting' }, 'kin.memory.info root and source')
  T.eq(client.config.cmd, { python, '-m', 'kin_memory', 'serve' }, 'the server command in use')

  local saved = kin.options
  local function derived(opts)
    kin.options = vim.tbl_extend('force', { settings = {} }, opts)
    local cmd = kin.info_command()
    kin.options = saved
    return cmd
  end
  T.eq(derived({ cmd = { 'kin-memory', 'serve' } }), { 'kin-memory', 'info', '--json' }, 'default cmd')
  T.eq(derived({ cmd = { '/opt/kin/bin/kin-memory-lsp', '--stdio' } }), { '/opt/kin/bin/kin-memory', 'info', '--json' },
    'kin-memory-lsp')
  T.eq(derived({ cmd = { 'kin-memory', 'serve', '--root', '/r', '--tcp', '--port', '9', '--workspace=w' } }),
    { 'kin-memory', 'info', '--json', '--root', '/r', '--workspace=w' }, '--root and --workspace carried over')
  T.eq(derived({ cmd = { 'my-wrapper' }, info_cmd = { 'my-wrapper', 'info' }, settings = { memoryDir = '~/m' } }),
    { 'my-wrapper', 'info', '--editor-memory-dir', '~/m' }, 'an explicit info_cmd')
  T.eq(derived({ cmd = { 'my-wrapper' } }), nil, 'an unknown shape without info_cmd')
end)
