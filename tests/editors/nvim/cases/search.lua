-- :KinMemorySearch shows ranked results in vim.ui.select (scripted here) and opens the choice; a
-- query nothing matches says so instead of showing an empty list.
local T = dofile(vim.env.KIN_NVIM_HARNESS)

T.run(function()
  local buf, client = T.open('facts/build.md')
  T.wait(function()
    local result = T.exec(client, 'kin.memory.search', { query = 'replica' })
    return result and #result.results > 0
  end, 'the recall index to answer a search')

  local calls = T.script_select(function(call)
    return 2 -- the second-ranked result, to prove the choice (not just the top hit) is opened
  end)
  vim.cmd('KinMemorySearch replica')
  local call = T.wait(function()
    return calls[1]
  end, 'vim.ui.select to be called')
  T.eq(call.kind, 'kin_memory_search', 'select kind')
  T.check(call.prompt:find('replica', 1, true), 'prompt names the query: %q', call.prompt)
  local paths = vim.tbl_map(function(r)
    return r.path
  end, call.items)
  T.log('ranked:', table.concat(paths, ', '))
  T.eq(#call.items, 3, 'results for "replica" (deploy-topology, backups, outage)')
  T.check(vim.tbl_contains(paths, '/memories/facts/deploy-topology.md') and vim.tbl_contains(paths, '/memories/facts/backups.md')
    and vim.tbl_contains(paths, '/memories/episodes/outage.md'), 'the three memories mentioning replica: %s', vim.inspect(paths))
  for i = 2, #call.items do
    T.check(call.items[i - 1].score >= call.items[i].score, 'ranked by score: %s', vim.inspect(call.items))
  end
  T.check(call.labels[1]:find(call.items[1].path, 1, true) and not call.labels[1]:find('\n'),
    'a one-line label with the path: %q', call.labels[1])

  -- A snippet is cut between words: each of its words is a whole word of the memory it comes from.
  for _, item in ipairs(call.items) do
    local source = T.read(vim.uri_to_fname(item.uri))
    T.log('snippet:', item.snippet)
    for word in item.snippet:gmatch('[%w%-]+') do
      T.check(source:find('%f[%w%-]' .. vim.pesc(word) .. '%f[^%w%-]'), 'the snippet of %s cuts a word (%q): %q',
        item.path, word, item.snippet)
    end
  end

  local want = vim.uri_to_fname(call.items[2].uri)
  T.wait(function()
    return vim.api.nvim_buf_get_name(0) == want
  end, function()
    return ('the chosen memory %s to open (current: %s)'):format(want, vim.api.nvim_buf_get_name(0))
  end)
  local opened = vim.api.nvim_get_current_buf()
  T.check(opened ~= buf, 'a new buffer was opened')
  T.eq(vim.bo[opened].filetype, 'markdown', 'filetype of the opened memory')
  T.wait(function()
    return #vim.lsp.get_clients({ bufnr = opened, name = 'kin_memory' }) == 1
  end, 'kin_memory to attach to the opened memory')
  T.eq(#vim.lsp.get_clients({ name = 'kin_memory' }), 1, 'one server for the store (the client was reused)')

  -- Nothing matches: a warning, no picker.
  vim.cmd('KinMemorySearch zzyzxnothingmatches')
  T.wait(function()
    return T.noted('no memory matches')
  end, 'a "no memory matches" notification')
  T.eq(#calls, 1, 'no picker for an empty result')
end)
