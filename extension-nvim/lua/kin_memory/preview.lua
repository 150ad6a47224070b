-- :KinMemoryPreview: the prompt block the agent would get, exactly, with what the caps cut and what the
-- workspace filter hides shown under it (virtual lines, so the buffer stays the block itself).
local core = require('kin_memory.core')
local server = require('kin_memory.server')

local P = {}

local notify, printable = core.notify, core.printable

local preview_ns = vim.api.nvim_create_namespace('kin_memory_preview')
local CAP_WORDS = { lines = '200-line', bytes = '25 KB' }

local function plural(n, one, many)
  return ('%d %s'):format(n, n == 1 and one or many)
end

--- The sentence under the preview's notification: the counts, what the cap cut, what is hidden.
function P.preview_summary(result)
  local parts = { ('prompt block: %s lines, %s bytes'):format(result.lines, result.bytes) }
  local cut = tonumber(result.cut) or 0
  local reason = result.cutReason ~= vim.NIL and result.cutReason or nil
  if cut > 0 and reason then
    parts[#parts + 1] = ('%s past the %s cap %s not inlined'):format(plural(cut, 'line', 'lines'),
      CAP_WORDS[reason] or reason, cut == 1 and 'is' or 'are')
  elseif result.truncated then
    parts[#parts + 1] = 'truncated at the cap: the rest is not in the prompt'
  end
  local hidden = tonumber(result.hidden) or 0
  if hidden > 0 then
    parts[#parts + 1] = ('%s of other workspaces %s hidden (one line says so)'):format(
      plural(hidden, 'memory', 'memories'), hidden == 1 and 'is' or 'are')
  end
  return table.concat(parts, '; ')
end

--- Under the preview's text, as virtual lines (the buffer stays exactly the prompt block): what the
--- cap cut (the memories the listing no longer reaches) and what the workspace filter hides.
local function annotate_preview(buf, result, cut_memories)
  vim.api.nvim_buf_clear_namespace(buf, preview_ns, 0, -1)
  local notes = {}
  local function note(text, hl)
    notes[#notes + 1] = { { text, hl or 'Comment' } }
  end
  note('── ' .. P.preview_summary(result) .. ' ──', 'Title')
  if #cut_memories > 0 then
    note(('Cut by the cap (the agent never sees them listed): %s'):format(plural(#cut_memories, 'memory', 'memories')),
      'WarningMsg')
    for i, path in ipairs(cut_memories) do
      if i > 20 then
        note(('  … and %d more'):format(#cut_memories - 20))
        break
      end
      note('  ' .. printable(path))
    end
  end
  local hidden = tonumber(result.hidden) or 0
  if hidden > 0 then
    note(('Hidden: %s of other workspaces (:KinMemorySearch! or :KinMemoryList! shows them)')
      :format(plural(hidden, 'memory', 'memories')))
  end
  local last = vim.api.nvim_buf_line_count(buf) - 1
  vim.api.nvim_buf_set_extmark(buf, preview_ns, last, 0, { virt_lines = notes })
end

--- :KinMemoryPreview: the prompt block the agent would get, in a scratch buffer; under it, what the
--- caps cut and what the workspace filter hides.
function P.preview()
  local arg = {}
  local ws = core.options.settings.workspace
  if type(ws) == 'string' and ws ~= '' then
    arg.workspace = ws
  end
  server.execute('kin.memory.indexPreview', arg, function(result)
    if type(result) ~= 'table' or type(result.text) ~= 'string' then
      notify('the server sent no prompt block.', vim.log.levels.ERROR)
      return
    end
    local buf = core.scratch('kin-memory://index-preview', vim.split(result.text, '\n', { plain = true }))
    annotate_preview(buf, result, {})
    notify(P.preview_summary(result))
    if not result.truncated then
      return
    end
    -- Which memories the cut took: the visible ones (sessions are never listed) not in the text.
    server.execute('kin.memory.list', vim.empty_dict(), function(list)
      local cut = {}
      for _, m in ipairs(type(list) == 'table' and list.memories or {}) do
        if m.visible and m.category ~= 'session' and not result.text:find('- ' .. m.path .. ' (', 1, true) then
          cut[#cut + 1] = m.path
        end
      end
      table.sort(cut)
      if vim.api.nvim_buf_is_valid(buf) then
        annotate_preview(buf, result, cut)
      end
    end)
  end)
end

return P
