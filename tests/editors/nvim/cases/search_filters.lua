-- Search filters: another workspace's memory is hidden from :KinMemorySearch, which says how many it
-- hid; :KinMemorySearch! (the operator's view) shows them; a `category:` word narrows the results.
local T = dofile(vim.env.KIN_NVIM_HARNESS)

T.run(function()
  local other = T.project .. '-other'
  vim.fn.mkdir(other, 'p')
  T.write(T.path('facts/zebra-here.md'), ('---\ncategory: project-fact\nworkspace: %s\n---\n# Zebragate here\n\nThe zebragate retries twice.\n'):format(T.project))
  T.write(T.path('facts/zebra-there.md'), ('---\ncategory: project-fact\nworkspace: %s\n---\n# Zebragate there\n\nThe zebragate retries forever.\n'):format(vim.uv.fs_realpath(other)))
  local _, client = T.open('facts/build.md')
  T.wait(function()
    local result = T.exec(client, 'kin.memory.search', { query = 'zebragate', workspace = 'none' })
    return result and #result.results == 2
  end, 'the recall index to hold both memories')
  local calls = T.script_select(function()
    return nil
  end)

  vim.cmd('KinMemorySearch zebragate')
  local call = T.wait(function()
    return calls[1]
  end, 'the filtered results')
  T.eq(vim.tbl_map(function(r)
    return r.path
  end, call.items), { '/memories/facts/zebra-here.md' }, 'only this workspace')
  T.check(T.noted('1 more in other workspaces'), 'the hint: %s', vim.inspect(T.notes))

  vim.cmd('KinMemorySearch! zebragate')
  call = T.wait(function()
    return calls[2]
  end, 'the operator view results')
  T.eq(#call.items, 2, 'both workspaces with !')

  vim.cmd('KinMemorySearch zebragate category:episodic')
  T.wait(function()
    return T.noted('no memory matches')
  end, 'the category filter to leave nothing')
end)
