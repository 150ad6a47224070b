-- :KinMemoryConsolidate without a model configured lists the consolidation candidates in the quickfix
-- list: the contradiction and the stale fact, each entry a memory of its group; `:KinMemoryCandidates 1`
-- opens the contradicting pair side by side.
local T = dofile(vim.env.KIN_NVIM_HARNESS)

local FACT = '---\ncategory: project-fact\nworkspace: global\n---\n'

T.run(function()
  T.write(T.path('facts/db.md'), FACT .. 'The billing database listens on port 5432.\n')
  T.write(T.path('facts/db-old.md'), FACT .. 'Billing DB port is 5433.\n')
  local client = T.wait(function()
    return require('kin_memory').client()
  end, 'the kin-memory client')
  T.wait(function()
    for _, c in ipairs(T.exec(client, 'kin.memory.consolidationCandidates', vim.empty_dict()).candidates) do
      if c.kind == 'contradiction' then
        return true
      end
    end
  end, 'the server to see the contradiction')

  vim.cmd('KinMemoryConsolidate')
  local qf = T.wait(function()
    local list = vim.fn.getqflist({ title = 1, items = 1 })
    return #list.items > 0 and list or nil
  end, 'the quickfix list')
  T.log('quickfix: ' .. qf.title)
  local lines = {}
  for _, item in ipairs(qf.items) do
    lines[#lines + 1] = vim.fs.basename(vim.api.nvim_buf_get_name(item.bufnr)) .. ' | ' .. item.text
  end
  T.log(table.concat(lines, '\n'))
  T.check(qf.title:find('consolidation candidates', 1, true), 'the quickfix title: %q', qf.title)
  T.check(lines[1]:find('^db%-old%.md | %[1%] contradiction: .* disagree: port 5433 vs 5432$')
    and lines[2]:find('^db%.md | %[1%] contradiction:'), 'the contradiction comes first:\n%s', table.concat(lines, '\n'))
  T.check(table.concat(lines, '\n'):find('old-runbook.md | [', 1, true), 'the stale fact is listed:\n%s', table.concat(lines, '\n'))
  T.check(T.noted('no model configured'), 'the user is told why candidates are shown')

  vim.cmd('cclose')
  vim.cmd('KinMemoryCandidates 1')
  local shown = T.wait(function()
    local names = {}
    for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
      names[#names + 1] = vim.fs.basename(vim.api.nvim_buf_get_name(vim.api.nvim_win_get_buf(win)))
    end
    table.sort(names)
    return table.concat(names, ' ') == 'db-old.md db.md' and names or nil
  end, 'group 1 (db-old.md and db.md) side by side')
  T.log('windows: ' .. table.concat(shown, ', '))
end)
