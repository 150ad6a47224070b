-- Hover through Neovim's own float (vim.lsp.buf.hover): the category's lifecycle on the key, and the
-- related memories from recall on body text.
local T = dofile(vim.env.KIN_NVIM_HARNESS)

local function float_text()
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_config(win).relative ~= '' then
      local buf = vim.api.nvim_win_get_buf(win)
      return table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), '\n'), win
    end
  end
end

local function hover_at(lnum, col)
  for _, win in ipairs(vim.api.nvim_list_wins()) do -- close any previous float
    if vim.api.nvim_win_get_config(win).relative ~= '' then
      vim.api.nvim_win_close(win, true)
    end
  end
  vim.api.nvim_win_set_cursor(0, { lnum, col })
  vim.lsp.buf.hover()
  return T.wait(float_text, ('a hover float at %d:%d'):format(lnum, col))
end

T.run(function()
  local buf, client = T.open('facts/backups.md')
  -- Recall answers once its index has synced; search is the cheapest way to know.
  T.wait(function()
    local result = T.exec(client, 'kin.memory.search', { query = 'replica' })
    return result and #result.results > 0
  end, 'the recall index to answer a search')

  local key = hover_at(2, 2) -- on `category`
  T.check(key:find('category: project%-fact', 1, false), 'key hover names the category:\n%s', key)
  local stale_on = os.date('%Y-%m-%d', os.time() + 180 * 86400)
  T.check(key:find('turns stale ' .. stale_on, 1, true), 'key hover gives the stale date %s:\n%s', stale_on, key)

  local body = hover_at(7, 35) -- on "replica" in the body
  local plain = body:gsub('\\', '')
  T.check(plain:find('Related memories', 1, true), 'body hover lists related memories:\n%s', body)
  T.check(plain:find('/memories/facts/deploy-topology.md', 1, true), 'deploy-topology is related:\n%s', body)
  T.check(not plain:find('/memories/facts/backups.md', 1, true), 'the hovered file itself is not listed:\n%s', body)
  T.check(not plain:find('sessions/', 1, true), 'session memories are never recalled:\n%s', body)
  T.eq(vim.api.nvim_get_current_buf(), buf, 'the hover left the cursor in the memory')

  -- A misspelt category's hover: its value in a code span with no padding (Neovim hides the backticks,
  -- so padding read as doubled spaces: "the value  projcet-fact  reads as").
  T.open('facts/cache.md')
  local value = hover_at(2, 14) -- on `projcet-fact`
  T.log('value hover:', value)
  T.check(value:find('projcet-fact', 1, true), 'the hover names the value:\n%s', value)
  for line in value:gmatch('[^\n]+') do
    local shown = line:gsub('`', '') -- as Neovim shows it, the backticks concealed
    T.check(not vim.trim(shown):find('  ', 1, true), 'doubled spaces in the hover line %q', shown)
  end
end)
