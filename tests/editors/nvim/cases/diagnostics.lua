-- An opened memory with an unknown category gets KM201 on the value, as a warning from kin-memory.
local T = dofile(vim.env.KIN_NVIM_HARNESS)

T.run(function()
  local buf = T.open('facts/cache.md')
  local d = T.wait_diag(buf, 'KM201')
  T.eq(d.source, 'kin-memory', 'source')
  T.eq(d.severity, vim.diagnostic.severity.WARN, 'severity')
  -- `category: projcet-fact` on line 2 (0-based 1): the range covers exactly the value.
  T.eq({ d.lnum, d.col, d.end_lnum, d.end_col }, { 1, 10, 1, 22 }, 'range (lnum, col, end_lnum, end_col)')
  T.check(d.message:find('project%-fact'), 'message should suggest project-fact: %q', d.message)
  T.eq(#T.diags(buf, 'KM201'), 1, 'KM201 count')
end)
