-- e2e: screenshot
-- The store synced through git, with this Neovim as the second machine. Machine A ("laptop") is the
-- command line with its own HOME and store, and its own clone of the repository this Neovim works in,
-- at another path; the remote is a bare folder.
-- - :KinMemorySync asks for the remote the first time; the fact A wrote for the repository comes in
--   (the message says so) and :KinMemorySearch finds it from this clone;
-- - the same line edited on both machines: KM800 on the memory; "Open both versions side by side"
--   opens a tab with both in diff mode, "Keep laptop's version" writes laptop's text and KM800 clears;
-- - deleted on A and edited here: the edit is kept, and the message says so;
-- - :KinMemoryChanges lists the fact that came in with its source sync:laptop;
-- - no file of this store ever holds a conflict marker.
local T = dofile(vim.env.KIN_NVIM_HARNESS)

local base = vim.fs.dirname(T.store)
local remote = base .. '/memory-remote.git'
local laptop = { home = base .. '/laptop-home', store = base .. '/laptop-store' }
local IDENTITY = { GIT_AUTHOR_NAME = 'Test', GIT_AUTHOR_EMAIL = 'test@example.invalid',
  GIT_COMMITTER_NAME = 'Test', GIT_COMMITTER_EMAIL = 'test@example.invalid' }

local run = T.system

local function git(cwd, ...)
  return run(vim.list_extend({ 'git' }, { ... }), cwd, IDENTITY)
end

--- The laptop's kin-memory, run in its clone (its workspace, set below) with its HOME and store.
local on_laptop, laptop_tool = T.other_machine(laptop)

local function memory(body, workspace)
  return ('---\ncategory: project-fact\nworkspace: %s\n---\n%s'):format(workspace, body)
end

--- A bare origin with one commit; the laptop's clone at one path, this Neovim's project at another.
local function prepare()
  vim.env.GIT_CONFIG_NOSYSTEM = '1' -- this machine's git configuration plays no part (the server inherits it)
  local origin, seed = base .. '/origin.git', base .. '/seed'
  vim.fn.mkdir(seed, 'p')
  vim.fn.mkdir(laptop.home, 'p')
  vim.fn.mkdir(laptop.store, 'p')
  vim.fn.writefile({}, laptop.home .. '/gitconfig')
  git(base, 'init', '-q', '--bare', '-b', 'main', origin)
  git(base, 'init', '-q', '--bare', '-b', 'main', remote)
  git(seed, 'init', '-q', '-b', 'main')
  vim.fn.writefile({ '# api' }, seed .. '/README.md')
  git(seed, 'add', 'README.md')
  git(seed, 'commit', '-q', '-m', 'first')
  git(seed, 'push', '-q', origin, 'main')
  vim.fn.mkdir(base .. '/laptop/src', 'p')
  git(base .. '/laptop/src', 'clone', '-q', origin, 'api')
  laptop.clone = vim.uv.fs_realpath(base .. '/laptop/src/api')
  git(T.project, 'clone', '-q', origin, '.') -- Neovim's working directory: the desktop's clone
end



