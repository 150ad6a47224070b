-- :KinMemoryReflect, then `d` in the review buffer: the proposal is discarded and nothing is written
-- (the store is byte for byte as before, the open memory's buffer untouched), the review goes away
-- even when it was the only window, and discarding asks the model nothing.
local T = dofile(vim.env.KIN_NVIM_HARNESS)

local function snapshot()
  local files = {}
  for name, kind in vim.fs.dir(T.store, { depth = 10 }) do
    if kind == 'file' and not name:find('^%.') then
      files[name] = T.read(T.path(name))
    end
  end
  return files
end

T.run(function()
  local fake = T.fake_model({
    { tool_calls = {
      { command = 'create', path = '/memories/episodes/flaky-test.md',
        file_text = '---\ncategory: episodic\n---\n# Flaky test\n\nThe login test failed twice on CI and passed on retry.\n' },
      { command = 'str_replace', path = '/memories/facts/build.md', old_str = 'esbuild', new_str = 'rollup' },
    } },
    { stop = 'Noted the flaky test and the new bundler.' },
  })
  local buf = T.open('facts/build.md')
  local before, shown_before = snapshot(), T.buf_text(buf)
  local transcript = T.project .. '/session.md'
  T.write(transcript, 'user: the login test flaked twice; we moved the build to rollup\n')

  vim.cmd('KinMemoryReflect ' .. vim.fn.fnameescape(transcript))
  local review = T.wait(T.review_buffer, 'the review buffer', 30000)
  local shown = T.buf_text(review)
  T.check(shown:find('+# Flaky test', 1, true) and shown:find('+The frontend builds with rollup', 1, true),
    'the review shows both diffs:\n%s', shown)
  local requests = fake.requests()
  T.eq(requests, 2, 'model requests of the pass')

  -- The user made the review the only window: discarding must not leave it on screen with live keys.
  vim.cmd('only')
  T.press('d')
  T.wait(function()
    return T.noted('proposal discarded')
  end, 'the discard to be reported')
  T.eq(fake.requests(), requests, 'model requests after discarding')
  T.eq(snapshot(), before, 'the store after discarding')
  T.eq(T.buf_text(buf), shown_before, 'the open memory after discarding')
  T.eq(vim.bo[buf].modified, false, "the open memory's 'modified'")
  T.eq(T.review_buffer(), nil, 'the review buffer after discarding')
  local client = vim.lsp.get_clients({ name = 'kin_memory' })[1]
  T.eq(T.exec(client, 'kin.memory.listProposals', vim.empty_dict()).proposals, {}, 'proposals kept after discarding')
  T.log('numbers: 2 model requests for the pass, 0 for the discard; 0 files written')
end)
