-- :KinMemoryReflect end to end against a scripted model server: the review buffer shows the unified
-- diff of a created and an edited memory before anything is asked or written; `a` writes exactly the
-- reviewed texts (no second model request), the open memory's buffer reloads to the new text and is
-- not left modified, and the review closes.
local T = dofile(vim.env.KIN_NVIM_HARNESS)

local CREATED, EDITED = '/memories/prefs/commit-style.md', '/memories/prefs/tone.md'
local NEW_TEXT = '---\ncategory: preference\n---\n# Commit style\n\nCommit subjects are imperative and under 60 characters.\n'
local OLD, NEW = 'Keep answers short; no emoji.', 'Keep answers short; no emoji; British spelling.'

T.run(function()
  local fake = T.fake_model({
    { tool_calls = {
      { command = 'create', path = CREATED, file_text = NEW_TEXT },
      { command = 'str_replace', path = EDITED, old_str = OLD, new_str = NEW },
    } },
    { stop = 'Saved the commit style and added British spelling to the tone preference.' },
  })
  local created, edited = T.path('prefs/commit-style.md'), T.path('prefs/tone.md')
  local tone = T.read(edited)
  local expected = { [created] = NEW_TEXT, [edited] = (tone:gsub(vim.pesc(OLD), NEW)) }
  T.check(expected[edited] ~= tone, 'fixture: prefs/tone.md must contain %q', OLD)
  local buf = T.open('prefs/tone.md')
  local asked = T.script_select(function()
    return nil
  end)
  local transcript = T.project .. '/session.jsonl'
  T.write(transcript, vim.json.encode({ role = 'user', content = 'Commit subjects: imperative, short. And British spelling.' }) .. '\n')

  vim.cmd('KinMemoryReflect ' .. vim.fn.fnameescape(transcript))
  local review = T.wait(T.review_buffer, 'the review buffer', 30000)
  T.eq(vim.api.nvim_get_current_buf(), review, 'the review is the current buffer')
  T.eq(vim.bo[review].filetype, 'diff', 'filetype of the review')
  T.eq(vim.bo[review].modifiable, false, 'the review is read-only')
  local shown = T.buf_text(review)
  T.log('review buffer:\n' .. shown)
  T.check(shown:find('\n### %d%. create ' .. vim.pesc(CREATED) .. '\n') and shown:find('\n### %d%. edit ' .. vim.pesc(EDITED) .. '\n'),
    'the review heads a create of %s and an edit of %s:\n%s', CREATED, EDITED, shown)
  for _, want in ipairs({ '+# Commit style', '+Commit subjects are imperative and under 60 characters.', '-' .. OLD, '+' .. NEW }) do
    T.check(shown:find('\n' .. want .. '\n', 1, true), 'the review shows the line %q:\n%s', want, shown)
  end
  T.eq(#asked, 0, 'questions asked while the review is shown')
  T.eq(vim.uv.fs_stat(created), nil, 'nothing created before applying')
  T.eq(T.read(edited), tone, 'nothing edited before applying')
  local state = fake.state()
  T.eq(state.requests, 2, 'model requests of the pass')
  T.eq(state.withKey, 2, 'requests carrying the key from the apiKeyEnv variable')

  T.press('a')
  local note = T.wait(function()
    return T.noted('applied %d+ of %d+')
  end, 'the apply report')
  T.log('reported:', note.msg)
  T.check(note.msg:find('applied 2 of 2', 1, true), 'the report: %q', note.msg)
  T.eq(note.level, vim.log.levels.INFO, 'level of the report')
  T.eq(fake.requests(), 2, 'model requests after applying (applying asks the model nothing)')
  for path, text in pairs(expected) do
    T.eq(T.read(path), text, 'bytes on disk of ' .. path)
  end
  T.wait(function()
    return T.buf_text(buf) == expected[edited]
  end, function()
    return 'the open buffer of prefs/tone.md to reload the applied text (it shows ' .. vim.inspect(T.buf_text(buf)) .. ')'
  end)
  T.eq(vim.bo[buf].modified, false, "the open memory's 'modified'")
  T.eq(T.review_buffer(), nil, 'the review buffer after applying')
  T.eq(T.exec(vim.lsp.get_clients({ name = 'kin_memory' })[1], 'kin.memory.listProposals', vim.empty_dict()).proposals,
    {}, 'proposals left after applying everything')
  T.log(('numbers: %d model requests for the pass, 0 for the apply; 2 files written; 0 conflicts'):format(state.requests))
end)