--- Replace `old` by `new` on one line of buf, as typing would, and :write.
local function edit_and_write(buf, old, new)
  for i, line in ipairs(vim.api.nvim_buf_get_lines(buf, 0, -1, false)) do
    local from = line:find(old, 1, true)
    if from then
      vim.api.nvim_buf_set_lines(buf, i - 1, i, false, { line:sub(1, from - 1) .. new .. line:sub(from + #old) })
      vim.api.nvim_buf_call(buf, function()
        vim.cmd('silent write')
      end)
      return
    end
  end
  T.fail(('%q is not in %s'):format(old, vim.api.nvim_buf_get_name(buf)))
end

local function apply_action(buf, title)
  vim.api.nvim_set_current_buf(buf)
  vim.api.nvim_win_set_cursor(0, { 1, 0 })
  vim.lsp.buf.code_action({
    apply = true,
    filter = function(a)
      return a.title == title
    end,
  })
end

local function no_marker_under(root)
  local found = {}
  for name, kind in vim.fs.dir(root, { depth = 20, skip = function(dir)
    return dir ~= '.git' -- git's own objects are compressed; every other file is read
  end }) do
    if kind == 'file' then
      local text = T.read(root .. '/' .. name) or ''
      if text:find('<<<<<<<', 1, true) or text:find('>>>>>>>', 1, true) then
        found[#found + 1] = name
      end
    end
  end
  return found
end

T.run(function()
  prepare()
  on_laptop('sync', '--name', 'laptop', '--remote', remote)
  laptop_tool({ command = 'create', path = '/memories/facts/deploy.md',
    file_text = memory('# Deploys\n\nThe API deploys with the blue-green pipeline.\n', laptop.clone) })
  laptop_tool({ command = 'create', path = '/memories/facts/db.md',
    file_text = memory('# Database\n\nPostgres listens on port 5432.\n', 'global') })
  laptop_tool({ command = 'create', path = '/memories/facts/ci.md',
    file_text = memory('# CI\n\nCI runs on GitHub Actions.\n', 'global') })
  T.check(on_laptop('sync'):find('went out', 1, true), 'the laptop sent its memories out')

  -- This machine: the store in use, its review queue emptied, then the first sync asks for the remote.
  local build, client = T.open('facts/build.md')
  T.wait(function()
    local b = vim.fn.bufnr(T.path('episodes/ancient-incident.md'))
    return b ~= -1 and T.diags(b, 'KM402')[1]
  end, 'the whole store to be checked')
  T.run_and_wait('KinMemoryAccept!', 'accepted %d+ change', 'Accept! to answer', 30000)
  local asked = T.script_input({ remote, 'desktop' })
  local came = T.run_and_wait('KinMemorySync', 'came in', 'the first sync to report what came in', 30000)
  T.eq(#asked, 2, 'the remote and the machine name asked once')
  T.check(asked[2].prompt:find("machine's name", 1, true), 'the name prompt: %q', asked[2].prompt)
  T.eq(asked[2].default, vim.uv.os_gethostname(), 'the host name offered')
  T.check(asked[1].prompt:find('folder, ssh or https', 1, true), 'the prompt says what a remote is: %q', asked[1].prompt)
  T.check(came.msg:find('/memories/facts/deploy.md (new on laptop)', 1, true), 'the message names the fact from laptop: %q',
    came.msg)
  T.eq(came.level, vim.log.levels.INFO, 'the level of a sync without conflicts')
  T.check(T.read(T.path('facts/deploy.md')):find('blue-green', 1, true), 'the fact is on disk here')

  -- The laptop's fact, stamped with the laptop's path, surfaces in this clone's search.
  T.wait(function()
    local result = T.exec(client, 'kin.memory.search', { query = 'blue-green pipeline' })
    return result and #result.results > 0
  end, 'the recall index to have the fact that came in')
  local calls = T.script_select(function()
    return nil
  end)
  vim.cmd('KinMemorySearch blue-green pipeline')
  local call = T.wait(function()
    return calls[1]
  end, 'the search results')
  T.eq(call.items[1].path, '/memories/facts/deploy.md', 'the top result of this workspace\'s search')

  -- The same line edited on both machines.
  laptop_tool({ command = 'str_replace', path = '/memories/facts/db.md', old_str = 'port 5432', new_str = 'port 5433' })
  on_laptop('sync')
  local db = T.open('facts/db.md')
  edit_and_write(db, 'port 5432', 'port 6543')
  local warned = T.run_and_wait('KinMemorySync', 'changed in the same place', 'the sync to report the conflict', 30000)
  T.eq(warned.level, vim.log.levels.WARN, 'the level of a sync with a conflict')
  T.check(warned.msg:find('/memories/facts/db.md was changed in the same place here and on laptop', 1, true),
    'the message names the memory and the machine: %q', warned.msg)
  local km800 = T.wait_diag(db, 'KM800', 30000)
  T.eq(km800.severity, vim.diagnostic.severity.WARN, 'KM800 severity')
  T.eq(km800.lnum, 0, 'KM800 on the first line')
  T.check(T.read(T.path('facts/db.md')):find('port 6543', 1, true), 'the file keeps this machine\'s version')

  -- The picture: the diagnostic in full under its line (the code lens holds the line's end).
  vim.diagnostic.config({ virtual_lines = { format = function(d)
    return ('%s: %s [%s]'):format(d.source, d.message, d.code)
  end } })
  vim.cmd('silent! only')
  T.screenshot('nvim-sync-conflict', { 'changed in the same place here and on laptop (as that machine names itself)', 'port 6543' })
  vim.diagnostic.config({ virtual_lines = false })

  -- Both versions side by side, in a new tab.
  local tabs = #vim.api.nvim_list_tabpages()
  apply_action(db, 'Open both versions side by side')
  local wins = T.wait(function()
    local w = vim.api.nvim_tabpage_list_wins(0)
    return #vim.api.nvim_list_tabpages() == tabs + 1 and #w == 2 and vim.api.nvim_buf_line_count(vim.api.nvim_win_get_buf(w[2])) > 1
      and w
  end, 'a new tab with both versions')
  local shown = {}
  for _, w in ipairs(wins) do
    local b = vim.api.nvim_win_get_buf(w)
    T.check(vim.wo[w].diff, 'window %d in diff mode', w)
    T.eq(vim.bo[b].modifiable, false, 'a version is read-only')
    shown[#shown + 1] = { name = vim.api.nvim_buf_get_name(b), text = table.concat(vim.api.nvim_buf_get_lines(b, 0, -1, false), '\n') }
  end
  T.check(shown[1].name:find('db.md — this machine', 1, true) and shown[1].text:find('port 6543', 1, true),
    'left: this machine\'s version: %s', vim.inspect(shown[1]))
  T.check(shown[2].name:find('db.md — laptop', 1, true) and shown[2].text:find('port 5433', 1, true),
    'right: laptop\'s version: %s', vim.inspect(shown[2]))
  vim.cmd('tabclose')

  -- Keep laptop's version: the file and the buffer get its text, KM800 goes.
  local n = #T.notes
  apply_action(db, "Keep laptop's version")
  local resolved = T.wait(function()
    return T.notes_since(n, "kept laptop's version")
  end, 'the resolution to be reported')
  T.check(resolved.msg:find('db.md', 1, true), 'the message names the memory: %q', resolved.msg)
  T.check(T.read(T.path('facts/db.md')):find('port 5433', 1, true), 'laptop\'s text on disk: %q', T.read(T.path('facts/db.md')))
  T.wait(function()
    return #T.diags(db, 'KM800') == 0
  end, function()
    return 'KM800 to clear (has: ' .. table.concat(T.codes(db), ', ') .. ')'
  end)
  T.wait(function()
    return table.concat(vim.api.nvim_buf_get_lines(db, 0, -1, false), '\n'):find('port 5433', 1, true)
  end, 'the buffer to show the kept version')
  T.eq(vim.bo[db].modified, false, 'the buffer follows the file')

  -- Deleted on the laptop, edited here: the edit is kept.
  laptop_tool({ command = 'delete', path = '/memories/facts/ci.md' })
  on_laptop('sync')
  local ci = T.open('facts/ci.md')
  edit_and_write(ci, 'GitHub Actions', 'GitHub Actions, four jobs')
  local edit_kept = T.run_and_wait('KinMemorySync', 'the edit is kept', 'the sync to report the kept edit', 30000)
  T.check(edit_kept.msg:find('/memories/facts/ci.md was deleted on laptop (as that machine names itself) and edited here: the edit is kept.', 1, true),
    'the message: %q', edit_kept.msg)
  T.check((T.read(T.path('facts/ci.md')) or ''):find('four jobs', 1, true), 'the edit is on disk')
  T.wait_diag(ci, 'KM800', 30000)
  apply_action(ci, 'Open both versions side by side') -- the laptop's side is its deletion: empty
  local deleted = T.wait(function()
    local w = vim.api.nvim_tabpage_list_wins(0)
    return #w == 2 and vim.api.nvim_buf_get_name(vim.api.nvim_win_get_buf(w[2])):find('ci.md — laptop, deleted', 1, true)
      and vim.api.nvim_win_get_buf(w[2])
  end, 'the comparison with the deleted side')
  T.eq(vim.api.nvim_buf_get_lines(deleted, 0, -1, false), { '' }, 'the deleted side')
  vim.cmd('tabclose')

  -- The review queue: the fact that came in, by its source.
  T.run_and_wait('KinMemoryChanges', 'since the last review', 'the changes view', 30000)
  local entry
  for _, item in ipairs(vim.fn.getqflist()) do
    if vim.api.nvim_buf_get_name(item.bufnr) == T.path('facts/deploy.md') then
      entry = item.text
    end
  end
  T.check(entry and entry:find('created by sync from laptop', 1, true), 'the changes view lists the fact by its source: %s',
    vim.inspect(vim.tbl_map(function(i)
      return vim.api.nvim_buf_get_name(i.bufnr) .. ': ' .. i.text
    end, vim.fn.getqflist())))

  -- :KinMemoryAccept! empties the open changes list.
  T.check(#vim.fn.getqflist() > 0, 'the changes list has entries')
  T.run_and_wait('KinMemoryAccept!', 'accepted %d+ change', 'Accept! to answer', 30000)
  T.eq(#vim.fn.getqflist(), 0, 'entries left in the changes list after :KinMemoryAccept!')

  T.eq(no_marker_under(T.store), {}, 'files of this store with a conflict marker')

  -- A buffer with unsaved changes under a sync: the laptop's edit of another line is merged into the
  -- buffer (nothing asks), and saving keeps both sides, here and, after the next syncs, on the laptop.
  local deploy = T.open('facts/deploy.md')
  for i, line in ipairs(vim.api.nvim_buf_get_lines(deploy, 0, -1, false)) do
    if line:find('blue-green pipeline', 1, true) then
      vim.api.nvim_buf_set_lines(deploy, i - 1, i, false, { line .. ' Twice a day.' })
    end
  end
  T.eq(vim.bo[deploy].modified, true, 'the buffer has unsaved changes')
  laptop_tool({ command = 'str_replace', path = '/memories/facts/deploy.md', old_str = '# Deploys', new_str = '# Deploys and rollbacks' })
  on_laptop('sync')
  local merged = T.run_and_wait('KinMemorySync', 'merged into the buffer', 'the sync to report the merge', 30000)
  T.check(merged.msg:find('/memories/facts/deploy.md had unsaved changes', 1, true), 'the message: %q', merged.msg)
  T.wait(function()
    local text = T.buf_text(deploy)
    return text:find('# Deploys and rollbacks', 1, true) and text:find('Twice a day.', 1, true)
  end, 'the buffer to hold both edits')
  T.eq(vim.bo[deploy].modified, true, 'the merged buffer is still to be saved')
  vim.api.nvim_buf_call(deploy, function()
    vim.cmd('silent write!')
  end)
  local saved = T.read(T.path('facts/deploy.md'))
  T.check(saved:find('# Deploys and rollbacks', 1, true) and saved:find('Twice a day.', 1, true), 'both on disk: %s', saved)
  vim.wait(1000)
  T.eq(#T.diags(deploy, 'KM800'), 0, 'KM800 on a save that kept both')
  T.run_and_wait('KinMemorySync', 'went out', 'the merged memory to go out', 30000)
  local told = on_laptop('sync')
  T.check(told:find('desktop', 1, true), 'the laptop names this machine by the name given: %s', told)
  local there = T.read(laptop.store .. '/facts/deploy.md')
  T.check(there:find('# Deploys and rollbacks', 1, true) and there:find('Twice a day.', 1, true), 'both on the laptop: %s', there)

  -- A remote that is not there: the server's sentence, as it is, as an error.
  local missing = base .. '/no-such-remote.git'
  local failed = T.run_and_wait('KinMemorySync ' .. missing, 'remote', 'the failed sync to say why', 30000)
  T.eq(failed.level, vim.log.levels.ERROR, 'the level of a failed sync')
  T.check(failed.msg:find('^kin%-memory: Fetching from the remote failed') and failed.msg:find(missing, 1, true),
    'the server\'s sentence, not wrapped in another: %q', failed.msg)
  T.check(vim.api.nvim_buf_is_valid(build), 'the first memory is still open')
end)
