-- The frontmatter's own highlights on a memory buffer, added on top of whatever highlights markdown
-- (Vim syntax with its YAML head, or treesitter): extmarks on the fences, the `category:` and
-- `workspace:` keys and their values, so the frontmatter stands out with either highlighter and
-- without a filetype of our own. Only the frontmatter is scanned (a bounded number of lines).
local F = {}

local ns = vim.api.nvim_create_namespace('kin_memory_frontmatter')
local MAX_LINES = 64 -- a frontmatter longer than this is not one the server reads either
local CATEGORIES = { ['project-fact'] = true, preference = true, episodic = true, session = true }

F.ns = ns

local function define_highlights()
  local set = vim.api.nvim_set_hl
  set(0, 'KinMemoryFence', { default = true, link = 'Delimiter' })
  set(0, 'KinMemoryKey', { default = true, link = 'Identifier' })
  set(0, 'KinMemoryCategory', { default = true, link = 'Type' })
  set(0, 'KinMemoryWorkspace', { default = true, link = 'String' })
end

--- Mark the frontmatter of `buf` again; returns how many marks were set.
function F.mark(buf)
  if not vim.api.nvim_buf_is_valid(buf) then
    return 0
  end
  vim.api.nvim_buf_clear_namespace(buf, ns, 0, -1)
  local lines = vim.api.nvim_buf_get_lines(buf, 0, MAX_LINES, false)
  if lines[1] ~= '---' then
    return 0
  end
  local count = 0
  local function mark(row, col, end_col, group)
    vim.api.nvim_buf_set_extmark(buf, ns, row, col, { end_col = end_col, hl_group = group, priority = 90 })
    count = count + 1
  end
  mark(0, 0, 3, 'KinMemoryFence')
  for i = 2, #lines do
    local line = lines[i]
    if line == '---' then
      mark(i - 1, 0, 3, 'KinMemoryFence')
      break
    end
    local key, gap, value = line:match('^(%a+)(:%s*)(.-)%s*$')
    if key == 'category' or key == 'workspace' then
      mark(i - 1, 0, #key, 'KinMemoryKey')
      if value ~= '' and (key == 'workspace' or CATEGORIES[value]) then
        local col = #key + #gap
        mark(i - 1, col, col + #value, key == 'category' and 'KinMemoryCategory' or 'KinMemoryWorkspace')
      end
    end
  end
  return count
end

local attached = {}
local colors_kept = false

--- Start marking `buf` (a memory buffer the client attached to), and keep the marks up to date.
function F.attach(buf)
  define_highlights()
  if not colors_kept then -- a colour scheme clears highlight groups: define ours again after one
    colors_kept = true
    vim.api.nvim_create_autocmd('ColorScheme', { callback = define_highlights })
  end
  F.mark(buf)
  if attached[buf] then
    return
  end
  attached[buf] = true
  vim.api.nvim_buf_attach(buf, false, {
    on_lines = function(_, b, _, first)
      if first < MAX_LINES then
        vim.schedule(function()
          F.mark(b)
        end)
      end
    end,
    on_detach = function(_, b)
      attached[b] = nil
    end,
    on_reload = function(_, b)
      vim.schedule(function()
        F.mark(b)
      end)
    end,
  })
end

return F
