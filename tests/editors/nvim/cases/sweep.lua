-- :KinMemorySweep lists what a sweep deletes and asks; Cancel keeps every file, Delete removes exactly
-- the listed ones (not a memory that expired while the question was open) and their diagnostics go away.
local T = dofile(vim.env.KIN_NVIM_HARNESS)

local expired = { T.path('episodes/ancient-incident.md'), T.path('sessions/scratch.md') }
local kept = { T.path('episodes/outage.md'), T.path('facts/old-runbook.md'), T.path('prefs/tone.md') }

local function exists(p)
  return vim.uv.fs_stat(p) ~= nil
end

T.run(function()
  T.open('facts/build.md')
  local answer = 'Cancel'
  local shown = {}
  local later = T.path('episodes/expired-meanwhile.md')
  local calls = T.script_select(function(call)
    local b = vim.fn.bufnr('kin-memory://sweep')
    shown[#shown + 1] = b ~= -1 and table.concat(vim.api.nvim_buf_get_lines(b, 0, -1, false), '\n') or ''
    if answer == 'Delete' and not exists(later) then
      -- Another memory expires while the user reads the list: it was not confirmed, so it stays.
      T.write(later, '---\ncategory: episodic\n---\n# Expired meanwhile\n')
      local old = os.time() - 50 * 86400
      vim.uv.fs_utime(later, old, old)
    end
    return answer == 'Cancel' and 1 or 2
  end)

  vim.cmd('KinMemorySweep')
  T.wait(function()
    return T.noted('sweep cancelled')
  end, 'the cancelled sweep to say so')
  T.eq(calls[1].items, { 'Cancel', 'Delete' }, 'confirmation choices (Cancel first: the default)')
  T.check(calls[1].prompt:find('2 expired', 1, true), 'the question counts the files: %q', calls[1].prompt)
  T.check(shown[1]:find('/memories/episodes/ancient-incident.md', 1, true)
    and shown[1]:find('/memories/sessions/scratch.md', 1, true), 'the list shown while asking:\n%s', shown[1])
  T.check(not shown[1]:find('outage.md', 1, true), 'a fresh episode is not listed:\n%s', shown[1])
  for _, p in ipairs(expired) do
    T.check(exists(p), 'Cancel must keep %s', p)
  end
  T.eq(vim.fn.bufnr('kin-memory://sweep'), -1, 'the list is closed after answering')

  answer = 'Delete'
  vim.cmd('KinMemorySweep')
  T.wait(function()
    return T.noted('swept 2 expired')
  end, 'the sweep to report 2 files')
  for _, p in ipairs(expired) do
    T.check(not exists(p), 'the sweep must delete %s', p)
  end
  for _, p in ipairs(kept) do
    T.check(exists(p), 'the sweep must keep %s', p)
  end
  T.check(exists(later), 'a memory that expired after the list was shown must not be swept')
  T.wait(function()
    local b = vim.fn.bufnr(expired[1])
    return b == -1 or #T.diags(b, 'KM402') == 0
  end, 'the swept episode\'s KM402 to clear')

  answer = 'Cancel'
  vim.cmd('KinMemorySweep')
  T.wait(function()
    return #calls == 3 and T.noted('sweep cancelled')
  end, 'a third sweep to ask about the memory that expired meanwhile')
  T.check(calls[3].prompt:find('1 expired', 1, true), 'the third question counts one file: %q', calls[3].prompt)
  T.check(shown[3]:find('expired-meanwhile.md', 1, true), 'the third list:\n%s', shown[3])
  os.remove(later)

  vim.cmd('KinMemorySweep')
  T.wait(function()
    return T.noted('nothing expired')
  end, 'a last sweep to find nothing')
  T.eq(#calls, 3, 'no question when nothing is expired')
end)
