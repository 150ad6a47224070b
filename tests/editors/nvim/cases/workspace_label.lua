-- A workspace label (`settings.workspace = 'team-infra'`, not an absolute path) is honoured verbatim:
-- the server's active workspace is the label (not a path under the current directory), memories
-- stamped with it are visible in the prompt block, search and the health view, and completion offers it.
local T = dofile(vim.env.KIN_NVIM_HARNESS)

T.run(function()
  T.write(T.path('facts/infra.md'), '---\ncategory: project-fact\nworkspace: team-infra\n---\n# Terraform state\n\n'
    .. 'The team keeps its terraform state in the shared bucket, locked by DynamoDB.\n')
  T.write(T.path('facts/billing.md'), '---\ncategory: project-fact\nworkspace: team-billing\n---\n# Invoices\n\n'
    .. 'Invoices are generated on the first of the month by the billing cron.\n')
  T.setup({ workspace = 'team-infra' })
  local buf, client = T.open('facts/build.md')

  local info = T.exec(client, 'kin.memory.info', vim.empty_dict())
  T.eq(info.workspaces, { 'team-infra' }, 'the active workspace is the label itself')

  local preview = T.exec(client, 'kin.memory.indexPreview', { workspace = 'team-infra' })
  T.check(preview.text:find('/memories/facts/infra.md (project-fact)', 1, true), 'the labelled memory is listed:\n%s',
    preview.text)
  T.check(not preview.text:find('billing.md', 1, true), "another label's memory is not listed:\n%s", preview.text)
  vim.cmd('KinMemoryPreview')
  local pbuf = T.wait_buffer('kin-memory://index-preview')
  T.eq(table.concat(vim.api.nvim_buf_get_lines(pbuf, 0, -1, false), '\n'), preview.text, ':KinMemoryPreview shows it')

  local found = T.exec(client, 'kin.memory.search', { query = 'terraform state' })
  T.eq(found.results[1] and found.results[1].path, '/memories/facts/infra.md', 'search finds the labelled memory')

  vim.cmd('KinMemoryHealth')
  local hbuf = T.wait_buffer('kin-memory://health', 10)
  local text = table.concat(vim.api.nvim_buf_get_lines(hbuf, 0, -1, false), '\n')
  T.check(text:find('Workspace: team-infra', 1, true), 'the health view names the label:\n%s', text)

  vim.cmd.edit(vim.fn.fnameescape(T.path('facts/infra.md')))
  local ibuf = vim.api.nvim_get_current_buf()
  T.wait_client(ibuf, 'facts/infra.md')
  vim.api.nvim_buf_set_lines(ibuf, 2, 3, false, { 'workspace: team-i' })
  local result = T.request(ibuf, 'textDocument/completion', {
    textDocument = { uri = vim.uri_from_bufnr(ibuf) }, position = { line = 2, character = 17 } })
  local labels = vim.tbl_map(function(i)
    return i.label
  end, result.items or result)
  T.check(vim.tbl_contains(labels, 'team-infra'), 'completion offers the label: %s', vim.inspect(labels))
  T.check(buf ~= ibuf, 'two memories open')
end)
