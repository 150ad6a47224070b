-- :KinMemoryConsolidate end to end against a scripted model server: a duplicate pair and two memories
-- that disagree on a port are the candidates; the model's fixes come back as one proposal whose review
-- explains each change in a line citing the memories it read; `a` writes exactly that.
local T = dofile(vim.env.KIN_NVIM_HARNESS)

local FACT = '---\ncategory: project-fact\nworkspace: global\n---\n'
local DB = FACT .. '# Billing DB\n\nThe billing database listens on port 5432.\n'
local DB_OLD = FACT .. '# Billing DB\n\nBilling DB port is 5433.\n'

T.run(function()
  local fake = T.fake_model({
    { tool_calls = {
      { command = 'str_replace', path = '/memories/facts/db-old.md', old_str = '5433', new_str = '5432' },
      { command = 'delete', path = '/memories/facts/backups-copy.md' },
    } },
    { stop = 'Fixed the port of db-old.md; deleted the copy of backups.md.' },
  })
  T.write(T.path('facts/db.md'), DB)
  T.write(T.path('facts/db-old.md'), DB_OLD)
  T.write(T.path('facts/backups-copy.md'), T.read(T.path('facts/backups.md')))
  local client = T.wait(function()
    return vim.lsp.get_clients({ name = 'kin_memory' })[1] or require('kin_memory').client()
  end, 'the kin-memory client')
  T.wait(function()
    local found = T.exec(client, 'kin.memory.consolidationCandidates', vim.empty_dict()).candidates
    local kinds = {}
    for _, c in ipairs(found) do
      kinds[c.kind] = true
    end
    return kinds.contradiction and kinds.duplicate
  end, 'the server to see the new memories as candidates')

  vim.cmd('KinMemoryConsolidate')
  local review = T.wait(T.review_buffer, 'the review buffer', 30000)
  local shown = T.buf_text(review)
  T.log('review buffer:\n' .. shown)
  T.check(shown:find('\n### %d%. edit /memories/facts/db%-old%.md\n') and shown:find('\n### %d%. delete /memories/facts/backups%-copy%.md\n'),
    'the review heads the edit and the delete:\n%s', shown)
  T.check(shown:find('\n- edits /memories/facts/db-old.md (contradiction: ', 1, true)
    and shown:find('read /memories/facts/db-old.md, /memories/facts/db.md', 1, true),
    'a line explains the edit, citing both memories:\n%s', shown)
  T.check(shown:find('\n- deletes /memories/facts/backups-copy.md (duplicate: ', 1, true), 'a line explains the delete:\n%s', shown)
  T.check(shown:find('\n-Billing DB port is 5433.\n', 1, true) and shown:find('\n+Billing DB port is 5432.\n', 1, true),
    'the review shows the corrected port:\n%s', shown)
  T.eq(T.read(T.path('facts/db-old.md')), DB_OLD, 'nothing edited before applying')

  T.press('a')
  local note = T.wait(function()
    return T.noted('applied %d+ of %d+')
  end, 'the apply report')
  T.check(note.msg:find('applied 2 of 2', 1, true), 'the report: %q', note.msg)
  T.eq(T.read(T.path('facts/db-old.md')), DB_OLD:gsub('5433', '5432'), 'bytes on disk of facts/db-old.md')
  T.eq(vim.uv.fs_stat(T.path('facts/backups-copy.md')), nil, 'the duplicate is deleted')
  T.eq(T.read(T.path('facts/db.md')), DB, 'the memory the fix agreed with is untouched')
  T.eq(fake.requests(), 2, 'model requests (applying asks the model nothing)')
  T.log('numbers: 2 model requests for the pass, 0 for the apply; 2 files changed; 0 conflicts')
end)
