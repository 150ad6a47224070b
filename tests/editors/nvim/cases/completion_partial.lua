-- Completion that completes: a partly typed value (`category: project-f`, a workspace path cut short)
-- is replaced by the whole value through Neovim's own omni completion (<C-x><C-o>, which the server's
-- textEdit ranges drive), never appended to (`project-fproject-fact`).
local T = dofile(vim.env.KIN_NVIM_HARNESS)

--- Type `typed` as line `lnum` in insert mode, then <C-x><C-o> and take the first match; the line after.
local function complete_line(buf, lnum, typed)
  vim.api.nvim_buf_set_lines(buf, lnum - 1, lnum, false, { '' })
  vim.api.nvim_win_set_cursor(0, { lnum, 0 })
  local keys = function(k)
    return vim.api.nvim_replace_termcodes(k, true, false, true)
  end
  -- The keys run at once (`x`) and Neovim stays in insert mode (`!`) while the server answers; a timer
  -- accepts the match (or gives up) and leaves insert mode, which ends the feedkeys call.
  local deadline = vim.uv.now() + T.timeout
  local timer = assert(vim.uv.new_timer())
  local seen = false
  timer:start(50, 50, vim.schedule_wrap(function()
    local pum = vim.fn.pumvisible() == 1
    if pum or vim.api.nvim_get_current_line() ~= typed or vim.uv.now() > deadline then
      seen = seen or pum or vim.api.nvim_get_current_line() ~= typed
      timer:stop()
      vim.api.nvim_feedkeys(keys((pum and '<C-y>' or '') .. '<Esc>'), 'n', false)
    end
  end))
  vim.api.nvim_feedkeys(keys('i' .. typed .. '<C-x><C-o>'), 'mx!', false)
  timer:close()
  T.check(seen, 'no completion for %q within %d ms', typed, T.timeout)
  return vim.api.nvim_buf_get_lines(buf, lnum - 1, lnum, false)[1]
end

T.run(function()
  local buf = T.open('facts/build.md')
  T.eq(vim.bo[buf].omnifunc, 'v:lua.vim.lsp.omnifunc', 'omnifunc set by Neovim on attach')

  -- The server's answer carries a textEdit over the value typed so far.
  vim.api.nvim_buf_set_lines(buf, 1, 2, false, { 'category: project-f' })
  local result = T.request(buf, 'textDocument/completion', {
    textDocument = { uri = vim.uri_from_bufnr(buf) }, position = { line = 1, character = 19 } })
  local items = result.items or result
  local fact
  for _, item in ipairs(items) do
    if item.label == 'project-fact' then
      fact = item
    end
  end
  T.check(fact and fact.textEdit, 'project-fact with a textEdit: %s', vim.inspect(items))
  T.eq({ fact.textEdit.range.start.character, fact.textEdit.range['end'].character }, { 10, 19 }, 'its range')

  T.eq(complete_line(buf, 2, 'category: project-f'), 'category: project-fact', 'a partly typed category')
  T.eq(complete_line(buf, 2, 'category: epi'), 'category: episodic', 'another one')

  -- A workspace path cut short: the active workspace (this project) completes whole.
  local partial = T.project:sub(1, #T.project - 3)
  T.eq(complete_line(buf, 3, 'workspace: ' .. partial), 'workspace: ' .. T.project, 'a partly typed workspace path')
  T.eq(vim.bo[buf].filetype, 'markdown', 'still markdown')
end)
