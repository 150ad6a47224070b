-- A memory whose `workspace:` lost its closing bracket: KM102 covers the whole value with a sentence (not
-- YAML's words), the lens still shows the repository's scope (not "global (no stamp)"), and the
-- preferred quick fix removes the stray `[`.
local T = dofile(vim.env.KIN_NVIM_HARNESS)

T.run(function()
  local rel = 'facts/broken-stamp.md'
  T.write(T.path(rel), '---\ncategory: project-fact\nworkspace: [/elsewhere/payments\n---\n# Payments cache\n\nThe cache holds card tokens for an hour.\n')
  local buf = T.open(rel)
  local d = T.wait_diag(buf, 'KM102')
  T.check(d.message:find('the `[` that opens the value of `workspace` is never closed', 1, true)
    and not d.message:find('did not find', 1, true), 'the message reads %q', d.message)
  T.eq({ d.lnum, d.col, d.end_lnum, d.end_col }, { 2, 11, 2, 31 }, 'the squiggle covers the whole value')
  T.wait(function()
    for _, lens in ipairs(vim.lsp.codelens.get(buf)) do
      local title = lens.command and lens.command.title or ''
      -- /elsewhere/payments is no repository here: the memory is quiet, as the health view says
      if title:find('quiet (its repository is missing)', 1, true) then
        return true
      end
    end
  end, 'the lens to show the stamp\'s scope (not global)')

  vim.api.nvim_win_set_cursor(0, { d.lnum + 1, d.col })
  vim.lsp.buf.code_action({ apply = true, filter = function(a) return a.isPreferred == true end })
  T.wait(function()
    return vim.api.nvim_buf_get_lines(buf, 2, 3, false)[1] == 'workspace: /elsewhere/payments'
  end, function()
    return 'the fix to remove the stray [ (line 3 reads ' .. vim.inspect(vim.api.nvim_buf_get_lines(buf, 2, 3, false)[1]) .. ')'
  end)
  T.wait(function()
    return #T.diags(buf, 'KM102') == 0
  end, 'KM102 to clear after the fix')
end)
