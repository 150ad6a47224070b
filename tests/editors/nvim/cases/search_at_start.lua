-- :KinMemorySearch as the first thing after Neovim starts (the server starts with it): a memory written
-- just before is found, or the answer says the index is still filling ("indexing…") — never a false
-- "no memory matches". Searching again once the index caught up finds it.
local T = dofile(vim.env.KIN_NVIM_HARNESS)

T.run(function()
  local word = ('zq%d'):format(vim.uv.hrtime() % 1000000007)
  T.write(T.path('facts/fresh-at-start.md'),
    ('---\ncategory: project-fact\nworkspace: global\n---\n# Fresh\n\nThe %s service owns billing.\n'):format(word))
  T.eq(#vim.lsp.get_clients({ name = 'kin_memory' }), 0, 'no server before the search')

  local calls = T.script_select(function()
    return 1
  end)
  local found = false
  for attempt = 1, 20 do
    local before = #calls
    vim.cmd('KinMemorySearch ' .. word)
    local answered = T.wait(function()
      return #calls > before or T.noted('indexing') or T.noted('no memory matches')
    end, 'an answer to the search')
    T.check(not T.noted('no memory matches'), 'a false "no memory matches" on attempt %d', attempt)
    if #calls > before then
      local paths = vim.tbl_map(function(r)
        return r.path
      end, calls[#calls].items)
      T.check(vim.tbl_contains(paths, '/memories/facts/fresh-at-start.md'), 'the fresh memory in %s', vim.inspect(paths))
      T.log(('found on attempt %d'):format(attempt))
      found = true
      break
    end
    T.log(('attempt %d: %s'):format(attempt, answered.msg or 'indexing'))
    T.notes = {}
    vim.wait(200)
  end
  T.check(found, 'the fresh memory was found once the index caught up')
  T.wait(function()
    return vim.api.nvim_buf_get_name(0) == T.path('facts/fresh-at-start.md')
  end, 'the chosen memory to open')
end)
