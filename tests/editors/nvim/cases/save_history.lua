-- Every save from the editor is a kept version, the person's own: a quick fix then :write, and a typed
-- line then :write, each appear in the memory's history within 2 s as "by you in the editor", are not
-- queued for review, and a later catch-up (the command line) relabels neither.
local T = dofile(vim.env.KIN_NVIM_HARNESS)

local VPATH = '/memories/facts/cache.md'

local function history(client)
  local result = T.exec(client, 'kin.memory.history', { path = VPATH })
  return result and result.versions or {}
end

--- :write, then wait for a new newest version; returns it and how long after the write it was kept.
local function save_and_wait(client, count)
  local saved = vim.uv.now() / 1000
  local wall = os.time()
  vim.cmd('silent write')
  local newest = T.wait(function()
    local versions = history(client)
    return #versions > count and versions[1]
  end, 'a new version after :write (' .. count .. ' before)', 5000)
  local took = vim.uv.now() / 1000 - saved
  T.log(('kept %.2f s after :write, %s'):format(took, newest.by))
  T.check(newest.time >= wall - 1 and newest.time - wall <= 3, 'the version was kept at the write (%s vs %s)', newest.time, wall)
  T.check(took < 2.0, 'the version was kept %.2f s after :write (2 s allowed)', took)
  T.eq(newest.by, 'by you in the editor', 'who the version says wrote it')
  return newest
end

T.run(function()
  local buf, client = T.open('facts/cache.md')
  local d = T.wait_diag(buf, 'KM201')
  local before = #history(client)

  -- A quick fix, then :write.
  vim.api.nvim_win_set_cursor(0, { d.lnum + 1, d.col })
  vim.lsp.buf.code_action({ apply = true, filter = function(a) return a.isPreferred == true end })
  T.wait(function()
    return vim.api.nvim_buf_get_lines(buf, 1, 2, false)[1] == 'category: project-fact'
  end, 'the quick fix to rewrite the category')
  save_and_wait(client, before)

  -- A typed line, then :write.
  vim.api.nvim_buf_set_lines(buf, -1, -1, false, { '', 'Purged nightly at 02:00.' })
  save_and_wait(client, before + 1)

  local changes = T.exec(client, 'kin.memory.changes', vim.empty_dict()).changes
  for _, c in ipairs(changes) do
    T.check(c.path ~= VPATH, 'the person\'s own saves are queued for review: %s', vim.inspect(c))
  end
  T.cli({ 'changes' }) -- a catch-up from the command line: it keeps nothing new and relabels nothing
  local versions = history(client)
  T.eq(versions[1].by, 'by you in the editor', 'the newest version after a catch-up')
  T.eq(versions[2].by, 'by you in the editor', 'the quick fix\'s version after a catch-up')

  -- :KinMemoryHistory shows the same words.
  local calls = T.script_select(function() return nil end)
  vim.cmd('KinMemoryHistory')
  T.wait(function() return calls[1] end, 'the history pick')
  T.check(calls[1].labels[1]:find('by you in the editor', 1, true), 'the versions read %s', vim.inspect(calls[1].labels))
end)
