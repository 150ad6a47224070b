-- The KM201 quick fix, applied through Neovim's own code-action flow, rewrites the value and the
-- diagnostic goes away.
local T = dofile(vim.env.KIN_NVIM_HARNESS)

T.run(function()
  local buf, client = T.open('facts/cache.md')
  local d = T.wait_diag(buf, 'KM201')
  local actions, titles = T.quick_fixes(buf, d)
  local preferred = vim.tbl_filter(function(a)
    return a.isPreferred and a.title:find('project%-fact')
  end, actions or {})
  T.check(#preferred == 1, 'one preferred fix naming project-fact expected, got: %s', vim.inspect(titles))

  -- What a user does: put the cursor on the diagnostic and apply the preferred fix.
  vim.api.nvim_win_set_cursor(0, { d.lnum + 1, d.col })
  vim.lsp.buf.code_action({
    apply = true,
    filter = function(a)
      return a.isPreferred == true
    end,
  })
  T.wait(function()
    return vim.api.nvim_buf_get_lines(buf, 1, 2, false)[1] == 'category: project-fact'
  end, function()
    return 'the fix to rewrite line 2, which reads ' .. vim.inspect(vim.api.nvim_buf_get_lines(buf, 1, 2, false)[1])
  end)
  T.wait(function()
    return #T.diags(buf, 'KM201') == 0
  end, function()
    return 'KM201 to clear after the fix (has: ' .. table.concat(T.codes(buf), ', ') .. ')'
  end)
  T.eq(vim.api.nvim_buf_get_lines(buf, 0, -1, false)[5], '# CDN cache', 'the body is untouched')
  local before = T.read(T.path('facts/cache.md'))
  vim.cmd("silent write")
  T.eq(T.read(T.path('facts/cache.md')), (before:gsub('projcet%-fact', 'project-fact', 1)), 'the file on disk after :write')
  T.check(client.initialized, 'client still running')
end)
