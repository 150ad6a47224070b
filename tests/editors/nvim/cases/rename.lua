-- :KinMemoryRename moves the current memory through the memory tool: MEMORY.md's link and two other
-- memories' /memories/ references follow it, and the buffer shows the file at its new path.
local T = dofile(vim.env.KIN_NVIM_HARNESS)

T.run(function()
  T.write(T.path('facts/cache.md'), T.read(T.path('facts/cache.md')) .. '\nBackups are described in /memories/facts/backups.md.\n')
  T.write(T.path('prefs/tone.md'), T.read(T.path('prefs/tone.md')) .. '\nSee /memories/facts/backups.md for retention.\n')
  local buf = T.open('facts/backups.md')
  T.wait_client(buf, 'facts/backups.md')
  vim.cmd('KinMemoryRename infra/backups')
  T.wait(function()
    return T.noted('renamed /memories/facts/backups.md to /memories/infra/backups.md')
  end, 'the rename to report')
  T.eq(vim.api.nvim_buf_get_name(0), T.path('infra/backups.md'), 'the buffer shows the new path')
  T.eq(vim.uv.fs_stat(T.path('facts/backups.md')), nil, 'the old file is gone')
  T.check(T.read(T.path('MEMORY.md')):find('- [Backups](infra/backups.md)', 1, true), 'MEMORY.md: %s', T.read(T.path('MEMORY.md')))
  for _, rel in ipairs({ 'facts/cache.md', 'prefs/tone.md' }) do
    local text = T.read(T.path(rel))
    T.check(text:find('/memories/infra/backups.md', 1, true) and not text:find('/memories/facts/backups.md', 1, true),
      '%s: %s', rel, text)
  end
end)
