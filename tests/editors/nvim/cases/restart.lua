-- The server dies under the user (killed): one ERROR notification says so and names :KinMemoryRestart;
-- :KinMemoryRestart starts a new server for the open memories, and diagnostics and commands work again.
local T = dofile(vim.env.KIN_NVIM_HARNESS)

local function server_pids()
  local pids = {}
  for _, pid in ipairs(vim.api.nvim_get_proc_children(vim.fn.getpid())) do
    pids[#pids + 1] = pid
  end
  return pids
end

T.run(function()
  local buf, client = T.open('facts/cache.md')
  T.wait_diag(buf, 'KM201')
  local pids = server_pids()
  T.check(#pids > 0, 'the server runs as a child of Neovim')
  for _, pid in ipairs(pids) do
    vim.uv.kill(pid, 'sigkill')
  end
  local n = T.wait(function()
    return T.noted('the language server stopped')
  end, 'a notification that the server stopped')
  T.log('said:', n.msg)
  T.eq(n.level, vim.log.levels.ERROR, 'level')
  T.check(n.msg:find('killed by signal 9', 1, true) and n.msg:find(':KinMemoryRestart', 1, true),
    'the message says what happened and how to restart: %s', n.msg)
  T.wait(function()
    return client:is_stopped()
  end, 'the old client to stop')
  local before = #T.notes

  vim.cmd('KinMemoryRestart')
  T.wait(function()
    return T.noted('the language server restarted')
  end, 'the restart notification')
  local new = T.wait_client(buf, 'facts/cache.md')
  T.check(new.id ~= client.id, 'a new client serves the memory')
  -- The new server publishes diagnostics for the open memory, and commands reach it.
  vim.diagnostic.reset(nil, buf)
  vim.api.nvim_buf_set_lines(buf, 1, 2, false, { 'category: projcet-fact' })
  T.wait_diag(buf, 'KM201')
  local info = T.exec(new, 'kin.memory.info', vim.empty_dict())
  T.eq(info.root, T.store, 'kin.memory.info from the new server')
  for i = before + 1, #T.notes do
    T.check(not T.notes[i].msg:find('stopped', 1, true), 'no "stopped" message for a restart: %s', T.notes[i].msg)
  end
  -- A restart while the server runs is quiet too (the plugin stopped it, nobody killed it).
  vim.cmd('KinMemoryRestart')
  T.wait(function()
    local c = vim.lsp.get_clients({ bufnr = buf, name = 'kin_memory' })[1]
    return c and c.id ~= new.id and c.initialized
  end, 'a third client after the second restart')
  vim.wait(300)
  for i = before + 1, #T.notes do
    T.check(T.notes[i].level ~= vim.log.levels.ERROR, 'no error after the restarts: %s', T.notes[i].msg)
  end
end)
