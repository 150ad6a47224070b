-- A memory stays Markdown: its filetype is `markdown`, a user's `FileType markdown` autocmd fires on it,
-- markdown's syntax still colours the frontmatter (YAML head) and the plugin's own marks sit on top;
-- the kin-memory client attaches by path (a markdown file outside the store gets none). The server's
-- code lens is visible on the first line, and a command refreshes it; `codelens = false` turns it off.
local T = dofile(vim.env.KIN_NVIM_HARNESS)
local kin = require('kin_memory')

local fired = {}
vim.api.nvim_create_autocmd('FileType', {
  pattern = 'markdown',
  callback = function(args)
    fired[vim.uv.fs_realpath(args.file) or args.file] = true
  end,
})
vim.cmd('syntax on')

--- What Neovim drew for the code lens on buf (virtual text in its codelens namespaces).
local function lens_text(buf)
  local texts = {}
  for name, id in pairs(vim.api.nvim_get_namespaces()) do
    if name:find('^nvim%.lsp%.codelens') then
      for _, m in ipairs(vim.api.nvim_buf_get_extmarks(buf, id, 0, -1, { details = true })) do
        for _, chunk in ipairs(m[4].virt_text or {}) do
          texts[#texts + 1] = chunk[1]
        end
      end
    end
  end
  return table.concat(texts)
end

T.run(function()
  local buf = T.open('facts/old-runbook.md')
  T.eq(vim.bo[buf].filetype, 'markdown', 'filetype of a memory')
  T.check(fired[T.path('facts/old-runbook.md')], 'the FileType markdown autocmd fired on the memory')

  -- Frontmatter highlighting: markdown's syntax (its YAML head) and the plugin's marks.
  local stack = vim.tbl_map(function(id)
    return vim.fn.synIDattr(id, 'name')
  end, vim.fn.synstack(2, 1))
  T.check(#stack > 0 and table.concat(stack, ' '):find('yaml'), 'markdown syntax colours the frontmatter: %s',
    vim.inspect(stack))
  local marks = vim.api.nvim_buf_get_extmarks(buf, require('kin_memory.frontmatter').ns, 0, -1, { details = true })
  local groups = {}
  for _, m in ipairs(marks) do
    groups[m[4].hl_group] = true
  end
  T.eq(groups, { KinMemoryFence = true, KinMemoryKey = true, KinMemoryCategory = true, KinMemoryWorkspace = true },
    'the frontmatter marks')

  -- The code lens (category · visibility · lifecycle, and Mark reviewed on this stale fact) is drawn.
  local text = T.wait(function()
    local t = lens_text(buf)
    return t:find('project%-fact') and t
  end, function()
    return 'a code lens on the memory (drawn: ' .. lens_text(buf) .. ')'
  end)
  T.log('lens:', text)
  T.check(text:find('stale', 1, true) and text:find('Mark reviewed', 1, true), 'the lens of a stale fact: %s', text)

  -- A command changes what the lens says: it is refreshed without the user doing anything.
  vim.cmd('KinMemoryReviewed')
  T.wait(function()
    local t = lens_text(buf)
    return t:find('project%-fact') and not t:find('Mark reviewed', 1, true)
  end, function()
    return 'the lens to drop "Mark reviewed" after :KinMemoryReviewed (drawn: ' .. lens_text(buf) .. ')'
  end)

  -- A markdown file outside the store: markdown, no kin-memory client.
  vim.cmd.edit(vim.fn.fnameescape(T.project .. '/notes.md'))
  vim.wait(300)
  T.eq(vim.bo.filetype, 'markdown', 'filetype of a project file')
  T.eq(#vim.lsp.get_clients({ bufnr = 0, name = 'kin_memory' }), 0, 'kin-memory clients on a project file')

  -- codelens = false: a memory opened then shows none.
  kin.options.codelens = false
  local other = T.open('facts/deploy-topology.md')
  vim.wait(800)
  T.eq(lens_text(other), '', 'code lens drawn with codelens = false')
  T.eq(vim.lsp.codelens.get(other), {}, 'code lens asked for with codelens = false')
end)
