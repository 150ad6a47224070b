-- The review of a proposal (a reflection's, an initialization's, a consolidation's, a bulk fix's): every
-- change's diff in a buffer, applied all at once or one by one, or discarded. Nothing is written before.
local core = require('kin_memory.core')
local server = require('kin_memory.server')

local R = {}

local notify, printable, one_line = core.notify, core.printable, core.one_line

local function change_label(c)
  if c.kind == 'rename' then
    return ('rename %s → %s'):format(printable(c.path or '?'), printable(c.newPath ~= vim.NIL and c.newPath or '?'))
  end
  return ('%s %s'):format(printable(c.kind or '?'), printable(c.path or '?'))
end

--- The review buffer: every change's unified diff, each under a `### <n>. <change>` line (n: its number
--- in the proposal, kept for the proposal's life, as `kin-memory proposal show` numbers it), so the
--- change under the cursor is known. Returns the lines and, per line, the index of its change in
--- `changes` (the changes still to decide on).
local function review_lines(proposal, changes, decided)
  -- A consolidation explains each change on a line of its own ("\n- edits …; read …"): keep those lines.
  local parts = vim.split(type(proposal.summary) == 'string' and proposal.summary or '', '\n- ', { plain = true })
  local lines = { '# Proposal ' .. proposal.id, '', one_line(parts[1]) }
  for i = 2, #parts do
    lines[#lines + 1] = '- ' .. one_line(parts[i])
  end
  vim.list_extend(lines, { '', 'a: apply all   c: apply the change under the cursor   d: discard   q: close (keeps the proposal)', '' })
  if decided > 0 then
    lines[#lines + 1] = ('%d change(s) already applied or refused are no longer listed.'):format(decided)
    lines[#lines + 1] = ''
  end
  local owner = {}
  for n, c in ipairs(changes) do
    lines[#lines + 1] = ('### %d. %s'):format((c.index or (n - 1)) + 1, change_label(c))
    owner[#lines] = n
    for _, line in ipairs(vim.split((c.diff or ''):gsub('\n$', ''), '\n', { plain = true })) do
      lines[#lines + 1] = line
      owner[#lines] = n
    end
    lines[#lines + 1] = ''
  end
  return lines, owner
end

--- The file on disk of a store path (`/memories/…`), or nil.
local function disk_path(vpath)
  local root = core.root()
  if not root or type(vpath) ~= 'string' or vpath:sub(1, #'/memories/') ~= '/memories/' then
    return nil
  end
  return root .. vpath:sub(#'/memories' + 1)
end

--- The loaded file buffer showing `file` (compared through real paths), or nil.
local function buffer_of(file)
  if not file then
    return nil
  end
  local realpath = core.realpath
  local want = realpath(file)
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    local name = vim.api.nvim_buf_get_name(buf)
    if vim.api.nvim_buf_is_loaded(buf) and vim.bo[buf].buftype == '' and name ~= '' then
      local real = core.uv.fs_realpath(name) or vim.fs.joinpath(realpath(vim.fs.dirname(name)), vim.fs.basename(name))
      if real == want or name == file then
        return buf
      end
    end
  end
end

--- After applying: buffers of the proposal's files follow the disk, as after any outside write. An
--- unmodified buffer reloads (a deleted or renamed-away memory's buffer is wiped); a buffer with unsaved
--- changes is left alone (the server did not write its file: it reported a conflict).
local function reload_buffers(changes, applied)
  local done = {}
  for _, p in ipairs(applied) do
    done[p] = true
  end
  for _, c in ipairs(changes) do
    local gone = done[c.newPath ~= vim.NIL and c.newPath or c.path] and (c.kind == 'delete' or c.kind == 'rename')
    for _, vpath in ipairs({ c.path, c.newPath ~= vim.NIL and c.newPath or nil }) do
      local buf = buffer_of(disk_path(vpath))
      if buf and not vim.bo[buf].modified then
        if gone and vpath == c.path then
          pcall(vim.api.nvim_buf_delete, buf, {})
        else
          vim.cmd('silent! checktime ' .. buf)
        end
      end
    end
  end
end

--- Opens the review of a proposal (drawn before any question) with its keys. `c` applies one change
--- and keeps reviewing the others; `a` applies every change still listed; `d` discards what is left.
function R.review(proposal)
  local pending = vim.deepcopy(proposal.changes)
  for i, c in ipairs(pending) do
    c.index = i - 1 -- changes are chosen by their index, never by path (a rename and a create can share one)
  end
  local decided = 0
  local lines, owner = review_lines(proposal, pending, decided)
  local name = 'kin-memory://proposal/' .. proposal.id
  local buf, win = core.scratch(name, lines, 'diff')
  local function close()
    core.close_window(win)
    if vim.api.nvim_buf_is_valid(buf) then -- the review was the last window: show another buffer there
      pcall(vim.api.nvim_buf_delete, buf, { force = true })
    end
  end
  local function apply(chosen)
    local args = { id = proposal.id }
    if #chosen < #proposal.changes then
      args.changes = vim.tbl_map(function(c)
        return c.index
      end, chosen)
    end
    server.execute('kin.memory.applyProposal', args, function(result)
      local applied = type(result) == 'table' and type(result.applied) == 'table' and result.applied or {}
      local conflicts = type(result) == 'table' and type(result.conflicts) == 'table' and result.conflicts or {}
      local message = ('applied %d of %d change(s)'):format(#applied, #chosen)
      for _, c in ipairs(conflicts) do
        message = message .. ('; not applied: %s (%s)'):format(printable(c.path or '?'), one_line(c.reason))
      end
      -- Applied or refused, a chosen change is decided: the review keeps only the others.
      local picked = {}
      for _, c in ipairs(chosen) do
        picked[c] = true
      end
      pending = vim.tbl_filter(function(c)
        return not picked[c]
      end, pending)
      decided = #proposal.changes - #pending
      if #pending == 0 or not vim.api.nvim_buf_is_valid(buf) then
        close()
      else
        lines, owner = review_lines(proposal, pending, decided)
        buf, win = core.scratch(name, lines, 'diff')
        message = message .. ('; %d change(s) still to review'):format(#pending)
      end
      notify(message, #conflicts > 0 and vim.log.levels.WARN or vim.log.levels.INFO, message) -- one line
      reload_buffers(chosen, applied)
    end)
  end
  local map = function(lhs, fn, desc)
    vim.keymap.set('n', lhs, fn, { buffer = buf, nowait = true, desc = desc })
  end
  map('a', function() apply(pending) end, 'kin-memory: apply every proposed change')
  map('c', function()
    local n = owner[vim.api.nvim_win_get_cursor(0)[1]]
    if not n then
      notify('put the cursor on a change first', vim.log.levels.WARN)
      return
    end
    apply({ pending[n] })
  end, 'kin-memory: apply the change under the cursor')
  map('d', function()
    server.execute('kin.memory.discardProposal', { id = proposal.id }, function()
      close()
      notify(decided > 0 and 'proposal discarded; nothing else was written' or 'proposal discarded; nothing was written')
    end)
  end, 'kin-memory: discard the proposal')
  map('q', function()
    close()
    if decided == 0 then
      notify(('review closed; nothing was written. The proposal is kept for 7 days: `kin-memory proposal show %s`')
        :format(proposal.id))
    end
  end, 'kin-memory: close the review (the proposal is kept)')
  return buf, win
end

--- A pass's proposal opens in the review; none means nothing to review (the summary says why). `what`
--- names the pass in that sentence ('reflection', 'consolidation', …).
function R.review_or_say(what)
  return function(proposal)
    local changes = type(proposal) == 'table' and proposal.changes or {}
    if type(changes) ~= 'table' or #changes == 0 then
      local summary = type(proposal) == 'table' and one_line(proposal.summary or '') or ''
      notify(what .. ' proposes no changes' .. (summary ~= '' and (': ' .. summary) or ''))
      return
    end
    vim.api.nvim_echo({}, false, {}) -- the "reflecting on …" status is done: the review says the rest
    R.review(proposal)
  end
end

return R
