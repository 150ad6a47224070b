-- :KinMemoryHealth over a store with a bit of everything: every number it shows equals
-- `kin-memory stats --json` (the CLI, run like the user would in this project); sections fold; <CR> on a
-- count lists the memories behind it, on a memory opens it; `t` turns memory off in the global
-- settings file (its other bytes kept) and the view says so; a stamp holding a terminal escape is shown
-- spelled out, one line per item.
local T = dofile(vim.env.KIN_NVIM_HARNESS)

local DAY = 86400

T.run(function()
  local now = os.time()
  -- An episode that expires within the week (its file name carries a terminal escape), a quiet fact
  -- (its repository is gone), and a duplicate of build.md.
  local evil = 'episodes/stand\27[31mup.md'
  T.write(T.path(evil), '---\ncategory: episodic\nworkspace: global\n---\n# Stand-up moved\n\n'
    .. 'The daily stand-up moved to 9:30 for the winter.\n')
  vim.uv.fs_utime(T.path(evil), now - 38 * DAY, now - 38 * DAY)
  T.write(T.path('facts/gone.md'), '---\ncategory: project-fact\nworkspace: /nonexistent/old-repo\n---\n'
    .. '# Gone\n\nThe old repository kept its deploy keys in the vault.\n')
  T.write(T.path('facts/build-again.md'), T.read(T.path('facts/build.md')))
  local settings_file = vim.env.HOME .. '/.kin/settings.toml'
  T.write(settings_file, '# my own notes about this file\nmemory_enabled = true # on by default\n')

  -- What needs action: a memory whose frontmatter does not parse (KM102, an error) and one holding what
  -- looks like a secret (KM602). The view leads with them, the error first.
  T.write(T.path('facts/broken-stamp.md'), '---\ncategory: project-fact\nworkspace: [/home/me/src/webapp\n---\n# Broken\n')
  T.write(T.path('facts/cloud-key.md'), '---\ncategory: project-fact\nworkspace: global\n---\n# Cloud\n\n'
    .. 'The deploy user is AKIAQWERTYUIOPASDFGH for now.\n')

  local _, client = T.open('facts/build.md')
  T.wait(function()
    local codes = {}
    for _, d in ipairs(vim.diagnostic.get(nil)) do
      codes[d.code] = true
    end
    return codes.KM102 and codes.KM602
  end, 'KM102 and KM602 to be published for the store')
  T.wait(function()
    return T.exec(client, 'kin.memory.info', vim.empty_dict()).indexState.state == 'ready'
  end, 'the recall index to be ready')
  local expected = vim.json.decode(T.cli({ 'stats', '--json' }))

  vim.cmd('KinMemoryHealth')
  local buf = T.wait_buffer('kin-memory://health', 10)
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  T.log(table.concat(lines, '\n'))
  local text = table.concat(lines, '\n')

  local function row_of(pattern)
    for i, l in ipairs(lines) do
      if l:find(pattern) then
        return i
      end
    end
    return 0
  end
  local first = row_of('^Needs your attention: 2 findings')
  local err = row_of('^  error .*broken%-stamp%.md:3  KM102')
  local secret = row_of('^  secret .*cloud%-key%.md:7  KM602')
  local counts = row_of('^By category')
  T.check(first > 0 and err > first and secret > err and counts > secret,
    'the view leads with the error, then the secret, then the counts (lines %d %d %d %d)', first, err, secret, counts)

  -- Every number against the CLI's.
  for cat, want in pairs(expected.byCategory) do
    local row
    for i, l in ipairs(lines) do
      if l:match('^  ' .. vim.pesc(cat) .. ' ') then
        row = i
      end
    end
    T.check(row, 'a line for %s', cat)
    local line = lines[row]
    T.eq(tonumber(line:match('^  %S+%s+(%d+)')), want.total, cat .. ' total')
    for _, st in ipairs({ 'ok', 'stale', 'expiring', 'expired', 'quiet' }) do
      local shown = tonumber(line:match('  ' .. st .. ' (%d+)')) or 0
      T.eq(shown, want[st], ('%s %s'):format(cat, st))
    end
  end
  T.check(#expected.expiringSoon >= 1, 'the fixture has something expiring soon')
  T.check(text:find(('Expiring in the next 7 days: %d'):format(#expected.expiringSoon), 1, true), 'expiring count')
  for _, e in ipairs(expected.expiringSoon) do
    T.check(text:find(e.expires .. '  ', 1, true), 'expiring %s shown', e.path)
  end
  local quiet = 0
  for _, q in ipairs(expected.quietByRepository) do
    quiet = quiet + #q.paths
  end
  T.check(quiet >= 1, 'the fixture has a quiet memory')
  T.check(text:find(('no longer exists%%): %d'):format(quiet)), 'quiet count')
  T.check(#expected.groups >= 1, 'the fixture has a duplicate group')
  T.check(text:find(('Duplicates and contradictions: %d'):format(#expected.groups), 1, true), 'group count')
  local pb = expected.promptBlock
  T.check(text:find(('lines %6d / %-6d'):format(pb.lines, pb.maxLines), 1, true), 'prompt lines %d', pb.lines)
  T.check(text:find(('bytes %6d / %-6d'):format(pb.bytes, pb.maxBytes), 1, true), 'prompt bytes %d', pb.bytes)
  T.check(text:find(('review queue: %d change'):format(expected.reviewQueue), 1, true), 'review queue %d',
    expected.reviewQueue)
  T.check(text:find('Store: ' .. T.store, 1, true), 'the store root')
  T.check(text:find('found through the KIN_MEMORY_DIR environment variable', 1, true), 'how it was found')
  T.check(text:find('Memory: ON for agents', 1, true), 'the memory switch')
  local server = T.exec(vim.lsp.get_clients({ name = 'kin_memory' })[1], 'kin.memory.stats', vim.empty_dict())
  T.check(text:find(('recall index: %s, %d memories'):format(server.indexState.state, server.indexState.memories),
    1, true), 'the index state')

  -- Untrusted text: no control character reaches the screen; the escape is spelled out.
  for i, l in ipairs(lines) do
    T.check(not l:find('[%c\127]'), 'line %d holds a control character: %q', i, l)
  end
  T.check(text:find('/memories/episodes/stand\\x1b[31mup.md', 1, true), 'the file name with its escape spelled out')
  T.check(text:find('/nonexistent/old-repo  (1)', 1, true), 'the missing repository and its count')

  -- Folds: one per section, all open at first.
  local win = vim.fn.bufwinid(buf)
  local heading = vim.fn.index(lines, 'Prompt block') + 1
  T.check(heading > 0, 'the prompt block heading')
  vim.api.nvim_win_call(win, function()
    T.check(vim.fn.foldlevel(heading) > 0, 'the prompt block section folds')
    T.eq(vim.fn.foldclosed(heading), -1, 'the section is open at first')
    vim.api.nvim_win_set_cursor(win, { heading, 0 })
    vim.cmd('normal! za')
    T.eq(vim.fn.foldclosed(heading), heading, 'za closes it')
    vim.cmd('normal! za')
  end)

  -- <CR> on a status count: the memories behind it in the quickfix list.
  vim.api.nvim_set_current_win(win)
  local row, line
  for i, l in ipairs(lines) do
    if l:match('^  project%-fact ') then
      row, line = i, l
    end
  end
  local col = line:find('stale ', 1, true)
  vim.api.nvim_win_set_cursor(win, { row, col })
  T.press('<CR>')
  local qf = T.wait(function()
    local l = vim.fn.getqflist({ title = 1, items = 1 })
    return l.title:find('stale') and l
  end, 'the stale project facts in the quickfix list')
  T.eq(#qf.items, expected.byCategory['project-fact'].stale, 'quickfix entries for the stale count')
  T.eq(vim.uv.fs_realpath(vim.api.nvim_buf_get_name(qf.items[1].bufnr)), T.path('facts/old-runbook.md'), 'the stale fact')
  -- … and on the category name: all of them.
  vim.api.nvim_set_current_win(win)
  vim.api.nvim_win_set_cursor(win, { row, 2 })
  T.press('<CR>')
  qf = T.wait(function()
    local l = vim.fn.getqflist({ title = 1, items = 1 })
    return l.title == 'kin-memory: project-fact memories' and l
  end, 'every project fact in the quickfix list')
  T.eq(#qf.items, expected.byCategory['project-fact'].total, 'quickfix entries for the category')
  vim.cmd('cclose')

  -- <CR> on an expiring memory opens it.
  vim.api.nvim_set_current_win(win)
  local exp_row = vim.fn.match(lines, '^  ' .. expected.expiringSoon[1].expires) + 1
  vim.api.nvim_win_set_cursor(win, { exp_row, 4 })
  T.press('<CR>')
  T.wait(function()
    return vim.api.nvim_buf_get_name(0) == vim.uri_to_fname(expected.expiringSoon[1].uri)
  end, 'the expiring memory to open')

  -- `t`: memory off, written into the global settings file with its other bytes kept.
  vim.api.nvim_set_current_win(win)
  T.press('t')
  T.wait(function()
    local l = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
    return table.concat(l, '\n'):find('Memory: OFF for agents', 1, true)
  end, 'the view to say memory is off')
  local written = T.read(settings_file)
  T.check(written:find('# my own notes about this file\n', 1, true), 'the comment is kept:\n%s', written)
  T.check(written:find('memory_enabled = false', 1, true), 'memory_enabled = false written:\n%s', written)
  T.check(T.noted('memory is now off for agents'), 'a notification that memory is off')
  T.eq(vim.json.decode(T.cli({ 'stats', '--json' })).memoryEnabled, false, 'the CLI sees memory off')

  -- q closes the view.
  vim.api.nvim_set_current_win(win)
  T.press('q')
  T.eq(vim.fn.bufwinid(buf), -1, 'the view is closed')
end)
