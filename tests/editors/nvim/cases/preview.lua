-- :KinMemoryPreview shows the prompt block the agent gets (indexPreview) in a scratch buffer; under
-- the text (virtual lines: the buffer stays exactly the prompt block) what the cap cut, by name, and
-- what the workspace filter hides.
local T = dofile(vim.env.KIN_NVIM_HARNESS)

local function notes_under(buf)
  local ns = vim.api.nvim_get_namespaces().kin_memory_preview
  local out = {}
  for _, m in ipairs(vim.api.nvim_buf_get_extmarks(buf, ns, 0, -1, { details = true })) do
    for _, vl in ipairs(m[4].virt_lines or {}) do
      out[#out + 1] = table.concat(vim.tbl_map(function(chunk)
        return chunk[1]
      end, vl))
    end
  end
  return out
end

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
  T.eq(notes_under(buf), { ('── prompt block: %d lines, %d bytes ──'):format(expected.lines, expected.bytes) },
    'the note under an uncut block')

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

  -- Past the 200-line cap (and with a memory of another workspace): the note names what was cut.
  for i = 1, 205 do
    T.write(T.path(('facts/bulk/f%03d.md'):format(i)), ('---\ncategory: project-fact\nworkspace: global\n---\n# Fact %d\n'):format(i))
  end
  T.write(T.path('facts/elsewhere.md'), '---\ncategory: project-fact\nworkspace: /somewhere/else\n---\n# Elsewhere\n')
  local cut = T.wait(function()
    local r = T.exec(client, 'kin.memory.indexPreview', vim.empty_dict())
    return r.truncated and r.hidden == 1 and r
  end, 'the server to see the new memories')
  vim.cmd('KinMemoryPreview')
  local notes = T.wait(function()
    local n = notes_under(buf)
    return #n > 3 and n
  end, 'the notes under a cut block')
  T.log(table.concat(notes, '\n'))
  T.eq(notes[1], ('── prompt block: %d lines, %d bytes; %d lines past the 200-line cap are not inlined; 1 memory of '
    .. 'other workspaces is hidden (one line says so) ──'):format(cut.lines, cut.bytes, cut.cut), 'the summary line')
  T.check(notes[2]:find('Cut by the cap'), 'the cut heading: %s', notes[2])
  T.check(cut.text:find('f205.md', 1, true) == nil, 'f205 is past the cap')
  local named = table.concat(notes, '\n')
  T.check(named:find('  /memories/facts/bulk/f205.md\n', 1, true), 'cut memories are named:\n%s', named)
  for _, line in ipairs(notes) do
    local path = line:match('^  (/memories/%S+)$')
    if path then
      T.check(not cut.text:find(path .. ' (', 1, true), '%s is named as cut but is in the block', path)
    end
  end
  T.check(notes[#notes]:find('Hidden: 1 memory of other workspaces', 1, true), 'the hidden line: %s', notes[#notes])
end)
