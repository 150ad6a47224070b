-- e2e: ui
-- With a UI attached (a 120-column screen; hit_enter_80 runs this on 80; a headless Neovim never shows
-- a prompt), no step leaves Neovim waiting at a hit-enter prompt: the first sync, a sync with a
-- conflict, the compare tab (named by the memory), keeping one version, the review of a reflection
-- opening (the "reflecting on …" status gone from the command line), applying one of its changes,
-- :KinMemoryInfo, and the server stopping. Each command is typed, as a person would; after each step
-- Neovim goes back to its main loop and ui.py looks.
local T = dofile(vim.env.KIN_NVIM_HARNESS)

local base = vim.fs.dirname(T.store)
local remote = base .. '/memory-remote.git'
local laptop = { home = base .. '/laptop-home', store = base .. '/laptop-store', clone = base .. '/laptop-clone' }
local IDENTITY = { GIT_AUTHOR_NAME = 'Test', GIT_AUTHOR_EMAIL = 'test@example.invalid',
  GIT_COMMITTER_NAME = 'Test', GIT_COMMITTER_EMAIL = 'test@example.invalid' }

local run = T.system
--- The other machine ("laptop"): the command line with its own HOME and store.
local on_laptop, laptop_tool = T.other_machine(laptop)

local prompts = {}

