-- The server dies under the user (killed) with two memories open: the message points at the server's
-- own log file (which exists: plain Neovim has no :LspLog), and the next kin-memory command brings the
-- server back with every open memory attached again (diagnostics on both), with no :KinMemoryRestart.
local T = dofile(vim.env.KIN_NVIM_HARNESS)

T.run(function()
  local cache, client = T.open('facts/cache.md')
  T.wait_diag(cache, 'KM201')
  local build = T.open('facts/build.md')
  for _, pid in ipairs(vim.api.nvim_get_proc_children(vim.fn.getpid())) do
    vim.uv.kill(pid, 'sigkill')
  end
  local n = T.wait(function()
    return T.noted('the language server stopped')
  end, 'a notification that the server stopped')
  T.log('said:', n.msg)
  T.check(not n.msg:find('LspLog', 1, true), 'no :LspLog in plain Neovim: %s', n.msg)
  local log = require('kin_memory.server').log_file()
  T.check(n.msg:find(vim.fn.fnamemodify(log, ':~'), 1, true), 'the message names the log file: %s', n.msg)
  T.check(vim.uv.fs_stat(log), 'the server wrote its log: %s', log)
  T.check((T.read(log) or ''):find('the language server started', 1, true), 'the log has the start: %s', T.read(log))
  T.wait(function()
    return client:is_stopped()
  end, 'the old client to stop')

  -- Any command brings it back; both open memories are attached again.
  T.run_and_wait('KinMemoryChanges', 'review', 'the changes view from the new server', 30000)
  local again = T.wait_client(cache, 'facts/cache.md')
  T.check(again.id ~= client.id, 'a new client serves the memory')
  T.wait_client(build, 'facts/build.md')
  -- The new server's own diagnostics on the memory open at the crash (its didOpen came again).
  local ns = vim.lsp.diagnostic.get_namespace(again.id)
  T.wait(function()
    for _, d in ipairs(vim.diagnostic.get(cache, { namespace = ns })) do
      if d.code == 'KM201' then
        return true
      end
    end
  end, 'KM201 from the new server on facts/cache.md', 30000)
end)
