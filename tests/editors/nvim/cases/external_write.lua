-- Files the agent writes while Neovim is open: a new memory and a change to an existing one that is
-- not open get their diagnostics pushed without opening them; fixing it on disk clears them.
local T = dofile(vim.env.KIN_NVIM_HARNESS)

local function diags_for(path, code)
  local buf = vim.fn.bufnr(path)
  return buf ~= -1 and T.diags(buf, code)[1] or nil
end

local function wait_diag_for(path, code)
  return T.wait(function()
    return diags_for(path, code)
  end, ('diagnostic %s for %s, never opened'):format(code, path), 5000)
end

T.run(function()
  local buf = T.open('facts/build.md')
  local created = T.path('facts/agent-wrote.md')
  local existing = T.path('prefs/tone.md')
  T.eq(vim.fn.bufnr(existing), -1, 'prefs/tone.md has no buffer')
  -- Whole-store diagnostics (a closed, expired episode) mean the server finished loading; its file
  -- watcher starts right after, so give it a beat to set up before the agent writes.
  wait_diag_for(T.path('episodes/ancient-incident.md'), 'KM402')
  vim.wait(300)

  local t0 = vim.uv.hrtime()
  T.write(created, '---\ncategory: epsiodic\nworkspace: global\n---\n# Agent wrote this\n\nA new note.\n')
  local d = wait_diag_for(created, 'KM201')
  T.log(('new file -> KM201 in %.0f ms'):format((vim.uv.hrtime() - t0) / 1e6))
  T.eq({ d.lnum, d.col, d.end_col }, { 1, 10, 18 }, 'KM201 range on the new file')
  T.eq(vim.fn.bufloaded(vim.fn.bufnr(created)), 0, 'the new file was not loaded into a buffer')

  t0 = vim.uv.hrtime()
  T.write(existing, '---\ncategory: Preference\n---\n# Tone\n\nKeep answers short; no emoji.\n')
  wait_diag_for(existing, 'KM202')
  T.log(('changed file -> KM202 in %.0f ms'):format((vim.uv.hrtime() - t0) / 1e6))

  T.write(existing, '---\ncategory: preference\n---\n# Tone\n\nKeep answers short; no emoji.\n')
  T.wait(function()
    return diags_for(existing, 'KM202') == nil
  end, 'KM202 to clear after the fix on disk', 5000)

  os.remove(created)
  T.wait(function()
    return diags_for(created, 'KM201') == nil
  end, 'diagnostics of a deleted memory to clear', 5000)
  T.eq(vim.api.nvim_get_current_buf(), buf, 'the current buffer did not change')
end)