--- ui.py's look after a step; a prompt is noted (every step is still looked at) and failed at the end.
local function look(label, picture)
  local seen = T.ui_check(label, picture)
  for _, screen in ipairs(seen.earlier or {}) do
    prompts[#prompts + 1] = ('during %s: %s'):format(label, screen)
  end
  if seen.prompt then
    prompts[#prompts + 1] = ('%s: %s'):format(label, seen.screen:match('[^\n]*\n[^\n]*\n[^\n]*$') or seen.cmdline)
  end
  return seen
end

local function typed(keys, pattern, what, timeout)
  local n = #T.notes
  return T.ui_type(keys, function()
    return T.notes_since(n, pattern)
  end, what, timeout or 30000)
end

T.run(function()
  local fake = T.fake_model({
    { tool_calls = {
      { command = 'str_replace', path = '/memories/prefs/tone.md', old_str = 'no emoji.', new_str = 'no emoji, ever.' },
      { command = 'create', path = '/memories/episodes/release-freeze.md',
        file_text = '---\ncategory: episodic\n---\n# Release freeze\n\nNo releases during the audit week.\n' },
    } },
    { stop = 'Recorded the freeze and sharpened the tone preference.' },
  })
  vim.env.GIT_CONFIG_NOSYSTEM = '1'
  for _, dir in ipairs({ laptop.home, laptop.store, laptop.clone }) do
    vim.fn.mkdir(dir, 'p')
  end
  vim.fn.writefile({}, laptop.home .. '/gitconfig')
  run({ 'git', 'init', '-q', '--bare', '-b', 'main', remote }, base, IDENTITY)
  on_laptop('sync', '--name', 'laptop', '--remote', remote)
  laptop_tool({ command = 'create', path = '/memories/facts/db.md',
    file_text = '---\ncategory: project-fact\nworkspace: global\n---\n# Database\n\nPostgres listens on port 5432.\n' })
  on_laptop('sync')

  -- The first sync: asks for the remote and this machine's name, then says what came in.
  T.open('facts/build.md')
  T.script_input({ remote, 'desktop' })
  local came = typed(':KinMemorySync<CR>', 'came in', 'the first sync to report what came in')
  T.check(came.msg:find('db.md', 1, true), 'the message names what came in: %q', came.msg)
  look('the first sync')

  -- A conflict: the same line edited on both machines.
  laptop_tool({ command = 'str_replace', path = '/memories/facts/db.md', old_str = 'port 5432', new_str = 'port 5433' })
  on_laptop('sync')
  local db = T.open('facts/db.md')
  vim.api.nvim_buf_set_lines(db, -2, -1, false, { 'Postgres listens on port 6543.' })
  vim.cmd('silent write')
  local warned = typed(':KinMemorySync<CR>', 'conflict', 'the sync to report the conflict')
  T.check(warned.msg:find('facts/db.md', 1, true) and warned.msg:find('KM800', 1, true),
    'the message names the memory and KM800: %q', warned.msg)
  T.eq(warned.level, vim.log.levels.WARN, 'the level of a sync with a conflict')
  T.wait_diag(db, 'KM800', 30000)
  look('a sync with a conflict')

  -- The compare tab: its label names the memory, not a shortened URI.
  vim.api.nvim_win_set_cursor(0, { 1, 0 })
  vim.lsp.buf.code_action({ apply = true, filter = function(a)
    return a.title == 'Open both versions side by side'
  end })
  T.wait(function()
    return #vim.api.nvim_list_tabpages() == 2 and #vim.api.nvim_tabpage_list_wins(0) == 2
  end, 'the compare tab')
  local compared = look('the compare tab opened', 'nvim-compare-' .. vim.o.columns)
  local tabline = compared.screen:match('^[^\n]*')
  T.check(tabline:find('db.md — laptop', 1, true) and not tabline:find('//', 1, true),
    'the tab is named by the memory: %q', tabline)
  vim.cmd('tabclose')

  -- The conflict settled from its quick fix.
  local n = #T.notes
  vim.api.nvim_set_current_buf(db)
  vim.api.nvim_win_set_cursor(0, { 1, 0 })
  vim.lsp.buf.code_action({ apply = true, filter = function(a)
    return a.title == "Keep laptop's version"
  end })
  local kept = T.ui_type('', function()
    return T.notes_since(n, "kept laptop's version")
  end, 'the resolution to be reported', 30000)
  T.check(kept.msg:find('db.md', 1, true), 'the message names the memory: %q', kept.msg)
  look('keeping one version')

  -- A reflection: its review opens with the status gone; `c` applies the change under the cursor.
  local transcript = T.project .. '/session.md'
  T.write(transcript, 'user: no releases during the audit week, and really no emoji\n')
  local review = T.ui_type(':KinMemoryReflect ' .. vim.fn.fnameescape(transcript) .. '<CR>', T.review_buffer,
    'the review buffer', 30000)
  local opened = look('the review opened')
  T.check(not opened.cmdline:find('reflecting on', 1, true), 'the command line after the review opened: %q',
    opened.cmdline)
  local row
  for i, l in ipairs(vim.api.nvim_buf_get_lines(review, 0, -1, false)) do
    if l == '+Keep answers short; no emoji, ever.' then
      row = i
    end
  end
  T.check(row, 'the review shows the edit')
  vim.api.nvim_set_current_win(vim.fn.bufwinid(review))
  vim.api.nvim_win_set_cursor(0, { row, 0 })
  local applied = typed('c', 'applied 1 of 1', 'the report of the applied change')
  T.check(applied.msg:find('1 change(s) still to review', 1, true), 'the report: %q', applied.msg)
  look('applying one change')
  T.check(fake.requests() > 0, 'the model was asked')

  -- :KinMemoryInfo from the running server.
  local info = typed(':KinMemoryInfo<CR>', 'store: ', 'the :KinMemoryInfo summary')
  T.check(info.msg:find('kin-memory: store: ', 1, true), 'the summary starts with the store: %q', info.msg)
  look(':KinMemoryInfo')

  -- The server stops under the person.
  local before = #T.notes
  for _, pid in ipairs(vim.api.nvim_get_proc_children(vim.fn.getpid())) do
    vim.uv.kill(pid, 'sigkill')
  end
  local stopped = T.ui_type('', function()
    return T.notes_since(before, 'server stopped')
  end, 'the message that the server stopped', 30000)
  T.eq(stopped.level, vim.log.levels.ERROR, 'the level of the server-stopped message')
  look('the server stopping')

  T.eq(prompts, {}, 'steps that left a hit-enter prompt')
end)
