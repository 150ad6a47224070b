-- Completion in frontmatter: keys, category values with their lifecycle, workspace values (the
-- active workspace is the directory Neovim runs in).
local T = dofile(vim.env.KIN_NVIM_HARNESS)

local function complete(buf, line, character)
  local result = T.request(buf, 'textDocument/completion', {
    textDocument = { uri = vim.uri_from_bufnr(buf) },
    position = { line = line, character = character },
  })
  local items = result and (result.items or result) or {}
  local by_label = {}
  for _, item in ipairs(items) do
    by_label[item.label] = item
  end
  return by_label, items
end

local function doc(item)
  local d = item.documentation
  return type(d) == 'table' and d.value or d or ''
end

T.run(function()
  local buf = T.open('facts/build.md')
  vim.api.nvim_buf_set_lines(buf, 1, 2, false, { 'category: ' })
  local values, items = complete(buf, 1, 10)
  T.eq(#items, 4, 'number of category values')
  for _, c in ipairs({ 'project-fact', 'preference', 'episodic', 'session' }) do
    T.check(values[c], 'category value %s offered (got %s)', c, vim.inspect(vim.tbl_keys(values)))
  end
  T.check(doc(values.episodic):find('42 days', 1, true), 'episodic documents its 42 days: %q', doc(values.episodic))
  T.check(doc(values.session):find('24 hours', 1, true), 'session documents its 24 hours: %q', doc(values.session))

  vim.api.nvim_buf_set_lines(buf, 2, 3, false, { 'workspace: ' })
  local workspaces = complete(buf, 2, 11)
  T.check(workspaces[T.project], 'the active workspace %s offered (got %s)', T.project, vim.inspect(vim.tbl_keys(workspaces)))
  T.check(workspaces.global, 'global offered (got %s)', vim.inspect(vim.tbl_keys(workspaces)))

  vim.api.nvim_buf_set_lines(buf, 2, 3, false, { '' }) -- drop the workspace line: keys not present are offered
  local keys = complete(buf, 2, 0)
  T.eq(vim.tbl_keys(keys), { 'workspace' }, 'keys offered on an empty frontmatter line (category is present)')

  local body = complete(buf, 6, 3) -- in the body: not frontmatter, nothing to offer
  T.eq(vim.tbl_keys(body), {}, 'completion in the body')
end)
