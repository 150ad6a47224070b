-- :KinMemoryReviewed touches a stale fact (mtime only): KM400 goes away, the text and the buffer stay
-- as they were. On an expired episode, or a buffer that is not a memory, it refuses with a clear message.
local T = dofile(vim.env.KIN_NVIM_HARNESS)

T.run(function()
  local path = T.path('facts/old-runbook.md')
  local before = T.read(path)
  local buf = T.open('facts/old-runbook.md')
  T.wait_diag(buf, 'KM400')
  local t0 = os.time()

  vim.cmd('KinMemoryReviewed')
  T.wait(function()
    return T.noted('marked reviewed: old%-runbook.md')
  end, 'the "marked reviewed" notification')
  T.wait(function()
    return #T.diags(buf, 'KM400') == 0
  end, function()
    return 'KM400 to clear (has: ' .. table.concat(T.codes(buf), ', ') .. ')'
  end)
  T.check(vim.uv.fs_stat(path).mtime.sec >= t0 - 1, 'the mtime moved to now')
  T.eq(T.read(path), before, 'file content after marking reviewed')
  T.eq(vim.bo[buf].modified, false, 'buffer not modified')
  T.eq(vim.api.nvim_buf_get_lines(buf, 0, -1, false), vim.split(before, '\n', { plain = true, trimempty = true }),
    'buffer text')

  -- An expired episode: marking it would bring it back to life; refused, the file untouched.
  local episode = T.path('episodes/ancient-incident.md')
  local mtime = vim.uv.fs_stat(episode).mtime.sec
  T.open('episodes/ancient-incident.md')
  vim.cmd('KinMemoryReviewed')
  T.wait(function()
    local n = T.noted('Only project facts can be marked reviewed')
    return n and n.level == vim.log.levels.ERROR and n.msg:find('ancient%-incident%.md is an episodic memory')
  end, 'an error notification refusing to mark an episode reviewed')
  T.eq(vim.uv.fs_stat(episode).mtime.sec, mtime, 'the episode\'s mtime')

  -- Not a memory: a file of the project.
  vim.cmd.edit(vim.fn.fnameescape(T.project .. '/notes.md'))
  vim.cmd('KinMemoryReviewed')
  T.wait(function()
    local n = T.noted('not a memory file')
    return n and n.level == vim.log.levels.ERROR
  end, 'an error notification for a buffer outside the store')
end)
