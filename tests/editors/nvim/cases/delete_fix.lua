-- The "Delete this memory" quick fix on an expired episode, through Neovim's own code-action flow: it
-- asks with vim.ui.select; Cancel keeps the file, Delete removes it through the memory tool (an audit
-- line names it) and wipes its buffer.
local T = dofile(vim.env.KIN_NVIM_HARNESS)

local function exists(p)
  return vim.uv.fs_stat(p) ~= nil
end

local function apply_delete_fix(buf, d)
  vim.api.nvim_set_current_buf(buf)
  vim.api.nvim_win_set_cursor(0, { d.lnum + 1, d.col })
  vim.lsp.buf.code_action({
    apply = true,
    filter = function(a)
      return a.title == 'Delete this memory'
    end,
  })
end

T.run(function()
  local rel = 'episodes/ancient-incident.md'
  local path = T.path(rel)
  local buf = T.open(rel)
  local d = T.wait_diag(buf, 'KM402')

  local actions = T.quick_fixes(buf, d)
  local delete = vim.tbl_filter(function(a)
    return a.title == 'Delete this memory'
  end, actions or {})[1]
  T.check(delete, 'a "Delete this memory" fix is offered: %s', vim.inspect(actions))
  T.check(delete.edit == nil, 'the fix is not a file edit Neovim would apply at once: %s', vim.inspect(delete))
  T.eq(delete.command and delete.command.command, 'kinMemory.confirmDelete', 'the fix\'s command')

  local answer = 'Cancel'
  local calls = T.script_select(function()
    return answer == 'Cancel' and 1 or 2
  end)
  apply_delete_fix(buf, d)
  T.wait(function()
    return T.noted('kept /memories/' .. rel:gsub('%-', '%%-'))
  end, 'Cancel to say the memory was kept')
  T.eq(calls[1].items, { 'Cancel', 'Delete' }, 'confirmation choices (Cancel first: the default)')
  T.check(calls[1].prompt:find('/memories/' .. rel, 1, true) and calls[1].prompt:find('history keeps it', 1, true)
    and calls[1].prompt:find(':KinMemoryRevert', 1, true),
    'the question names the memory: %q', calls[1].prompt)
  T.check(exists(path), 'Cancel must keep %s', path)

  answer = 'Delete'
  apply_delete_fix(buf, d)
  T.wait(function()
    return not exists(path)
  end, 'Delete to remove the file from disk')
  T.wait(function()
    return T.noted('deleted /memories/')
  end, 'the deletion to be reported')
  T.eq(#calls, 2, 'one question per application of the fix')
  local audit = T.read(T.store .. '/.kin-index/audit.jsonl') or ''
  local audited = false
  for _, line in ipairs(vim.split(audit, '\n', { trimempty = true })) do
    local entry = vim.json.decode(line)
    audited = audited or (entry.command == 'delete' and entry.outcome == 'ok'
      and vim.deep_equal(entry.paths, { '/memories/' .. rel }))
  end
  T.check(audited, 'an audit line for the deletion:\n%s', audit)
  T.check(not vim.api.nvim_buf_is_valid(buf) or not vim.api.nvim_buf_is_loaded(buf),
    'the deleted memory\'s buffer is wiped')
end)
