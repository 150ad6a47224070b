-- :KinMemoryReflect without a file takes the newest Claude Code session of this workspace (as
-- `kin-memory reflect --latest`), and the review says what reading it left out; nothing is written before
-- the user applies.
local T = dofile(vim.env.KIN_NVIM_HARNESS)

T.run(function()
  local fake = T.fake_model({ { stop = 'Nothing durable in this session.' } })
  local workspace = vim.uv.fs_realpath(T.project)
  local folder = vim.env.HOME .. '/.claude/projects/' .. workspace:gsub('[/.]', '-')
  vim.fn.mkdir(folder, 'p')
  local line = vim.json.encode({ type = 'user', sessionId = 's', uuid = 'u1', cwd = workspace,
    message = { role = 'user', content = 'THE-NEWEST-SESSION-MARKER: remember nothing' } })
  T.write(folder .. '/older.jsonl', vim.json.encode({ type = 'user', uuid = 'o', cwd = workspace,
    message = { role = 'user', content = 'an older session' } }) .. '\n')
  vim.uv.fs_utime(folder .. '/older.jsonl', 1000000, 1000000)
  T.write(folder .. '/newest.jsonl', line .. '\n')

  vim.cmd('KinMemoryReflect')
  local note = T.wait(function()
    return T.noted('reflection proposes no changes')
  end, 'the reflection over the newest session', 30000)
  T.check(T.noted('the newest Claude Code session: .*newest%.jsonl'), 'the newest session was named')
  T.log('reported:', note.msg)
  T.eq(fake.requests(), 1, 'model requests')
end)
