-- KM602's quick fixes through Neovim's own code-action flow: the secret offers "Remove the line holding
-- the secret" and "Mark as not a secret"; the first takes exactly that line out of the buffer, and after
-- :write the file on disk is the memory without it, kept in history as the person's own. The secret is
-- fabricated (a repeated block).
local T = dofile(vim.env.KIN_NVIM_HARNESS)

local REL = 'facts/api-notes.md'
local HEAD = '---\ncategory: project-fact\nworkspace: global\n---\n# API notes\n\n'
local SECRET = 'The sandbox key is sk-ant-api03-' .. string.rep('Qw7', 10) .. '\n'
local REST = 'Rotate it every quarter.\n'

T.run(function()
  T.write(T.path(REL), HEAD .. SECRET .. REST)
  local buf, client = T.open(REL)
  local d = T.wait_diag(buf, 'KM602')
  T.eq(d.lnum, 6, 'the line of the secret')
  local _, titles = T.quick_fixes(buf, d)
  T.check(vim.tbl_contains(titles, 'Remove the line holding the secret'), 'no remove action in %s', vim.inspect(titles))
  T.check(vim.tbl_contains(titles, 'Mark as not a secret (a comment above the line)'), 'no mark action in %s',
    vim.inspect(titles))

  local versions = #T.exec(client, 'kin.memory.history', { path = '/memories/' .. REL }).versions
  -- What a user does: the cursor on the secret, the remove action chosen.
  vim.api.nvim_win_set_cursor(0, { d.lnum + 1, d.col + 2 })
  vim.lsp.buf.code_action({
    apply = true,
    filter = function(a)
      return a.title == 'Remove the line holding the secret'
    end,
  })
  T.wait(function()
    return vim.api.nvim_buf_get_lines(buf, 6, 7, false)[1] == 'Rotate it every quarter.'
  end, function()
    return 'the secret\'s line to be gone; the buffer reads ' .. vim.inspect(vim.api.nvim_buf_get_lines(buf, 0, -1, false))
  end)
  vim.cmd('silent write')
  T.eq(T.read(T.path(REL)), HEAD .. REST, 'the file on disk after :write')
  T.wait(function()
    return #T.diags(buf, 'KM602') == 0
  end, 'KM602 to clear once the line is gone')
  local newest = T.wait(function()
    local found = T.exec(client, 'kin.memory.history', { path = '/memories/' .. REL }).versions
    return #found > versions and found[1]
  end, 'a version kept for the save')
  T.eq(newest.by, 'by you in the editor', 'who the version says wrote it')
end)
