-- History and the review queue: an external write is listed by :KinMemoryChanges (quickfix) with the
-- diff against the reviewed text in a split; :KinMemoryRevert brings the old text back on disk;
-- :KinMemoryHistory lists the kept versions, diffs one and restores one; :KinMemoryAccept clears.
local T = dofile(vim.env.KIN_NVIM_HARNESS)

local function qf_texts()
  local out = {}
  for _, item in ipairs(vim.fn.getqflist()) do
    out[#out + 1] = vim.fn.bufname(item.bufnr) .. ': ' .. item.text
  end
  return out
end



T.run(function()
  local tone = T.path('prefs/tone.md')
  local original = T.read(tone)
  T.open('facts/build.md')
  T.wait(function()
    local b = vim.fn.bufnr(T.path('episodes/ancient-incident.md'))
    return b ~= -1 and T.diags(b, 'KM402')[1]
  end, 'the whole store to be checked')

  T.run_and_wait('KinMemoryAccept!', 'accepted %d+ change', 'Accept! to answer')
  T.run_and_wait('KinMemoryChanges', 'no changes since the last review', 'an empty queue after Accept!')

  local written = original:gsub('no emoji', 'no emoji; sign with the team name')
  T.write(tone, written)
  T.run_and_wait('KinMemoryChanges', '1 change since the last review', 'the external write to be queued')
  local texts = qf_texts()
  T.eq(#texts, 1, 'one quickfix entry')
  T.check(texts[1]:find('prefs/tone.md', 1, true) and texts[1]:find('changed outside the editor', 1, true),
    'the quickfix entry reads %q', texts[1])

  vim.cmd('cfirst')
  T.eq(vim.api.nvim_buf_get_name(0), tone, 'the quickfix entry opens the memory')
  vim.cmd('KinMemoryDiff')
  local left = T.wait(function()
    for _, b in ipairs(vim.api.nvim_list_bufs()) do
      if vim.api.nvim_buf_get_name(b):find('kin-memory://reviewed/', 1, true) then
        return b
      end
    end
  end, 'the reviewed side of the diff')
  T.eq(table.concat(vim.api.nvim_buf_get_lines(left, 0, -1, false), '\n') .. '\n', original, 'the reviewed text')
  local diffed = 0
  for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    diffed = diffed + (vim.wo[w].diff and 1 or 0)
  end
  T.eq(diffed, 2, 'two windows in diff mode')
  local tabs = #vim.api.nvim_list_tabpages()
  T.eq(vim.api.nvim_get_current_buf(), left, 'the cursor on the reviewed side')
  T.press('q')
  T.wait(function()
    return #vim.api.nvim_list_tabpages() == tabs - 1
  end, '`q` to close the comparison tab')

  T.run_and_wait('KinMemoryRevert prefs/tone.md', 'reverted 1 memory', 'the revert to report')
  T.eq(T.read(tone), original, 'the reviewed text is back on disk')
  T.run_and_wait('KinMemoryChanges', 'no changes since the last review', 'the queue to be empty after the revert')

  -- History: restore, the external write, the original (newest first).
  vim.cmd.edit(vim.fn.fnameescape(tone))
  local pick = {}
  local calls = T.script_select(function(call)
    return table.remove(pick, 1)
  end)
  pick = { 2, 1 } -- the external write, then "Diff against the current file"
  vim.cmd('KinMemoryHistory')
  local diff_buf = T.wait(function()
    for _, b in ipairs(vim.api.nvim_list_bufs()) do
      if vim.api.nvim_buf_get_name(b):find('kin-memory://version/', 1, true) then
        return b
      end
    end
  end, 'the version side of the diff')
  T.check(#calls[1].labels >= 3, 'the versions listed: %s', vim.inspect(calls[1].labels))
  T.check(calls[1].labels[1]:find('by a restore from history', 1, true) and calls[1].labels[2]:find('outside the editor', 1, true),
    'the versions read %s', vim.inspect(calls[1].labels))
  T.check(table.concat(vim.api.nvim_buf_get_lines(diff_buf, 0, -1, false), '\n'):find('sign with the team name', 1, true),
    'the version shown is the external write')
  vim.cmd('tabclose')

  pick = { 2, 2 } -- the external write, then "Restore this version"
  local n = #T.notes
  vim.cmd('KinMemoryHistory')
  T.wait(function()
    return T.notes_since(n, 'restored /memories/prefs/tone.md to version')
  end, 'the restore to report')
  T.eq(T.read(tone), written, 'the chosen version is on disk')
  T.wait(function()
    return table.concat(vim.api.nvim_buf_get_lines(vim.fn.bufnr(tone), 0, -1, false), '\n'):find('team name', 1, true)
  end, 'the open buffer to follow the restored file')

  T.run_and_wait('KinMemoryChanges', '1 change since the last review', 'the restore to be queued')
  vim.cmd.edit(vim.fn.fnameescape(tone))
  T.run_and_wait('KinMemoryAccept', 'accepted 1 change', 'Accept on the current memory')
  T.run_and_wait('KinMemoryChanges', 'no changes since the last review', 'an empty queue after Accept')
end)
