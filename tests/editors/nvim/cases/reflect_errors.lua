-- :KinMemoryReflect's failures reach the user as clear errors: a missing transcript is caught before
-- the server is asked; with no reflection provider configured, the server's error is shown and
-- nothing is proposed or written.
local T = dofile(vim.env.KIN_NVIM_HARNESS)

T.run(function()
  T.open('facts/build.md')
  local calls = T.script_select(function()
    return 1
  end)
  local before = vim.fn.readdir(T.store .. '/prefs')

  vim.cmd('KinMemoryReflect ' .. vim.fn.fnameescape(T.project .. '/missing.jsonl'))
  local n = T.wait(function()
    return T.noted('no such transcript')
  end, 'a "no such transcript" error')
  T.eq(n.level, vim.log.levels.ERROR, 'level of the missing-transcript message')

  local transcript = T.project .. '/transcript.md'
  T.write(transcript, 'user: remember that deploys happen on Tuesdays\n')
  vim.cmd('KinMemoryReflect ' .. vim.fn.fnameescape(transcript))
  local err = T.wait(function()
    return T.noted('the reflection failed: ')
  end, 'the server\'s reflect error to be shown', 20000)
  T.eq(err.level, vim.log.levels.ERROR, 'level of the server error')
  T.log('server said:', err.msg)
  T.check(not err.msg:find('kin.memory.', 1, true), 'no wire command name in the message: %s', err.msg)
  T.eq(#calls, 0, 'nothing offered for applying')
  T.eq(vim.fn.bufnr('kin-memory://reflect'), -1, 'no change list shown')
  T.eq(vim.fn.readdir(T.store .. '/prefs'), before, 'nothing written')
end)
