-- :KinMemoryPreview shows the prompt block the agent gets (indexPreview) in a scratch buffer.
local T = dofile(vim.env.KIN_NVIM_HARNESS)

T.run(function()
  local memory_buf, client = T.open('facts/build.md')
  local expected = T.exec(client, 'kin.memory.indexPreview', vim.empty_dict())
  T.check(expected and type(expected.text) == 'string', 'indexPreview answers with text: %s', vim.inspect(expected))

  vim.cmd('KinMemoryPreview')
  local buf = T.wait(function()
    local b = vim.fn.bufnr('kin-memory://index-preview')
    return b ~= -1 and vim.api.nvim_buf_line_count(b) > 1 and b
  end, 'the kin-memory://index-preview scratch buffer')
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  T.eq(table.concat(lines, '\n'), expected.text, 'scratch buffer text = indexPreview text')
  local text = expected.text
  T.check(text:find('/memories/facts/deploy-topology.md (project-fact)', 1, true), 'listing line for a fact:\n%s', text)
  T.check(text:find('## MEMORY.md', 1, true) and text:find('[Backups](facts/backups.md)', 1, true), 'MEMORY.md inlined:\n%s', text)
  T.check(not text:find('sessions/scratch.md', 1, true), 'session scratch is not in the prompt block:\n%s', text)
  T.eq(vim.bo[buf].buftype, 'nofile', 'scratch buftype')
  T.eq(vim.bo[buf].modifiable, false, 'scratch is read-only')
  T.eq(vim.api.nvim_get_current_buf(), buf, 'the preview is shown in the current window')
  T.eq(#vim.lsp.get_clients({ bufnr = buf }), 0, 'no language server attached to the scratch buffer')
  T.check(vim.api.nvim_buf_is_loaded(memory_buf), 'the memory buffer is still there')
  T.wait(function()
    return T.noted('prompt block: ' .. expected.lines .. ' lines, ' .. expected.bytes .. ' bytes')
  end, 'a notification with the line and byte counts')

  -- Run again: the same buffer is reused, not a second one.
  vim.cmd('KinMemoryPreview')
  vim.wait(300)
  local count = 0
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_get_name(b) == 'kin-memory://index-preview' then
      count = count + 1
    end
  end
  T.eq(count, 1, 'preview buffers after a second :KinMemoryPreview')
end)
