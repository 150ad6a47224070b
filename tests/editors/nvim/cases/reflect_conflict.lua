-- :KinMemoryReflect, then the agent rewrites one of the proposal's targets on disk while the review is
-- open: `a` applies the other change, reports the changed one as a conflict (a warning) and leaves it as
-- the agent wrote it; its open buffer reloads to that text, unmodified. Applying asks the model nothing.
local T = dofile(vim.env.KIN_NVIM_HARNESS)

local CREATED, EDITED = '/memories/facts/ci-cache.md', '/memories/facts/deploy-topology.md'
local NEW_TEXT = '---\ncategory: project-fact\nworkspace: global\n---\n# CI cache\n\nThe CI cache is keyed by the lockfile hash.\n'

T.run(function()
  local fake = T.fake_model({
    { tool_calls = {
      { command = 'str_replace', path = EDITED, old_str = 'three nodes', new_str = 'four nodes' },
      { command = 'create', path = CREATED, file_text = NEW_TEXT },
    } },
    { stop = 'Updated the node count and recorded the CI cache key.' },
    { tool_calls = { { command = 'str_replace', path = '/memories/prefs/tone.md', old_str = 'short', new_str = 'brief' } } },
    { stop = 'Reworded the tone preference.' },
  })
  local target, created = T.path('facts/deploy-topology.md'), T.path('facts/ci-cache.md')
  local buf = T.open('facts/deploy-topology.md')
  local transcript = T.project .. '/session.md'
  T.write(transcript, 'user: we run four API nodes now; the CI cache is keyed by the lockfile\n')

  vim.cmd('KinMemoryReflect ' .. vim.fn.fnameescape(transcript))
  local review = T.wait(T.review_buffer, 'the review buffer', 30000)
  T.check(T.buf_text(review):find('+The API runs on four nodes', 1, true), 'the review shows the edit:\n%s', T.buf_text(review))
  local requests = fake.requests()

  -- The agent rewrites the memory on disk while the user reads the review.
  local theirs = T.read(target):gsub('three nodes', 'five nodes')
  T.write(target, theirs)

  vim.api.nvim_set_current_buf(review)
  T.press('a')
  local note = T.wait(function()
    return T.noted('applied %d+ of %d+')
  end, 'the apply report')
  T.log('reported:', note.msg)
  T.check(note.msg:find('applied 1 of 2', 1, true), 'the report counts one applied change: %q', note.msg)
  T.check(note.msg:find('not applied: ' .. EDITED .. ' (', 1, true), 'the report names the conflict: %q', note.msg)
  T.eq(note.level, vim.log.levels.WARN, 'level of a report with a conflict')
  T.eq(fake.requests(), requests, 'model requests after applying')
  T.eq(T.read(target), theirs, 'the conflicting memory on disk (left as the agent wrote it)')
  T.eq(T.read(created), NEW_TEXT, 'the other change on disk')
  T.wait(function()
    return T.buf_text(buf) == theirs
  end, function()
    return 'the open buffer to show the file on disk (it shows ' .. vim.inspect(T.buf_text(buf)) .. ')'
  end)
  T.eq(vim.bo[buf].modified, false, "the open memory's 'modified'")
  T.log(('numbers: %d model requests for the pass, 0 for the apply; 1 file written; 1 conflict'):format(requests))

  -- A second pass; while its review is open the user edits the target in Neovim and does not save.
  -- Applying must not overwrite the file under the user's unsaved edit: a conflict, file and buffer kept.
  local tone = T.path('prefs/tone.md')
  local tone_disk = T.read(tone)
  local tbuf = T.open('prefs/tone.md')
  vim.cmd('KinMemoryReflect ' .. vim.fn.fnameescape(transcript))
  T.wait(function()
    local b = T.review_buffer()
    return b and T.buf_text(b):find('+Keep answers brief', 1, true) and b
  end, 'the second review', 30000)
  local review2 = T.review_buffer()
  vim.api.nvim_buf_set_lines(tbuf, -1, -1, false, { '', 'Typed, not saved.' })
  local typed = T.buf_text(tbuf)
  vim.wait(400) -- past the client's debounce: the server has the buffer's text
  requests = fake.requests()
  T.notes = {}
  vim.api.nvim_set_current_buf(review2)
  T.press('a')
  note = T.wait(function()
    return T.noted('applied %d+ of %d+')
  end, 'the second apply report')
  T.log('reported:', note.msg)
  T.check(note.msg:find('applied 0 of 1', 1, true) and note.msg:find('not applied: /memories/prefs/tone.md (', 1, true),
    'the report names the unsaved memory: %q', note.msg)
  T.eq(T.read(tone), tone_disk, 'the file under an unsaved edit on disk')
  T.eq(T.buf_text(tbuf), typed, 'the unsaved edit in the buffer')
  T.eq(vim.bo[tbuf].modified, true, "the edited buffer's 'modified'")
  T.eq(fake.requests(), requests, 'model requests after the second apply')
end)
