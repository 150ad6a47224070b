-- :KinMemoryHealth: the store at a glance (`kin.memory.stats`) as a text buffer with folds: first what
-- needs action (errors, secrets, sync conflicts, from the server's diagnostics), then counts per
-- category with text bars, what expires in the next 7 days, quiet memories by missing repository,
-- duplicate and contradiction groups, the prompt block against its caps, the review queue, the index,
-- the memory switch and where the store is. `<CR>` opens the memory on the line (or puts the memories
-- behind a count in the quickfix list), `t` turns memory on or off, `r` refreshes, `q` closes.
-- Every text from the store (paths, stamps, reasons) is shown through printable(): one line per item,
-- control characters (terminal escapes included) spelled out as \xNN.
local core = require('kin_memory.core')
local server = require('kin_memory.server')

local V = {}

local NAME = 'kin-memory://health'
local CATEGORIES = { 'project-fact', 'preference', 'episodic', 'session' }
local STATUSES = { 'ok', 'stale', 'expiring', 'expired', 'quiet' }
local BAR = 24 -- the widest bar, in cells
local ns = vim.api.nvim_create_namespace('kin_memory_health')

local notify = core.notify

local function text(s)
  return core.printable(core.one_line(s))
end

--- A path as the user types it: under $HOME as ~/….
local function home(path)
  return text(vim.fn.fnamemodify(tostring(path or ''), ':~'))
end

local function num(v)
  return tonumber(v) or 0
end

local function bar(n, max)
  local cells = max > 0 and math.floor(BAR * n / max + 0.5) or 0
  if n > 0 and cells == 0 then
    cells = 1
  end
  return string.rep('█', cells) .. string.rep('·', BAR - cells)
end

local ROOT_SOURCES = {
  argument = 'given to the server with --root',
  KIN_MEMORY_DIR = 'the KIN_MEMORY_DIR environment variable',
  ['editor setting'] = 'settings.memoryDir in setup()',
  ['global settings'] = 'memory_dir in the global settings file',
  default = 'the default location',
}

local ATTENTION_ORDER = { error = 1, secret = 2, conflict = 3 }
local ATTENTION_WORDS = { error = 'error', secret = 'secret', conflict = 'sync conflict' }

--- The findings the server published for the store's memories that need action, errors first, then
--- secrets (KM602), then sync conflicts (KM800): {kind, code, message, rel, uri, lnum}.
function V.attention(root)
  local prefix = (vim.uv.fs_realpath(tostring(root or '')) or tostring(root or '')) .. '/'
  local out = {}
  for _, d in ipairs(vim.diagnostic.get(nil)) do
    local kind = (d.severity == vim.diagnostic.severity.ERROR and 'error') or (d.code == 'KM602' and 'secret')
      or (d.code == 'KM800' and 'conflict') or nil
    local name = vim.api.nvim_buf_is_valid(d.bufnr) and vim.api.nvim_buf_get_name(d.bufnr) or ''
    local real = vim.uv.fs_realpath(name) or name
    if kind and (d.source == 'kin-memory' or d.source == 'sync') and real:sub(1, #prefix) == prefix then
      out[#out + 1] = { kind = kind, code = tostring(d.code or ''), message = d.message or '', rel = real:sub(#prefix + 1),
        uri = vim.uri_from_fname(real), lnum = d.lnum or 0 }
    end
  end
  table.sort(out, function(a, b)
    if a.kind ~= b.kind then
      return ATTENTION_ORDER[a.kind] < ATTENTION_ORDER[b.kind]
    end
    if a.rel ~= b.rel then
      return a.rel < b.rel
    end
    return a.lnum < b.lnum
  end)
  return out
end

--- The buffer's lines, and per line what <CR> does there: {uri=…} (open it), {uris=…, title=…} (quickfix),
--- {run=fn}; `spans` give a line's parts their own action (a status count on a category line).
local function render(stats, memories)
  local lines, actions, spans, sections, marks = {}, {}, {}, {}, {}
  local function add(line, action, hl)
    lines[#lines + 1] = line
    actions[#lines] = action
    if hl then
      marks[#marks + 1] = { #lines, 0, #line, hl }
    end
    return #lines
  end
  local section_start
  local function section(title)
    if section_start then
      sections[#sections + 1] = { section_start, #lines }
    end
    add('')
    section_start = add(title, nil, 'Title')
  end
  local function uris_of(filter)
    local out = {}
    for _, m in ipairs(memories) do
      if filter(m) then
        out[#out + 1] = m.uri
      end
    end
    return out
  end

  local quiet = {}
  for _, q in ipairs(type(stats.quietByRepository) == 'table' and stats.quietByRepository or {}) do
    for _, uri in ipairs(type(q.uris) == 'table' and q.uris or {}) do
      quiet[uri] = true
    end
  end

  local on = stats.memoryEnabled ~= false
  add('Memory health', nil, 'Title')
  add(('Store: %s'):format(home(stats.root)), { run = function() vim.cmd('KinMemoryOpenStore') end })
  add(('  found through %s'):format(ROOT_SOURCES[stats.rootSource] or text(stats.rootSource)), nil, 'Comment')
  local l = add(('Memory: %s for agents   (t turns it %s)'):format(on and 'ON' or 'OFF', on and 'off' or 'on'),
    { run = V.toggle })
  marks[#marks + 1] = { l, 8, on and 10 or 11, on and 'DiagnosticOk' or 'DiagnosticWarn' }
  local ws = type(stats.workspaces) == 'table' and stats.workspaces or {}
  add(('Workspace: %s'):format(#ws > 0 and table.concat(vim.tbl_map(home, ws), ', ')
    or "none (the operator's view: every memory counts)"))
  add('<CR> opens what is under the cursor · t memory on/off · r refresh · q close · za folds', nil, 'Comment')

  -- What needs action comes first: errors, memories that look like secrets, sync conflicts.
  local attention = V.attention(stats.root)
  section(#attention > 0 and ('Needs your attention: %d finding%s'):format(#attention, #attention == 1 and '' or 's')
    or 'Needs your attention: nothing (no errors, no secrets, no sync conflicts)')
  for _, a in ipairs(attention) do
    local n = add(('  %-13s %s:%d  %s: %s'):format(ATTENTION_WORDS[a.kind], text(a.rel), a.lnum + 1, text(a.code),
      text(a.message)), { uri = a.uri, lnum = a.lnum })
    marks[#marks + 1] = { n, 2, 2 + #ATTENTION_WORDS[a.kind], a.kind == 'error' and 'ErrorMsg' or 'DiagnosticWarn' }
  end

  -- Per category: a bar of its total against the largest, then each status's count.
  local by = type(stats.byCategory) == 'table' and stats.byCategory or {}
  local max, total = 0, 0
  for _, cat in ipairs(CATEGORIES) do
    local c = by[cat] or {}
    max = math.max(max, num(c.total))
    total = total + num(c.total)
  end
  section(('By category: %d memories'):format(total))
  for _, cat in ipairs(CATEGORIES) do
    local c = by[cat] or {}
    local head = ('  %-13s %4d  %s '):format(cat, num(c.total), bar(num(c.total), max))
    local line = head
    local parts = {}
    for _, st in ipairs(STATUSES) do
      if num(c[st]) > 0 then
        local part = ('%s %d'):format(st, num(c[st]))
        local s = #line + 2
        line = line .. '  ' .. part
        parts[#parts + 1] = { s, #line, {
          title = ('%s memories: %s'):format(cat, st),
          uris = uris_of(function(m)
            if m.category ~= cat then
              return false
            end
            if st == 'quiet' then
              return quiet[m.uri] == true
            end
            return m.status == st and not quiet[m.uri]
          end),
        }, st == 'ok' and 'DiagnosticOk' or (st == 'expired' or st == 'stale') and 'DiagnosticWarn' or 'DiagnosticInfo' }
      end
    end
    local n = add(line, {
      title = cat .. ' memories',
      uris = uris_of(function(m)
        return m.category == cat
      end),
    })
    spans[n] = parts
    local bar_start = #('  %-13s %4d  '):format(cat, 0)
    marks[#marks + 1] = { n, bar_start, #head - 1, 'Special' }
    for _, p in ipairs(parts) do
      marks[#marks + 1] = { n, p[1], p[2], p[4] }
    end
  end

  local soon = type(stats.expiringSoon) == 'table' and stats.expiringSoon or {}
  section(('Expiring in the next 7 days: %d'):format(#soon))
  if #soon == 0 then
    add('  nothing', nil, 'Comment')
  end
  for _, e in ipairs(soon) do
    local days = num(e.days)
    local when = days <= 0 and 'today' or days == 1 and 'in 1 day' or ('in %d days'):format(days)
    add(('  %s  %-10s %-12s %s'):format(text(e.expires), when, text(e.category), text(e.path)), { uri = e.uri })
  end

  local quiet_groups = type(stats.quietByRepository) == 'table' and stats.quietByRepository or {}
  local nquiet = 0
  for _, q in ipairs(quiet_groups) do
    nquiet = nquiet + #(type(q.paths) == 'table' and q.paths or {})
  end
  section(('Quiet (stamped to a repository that no longer exists): %d'):format(nquiet))
  if nquiet == 0 then
    add('  nothing', nil, 'Comment')
  end
  for _, q in ipairs(quiet_groups) do
    local paths = type(q.paths) == 'table' and q.paths or {}
    local uris = type(q.uris) == 'table' and q.uris or {}
    add(('  %s  (%d)  :KinMemoryRestamp re-stamps them'):format(text(q.workspace), #paths),
      { title = 'quiet memories of ' .. text(q.workspace), uris = uris })
    for i, p in ipairs(paths) do
      add('    ' .. text(p), { uri = uris[i] })
    end
  end

  local groups = type(stats.groups) == 'table' and stats.groups or {}
  section(('Duplicates and contradictions: %d'):format(#groups))
  if #groups == 0 then
    add('  nothing', nil, 'Comment')
  end
  for _, g in ipairs(groups) do
    local paths = type(g.paths) == 'table' and g.paths or {}
    local uris = type(g.uris) == 'table' and g.uris or {}
    add(('  %s: %s'):format(text(g.kind), text(g.reason)), { title = text(g.kind) .. ' group', uris = uris },
      g.kind == 'contradiction' and 'DiagnosticWarn' or nil)
    for i, p in ipairs(paths) do
      add('    ' .. text(p), { uri = uris[i] })
    end
  end

  local pb = type(stats.promptBlock) == 'table' and stats.promptBlock or {}
  section(('Prompt block%s'):format(pb.truncated and ': cut at its cap' or ''))
  local preview = { run = function() vim.cmd('KinMemoryPreview') end }
  local maxl, maxb = num(pb.maxLines), num(pb.maxBytes)
  for _, row in ipairs({ { 'lines', num(pb.lines), maxl }, { 'bytes', num(pb.bytes), maxb } }) do
    local head = ('  %s %6d / %-6d '):format(row[1], row[2], row[3])
    local n = add(head .. bar(math.min(row[2], row[3]), row[3]), preview)
    marks[#marks + 1] = { n, #head, #lines[n], row[2] >= row[3] and 'DiagnosticWarn' or 'Special' }
  end

  section('Review queue and index')
  local queue = num(stats.reviewQueue)
  add(('  review queue: %d change%s since the last review'):format(queue, queue == 1 and '' or 's'),
    { run = function() vim.cmd('KinMemoryChanges') end })
  local idx = type(stats.indexState) == 'table' and stats.indexState or {}
  add(('  recall index: %s, %d memories'):format(text(idx.state), num(idx.memories)),
    { run = function() vim.cmd('KinMemoryReindex') end })
  if idx.state == 'ready' and num(idx.memories) < total then
    local missing = total - num(idx.memories)
    add(('  %d memor%s counted above not in the index: session memories and unreadable files are not searched')
      :format(missing, missing == 1 and 'y' or 'ies'), nil, 'Comment')
  end
  sections[#sections + 1] = { section_start, #lines }
  return lines, actions, spans, sections, marks
end

V.last = nil -- the last stats shown (for tests and the toggle)

local function show(stats, memories)
  local lines, actions, spans, sections, marks = render(stats, memories)
  local buf, win = core.scratch(NAME, lines, 'kin_memory_health')
  V.last = stats
  V.actions, V.spans = actions, spans
  vim.api.nvim_buf_clear_namespace(buf, ns, 0, -1)
  for _, m in ipairs(marks) do
    if m[3] > m[2] then
      pcall(vim.api.nvim_buf_set_extmark, buf, ns, m[1] - 1, m[2], { end_col = m[3], hl_group = m[4] })
    end
  end
  vim.api.nvim_win_call(win, function()
    vim.wo.foldmethod = 'manual'
    vim.wo.foldenable = true
    vim.wo.wrap = false
    vim.cmd('silent! normal! zE')
    for _, s in ipairs(sections) do
      if s[2] > s[1] then
        vim.cmd(('silent! %d,%dfold'):format(s[1], s[2]))
      end
    end
    vim.cmd('silent! normal! zR') -- folds exist to be closed (za); everything shows at first
  end)
  local map = function(lhs, fn, desc)
    vim.keymap.set('n', lhs, fn, { buffer = buf, nowait = true, desc = desc })
  end
  map('<CR>', V.activate, 'kin-memory: open what is under the cursor')
  map('t', V.toggle, 'kin-memory: turn memory on or off')
  map('r', V.open, 'kin-memory: refresh the health view')
  return buf
end

--- <CR>: the action of the span under the cursor, else of the line.
function V.activate()
  local row, col = unpack(vim.api.nvim_win_get_cursor(0))
  local action = V.actions and V.actions[row]
  for _, span in ipairs(V.spans and V.spans[row] or {}) do
    if col >= span[1] and col < span[2] then
      action = span[3]
    end
  end
  if not action then
    return
  end
  if action.run then
    return action.run()
  end
  if action.uri then
    -- In a window of files beside the view (a new one above it when there is none): the view stays.
    local view = vim.api.nvim_get_current_win()
    local target
    for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
      if w ~= view and vim.bo[vim.api.nvim_win_get_buf(w)].buftype == '' then
        target = target or w
      end
    end
    if target then
      vim.api.nvim_set_current_win(target)
    else
      vim.cmd('aboveleft split')
    end
    vim.cmd.edit(vim.fn.fnameescape(vim.uri_to_fname(action.uri)))
    if action.lnum then
      pcall(vim.api.nvim_win_set_cursor, 0, { action.lnum + 1, 0 })
    end
    return
  end
  local uris = action.uris or {}
  if #uris == 0 then
    notify('no memory behind this line.')
    return
  end
  local items = vim.tbl_map(function(uri)
    return { filename = vim.uri_to_fname(uri), lnum = 1, text = action.title }
  end, uris)
  vim.fn.setqflist({}, ' ', { title = 'kin-memory: ' .. action.title, items = items })
  vim.cmd('botright copen')
end

--- :KinMemoryHealth: ask the server for the numbers (and the memory list behind them), show them.
function V.open()
  local arg = {}
  local ws = core.options.settings.workspace
  if type(ws) == 'string' and ws ~= '' then
    arg.workspace = ws
  end
  server.execute('kin.memory.stats', arg, function(stats)
    if type(stats) ~= 'table' or type(stats.byCategory) ~= 'table' then
      notify('the server sent no store statistics (is kin-memory up to date?).', vim.log.levels.ERROR)
      return
    end
    server.execute('kin.memory.list', vim.empty_dict(), function(list)
      show(stats, type(list) == 'table' and type(list.memories) == 'table' and list.memories or {})
    end)
  end)
end

--- `t` in the view: turn memory off (or on) for agents, in the global settings file, then refresh.
function V.toggle()
  local on = not (V.last and V.last.memoryEnabled == false)
  server.execute('kin.memory.setMemoryEnabled', { enabled = not on }, function(result)
    if type(result) ~= 'table' then
      return
    end
    notify(('memory is now %s for agents (memory_enabled = %s in %s).'):format(result.enabled and 'on' or 'off',
      tostring(result.enabled), core.printable(result.settingsFile)))
    V.open()
  end)
end

function V.define_commands()
  vim.api.nvim_create_user_command('KinMemoryHealth', V.open,
    { nargs = 0, desc = 'kin-memory: the store at a glance (counts, expiring, quiet, duplicates, prompt block)' })
end

return V
