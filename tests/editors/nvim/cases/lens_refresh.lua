-- The code lens follows what it shows: Mark reviewed run through the server (as a lens click does, no
-- plugin command refreshing afterwards) turns "stale since … | Mark reviewed" into the fresh lifecycle,
-- because the server asks for a refresh (workspace/codeLens/refresh) and the plugin answers it.
local T = dofile(vim.env.KIN_NVIM_HARNESS)

local function lens_titles(buf)
  local out = {}
  for _, lens in ipairs(vim.lsp.codelens.get(buf)) do
    out[#out + 1] = lens.command and lens.command.title or '?'
  end
  return out
end

T.run(function()
  local buf, client = T.open('facts/old-runbook.md')
  T.wait(function()
    return vim.tbl_contains(lens_titles(buf), 'Mark reviewed')
  end, function()
    return 'the stale lens with Mark reviewed (has: ' .. vim.inspect(lens_titles(buf)) .. ')'
  end)
  local _, err = T.exec(client, 'kin.memory.markReviewed', { uri = vim.uri_from_bufnr(buf) })
  T.check(not err, 'markReviewed failed: %s', vim.inspect(err))
  T.wait(function()
    local titles = lens_titles(buf)
    return #titles > 0 and not vim.tbl_contains(titles, 'Mark reviewed') and not titles[1]:find('stale since', 1, true)
  end, function()
    return 'the lens to follow Mark reviewed (has: ' .. vim.inspect(lens_titles(buf)) .. ')'
  end, 5000)
end)
