-- The review buffer's `c` applies only the change under the cursor and keeps the others listed for
-- review; `d` then discards the rest, which is never written. No key asks the model anything.
local T = dofile(vim.env.KIN_NVIM_HARNESS)

local CREATED, EDITED = '/memories/episodes/release-freeze.md', '/memories/prefs/tone.md'
local NEW_TEXT = '---\ncategory: episodic\n---\n# Release freeze\n\nNo releases during the audit week.\n'

T.run(function()
  local fake = T.fake_model({
    { tool_calls = {
      { command = 'str_replace', path = EDITED, old_str = 'no emoji.', new_str = 'no emoji, ever.' },
      { command = 'create', path = CREATED, file_text = NEW_TEXT },
    } },
    { stop = 'Recorded the freeze and sharpened the tone preference.' },
  })
  local created, edited = T.path('episodes/release-freeze.md'), T.path('prefs/tone.md')
  local expected = T.read(edited):gsub('no emoji%.', 'no emoji, ever.')
  local buf = T.open('prefs/tone.md')
  local transcript = T.project .. '/session.md'
  T.write(transcript, 'user: no releases during the audit week, and really no emoji\n')

  vim.cmd('KinMemoryReflect ' .. vim.fn.fnameescape(transcript))
  local review = T.wait(T.review_buffer, 'the review buffer', 30000)
  local requests = fake.requests()
  -- The cursor on a line of the edit's diff (not its heading): that change is the one applied.
  local lines = vim.api.nvim_buf_get_lines(review, 0, -1, false)
  local row
  for i, l in ipairs(lines) do
    if l == '+Keep answers short; no emoji, ever.' then
      row = i
    end
  end
  T.check(row, 'the review shows the edit:\n%s', table.concat(lines, '\n'))
  vim.api.nvim_win_set_cursor(0, { row, 0 })
  T.press('c')
  local note = T.wait(function()
    return T.noted('applied %d+ of %d+')
  end, 'the report of the applied change')
  T.log('reported:', note.msg)
  T.check(note.msg:find('applied 1 of 1', 1, true) and note.msg:find('1 change(s) still to review', 1, true),
    'the report: %q', note.msg)
  T.eq(T.read(edited), expected, 'the applied edit on disk')
  T.eq(vim.uv.fs_stat(created), nil, 'the change not chosen is not written')
  T.wait(function()
    return T.buf_text(buf) == expected
  end, 'the open buffer of prefs/tone.md to reload')
  T.eq(vim.bo[buf].modified, false, "the open memory's 'modified'")

  -- The review stays, listing only the create.
  T.eq(T.review_buffer(), review, 'the review buffer after applying one change')
  local rest = T.buf_text(review)
  T.check(rest:find('create ' .. CREATED, 1, true) and not rest:find('edit ' .. EDITED, 1, true),
    'the review lists what is left:\n%s', rest)
  -- A change keeps its number for the proposal's life: the create was ### 2 and stays ### 2.
  T.check(rest:find('### 2. create ' .. CREATED, 1, true), 'the create keeps its number:\n%s', rest)
  vim.api.nvim_set_current_buf(review)
  T.press('d')
  T.wait(function()
    return T.noted('proposal discarded')
  end, 'the discard of the rest')
  T.eq(vim.uv.fs_stat(created), nil, 'the discarded change is not written')
  T.eq(T.read(edited), expected, 'the applied edit stays')
  T.eq(T.review_buffer(), nil, 'the review buffer after discarding')
  T.eq(fake.requests(), requests, 'model requests after applying and discarding')
end)
