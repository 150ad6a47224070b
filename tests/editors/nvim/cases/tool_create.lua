-- The memory tool through workspace/executeCommand: create writes the file on disk with the write-time
-- rules (missing category -> episodic, stamped with the active workspace), search finds it, and
-- a traversal attempt is refused without touching the disk.
local T = dofile(vim.env.KIN_NVIM_HARNESS)

T.run(function()
  local _, client = T.open('facts/build.md')
  local path = T.path('episodes/nvim-created.md')
  T.check(not vim.uv.fs_stat(path), 'fixture: %s must not exist yet', path)

  local result, err = T.exec(client, 'kin.memory.tool', {
    command = 'create',
    path = '/memories/episodes/nvim-created.md',
    file_text = '# Created from Neovim\n\nThe release train moved to Tuesdays.\n',
  })
  T.check(not err, 'kin.memory.tool create: server error %s', vim.inspect(err))
  T.eq(result.isError, false, 'isError (content: ' .. tostring(result.content) .. ')')
  T.check(type(result.content) == 'string' and result.content:find('/memories/episodes/nvim-created.md', 1, true),
    'the tool result names the virtual path: %q', tostring(result.content))

  local text = T.read(path)
  T.check(text, 'the created file %s is on disk', path)
  T.check(text:find('^%-%-%-\n'), 'frontmatter added: %q', text)
  T.check(text:find('\ncategory: episodic\n', 1, true), 'missing category written as episodic: %q', text)
  T.check(text:find('\nworkspace: ' .. T.project .. '\n', 1, true), 'stamped with the active workspace %s: %q', T.project, text)
  T.check(text:find('# Created from Neovim\n\nThe release train moved to Tuesdays.\n', 1, true), 'body kept: %q', text)

  -- The new memory is searchable right away (the server indexed its own write).
  T.wait(function()
    local r = T.exec(client, 'kin.memory.search', { query = 'Tuesdays' })
    return r and r.results[1] and r.results[1].path == '/memories/episodes/nvim-created.md'
  end, 'the created memory to be found by search')

  -- Bad input: a path escaping the store is refused, nothing is written outside it.
  local bad = T.exec(client, 'kin.memory.tool', { command = 'create', path = '/memories/../escape.md', file_text = 'x' })
  T.eq(bad.isError, true, 'isError for a traversal path')
  T.check(not vim.uv.fs_stat(vim.fs.dirname(T.store) .. '/escape.md'), 'nothing written outside the store')
  T.check(not tostring(bad.content):find(T.store, 1, true), 'the error does not reveal the host path: %q', bad.content)

  local missing, merr = T.exec(client, 'kin.memory.tool', { path = '/memories/x.md' })
  T.check(merr and merr.message:find('command'), 'a call without `command` is an error naming it: %s',
    vim.inspect(merr or missing))
end)
