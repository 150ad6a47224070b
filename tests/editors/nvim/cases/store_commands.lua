-- The commands VS Code's palette has: :KinMemoryNew (category, then a path; created through the memory
-- tool and opened), :KinMemoryList with status and category filters into the quickfix list,
-- :KinMemoryReindex, :KinMemoryOpenStore (a tab page on the store folder). Scratch buffers close with q.
local T = dofile(vim.env.KIN_NVIM_HARNESS)

local function qf_paths()
  local out = {}
  for _, item in ipairs(vim.fn.getqflist()) do
    out[#out + 1] = vim.uv.fs_realpath(vim.api.nvim_buf_get_name(item.bufnr)):sub(#T.store + 2)
  end
  table.sort(out)
  return out
end

T.run(function()
  local first = T.open('facts/build.md')

  -- :KinMemoryNew: pick "preference", accept the folder and type a name.
  local picks = T.script_select(function(call)
    for i, label in ipairs(call.labels) do
      if label:match('^preference ') then
        return i
      end
    end
  end)
  local asked = T.script_input({ 'review-style' }) -- a bare name goes in the category's folder
  vim.cmd('KinMemoryNew')
  local file = T.path('prefs/review-style.md')
  T.wait(function()
    return vim.api.nvim_buf_get_name(0) == file
  end, 'the new memory to open')
  T.eq(picks[1].prompt, 'New memory: what kind is it?', 'the category question')
  T.eq(#picks[1].labels, 4, 'categories offered')
  T.eq(asked[1].default, nil, 'the answer is not pre-filled (typing facts/x after facts/ doubled it)')
  T.check(asked[1].prompt:find('prefs/', 1, true), 'the prompt names the folder: %q', asked[1].prompt)
  T.eq(T.read(file), '---\ncategory: preference\n---\n\n# Review style\n\n', 'the new memory on disk')
  T.wait_client(vim.api.nvim_get_current_buf(), 'prefs/review-style.md')
  T.eq(vim.api.nvim_win_get_cursor(0)[1], vim.api.nvim_buf_line_count(0), 'the cursor under the heading')
  T.eq(vim.bo.filetype, 'markdown', 'the new memory is markdown')

  -- A name the store refuses is refused before the server is asked, with a reason.
  T.script_select(function()
    return 1
  end)
  T.script_input({ 'facts/.hidden' })
  vim.cmd('KinMemoryNew')
  T.wait(function()
    return T.noted('hidden names')
  end, 'the refusal of a hidden name')
  T.eq(vim.uv.fs_stat(T.path('facts/.hidden.md')), nil, 'nothing written for a hidden name')

  -- :KinMemoryList with filters.
  vim.cmd('KinMemoryList stale')
  T.wait(function()
    return vim.fn.getqflist({ title = 1 }).title:find('(stale)', 1, true)
  end, 'the stale list')
  T.eq(qf_paths(), { 'facts/old-runbook.md' }, ':KinMemoryList stale')
  T.check(vim.fn.getqflist()[1].text:find('[project-fact] stale', 1, true), 'the entry says what it is: %s',
    vim.fn.getqflist()[1].text)
  vim.cmd('KinMemoryList expired session episodic')
  T.wait(function()
    return vim.fn.getqflist({ title = 1 }).title:find('(expired session episodic)', 1, true)
  end, 'the expired list')
  T.eq(qf_paths(), { 'episodes/ancient-incident.md', 'sessions/scratch.md' }, ':KinMemoryList expired session episodic')
  vim.cmd('KinMemoryList preference')
  T.wait(function()
    return vim.fn.getqflist({ title = 1 }).title:find('(preference)', 1, true)
  end, 'the preference list')
  T.eq(qf_paths(), { 'prefs/review-style.md', 'prefs/tone.md' }, ':KinMemoryList preference')
  vim.cmd('KinMemoryList fresh')
  T.wait(function()
    return T.noted('"fresh" is not a filter')
  end, 'the refusal of an unknown filter')
  vim.cmd('cclose')

  -- :KinMemoryReindex.
  vim.cmd('KinMemoryReindex')
  local n = T.wait(function()
    return T.noted('reindexed %d+ files')
  end, 'the reindex notification')
  T.log('said:', n.msg)

  -- Scratch buffers close with q (the prompt preview here).
  vim.cmd('KinMemoryPreview')
  local preview = T.wait_buffer('kin-memory://index-preview')
  vim.api.nvim_set_current_win(vim.fn.bufwinid(preview))
  local wins = #vim.api.nvim_list_wins()
  T.press('q')
  T.eq(#vim.api.nvim_list_wins(), wins - 1, 'q closed the preview window')

  -- :KinMemoryOpenStore: a new tab page on the store.
  local tabs = #vim.api.nvim_list_tabpages()
  vim.cmd('KinMemoryOpenStore')
  T.eq(#vim.api.nvim_list_tabpages(), tabs + 1, 'a new tab page')
  T.eq(vim.uv.fs_realpath(vim.fn.getcwd()), T.store, 'its working directory')
  T.eq(vim.uv.fs_realpath(vim.api.nvim_buf_get_name(0)), T.store, 'it shows the store folder')
  T.check(vim.api.nvim_buf_is_loaded(first), 'the first memory is still open')
  for _, note in ipairs(T.notes) do
    T.check(not note.msg:find('kinMemory%.'), 'no VS Code setting name in: %s', note.msg)
  end
end)
