-- The store as a whole, as in VS Code's palette: `:KinMemoryNew` (a memory created through the memory
-- tool, so its guard applies), `:KinMemoryList[!] [filter…]` (memories into the quickfix list),
-- `:KinMemoryReindex`, `:KinMemoryOpenStore`. `:KinMemoryRestart` lives with the client (server.lua).
local core = require('kin_memory.core')
local server = require('kin_memory.server')

local S = {}

local notify = core.notify

-- What each category is for, shown when picking one (the lifecycle numbers are the SPEC's).
S.categories = {
  { name = 'project-fact', folder = 'facts', detail = 'durable facts about a project; never deleted, stale after 180 days untouched' },
  { name = 'preference', folder = 'prefs', detail = 'how you like things done; never deleted, global unless stamped' },
  { name = 'episodic', folder = 'episodes', detail = 'what happened; swept 42 days after its last change' },
  { name = 'session', folder = 'sessions', detail = 'notes for the current session; swept after 24 hours, never indexed' },
}

--- The store path for a name typed by the user (relative to the store, `.md` optional), or nil and
--- why not. The server's guard decides in the end; this only refuses early with a readable reason.
function S.new_path(input)
  local rel = vim.trim(input or ''):gsub('^/memories/', '')
  if rel == '' then
    return nil, 'type a name, for example facts/build-system'
  end
  if rel:find('[%c]') then
    return nil, 'control characters are not allowed in a name'
  end
  if rel:sub(1, 1) == '/' then
    return nil, 'give a path inside the store, for example facts/build-system'
  end
  for part in (rel .. '/'):gmatch('([^/]*)/') do
    if part == '' or part == '.' or part == '..' then
      return nil, 'empty, . and .. path parts are not allowed'
    end
    if part:sub(1, 1) == '.' then
      return nil, 'hidden names (a leading dot) are never memory files'
    end
  end
  if not rel:lower():match('%.md$') then
    rel = rel .. '.md'
  end
  if rel == 'MEMORY.md' then
    return nil, 'MEMORY.md is the curated index, not a memory'
  end
  return '/memories/' .. rel
end

local function title_of(vpath)
  local words = vim.fs.basename(vpath):gsub('%.md$', ''):gsub('[-_]+', ' ')
  words = vim.trim(words)
  return words ~= '' and (words:sub(1, 1):upper() .. words:sub(2)) or 'New memory'
end

local function create(category, vpath)
  local text = ('---\ncategory: %s\n---\n\n# %s\n\n'):format(category, title_of(vpath))
  server.execute('kin.memory.tool', { command = 'create', path = vpath, file_text = text }, function(result)
    if type(result) ~= 'table' or result.isError then
      notify(('%s was not created: %s'):format(core.printable(vpath), core.one_line(result and result.content)),
        vim.log.levels.ERROR)
      return
    end
    local root = core.root()
    if not root then
      return
    end
    vim.cmd.edit(vim.fn.fnameescape(root .. vpath:sub(#'/memories' + 1)))
    vim.api.nvim_win_set_cursor(0, { vim.api.nvim_buf_line_count(0), 0 })
    notify('created ' .. core.printable(vpath))
  end)
end

--- :KinMemoryNew [path]: pick a category, name the file (a bare name goes in the category's folder), create
--- it. The answer is not pre-filled with the folder: typing `facts/redis` after it made facts/facts/redis.
function S.new(path)
  vim.ui.select(S.categories, {
    prompt = 'New memory: what kind is it?',
    kind = 'kin_memory_category',
    format_item = function(c)
      return ('%-13s %s'):format(c.name, c.detail)
    end,
  }, function(choice)
    if not choice then
      return
    end
    local function named(input)
      if input == nil then
        return
      end
      local typed = vim.trim(input):gsub('^/memories/', '')
      if typed ~= '' and not typed:find('/', 1, true) then
        typed = choice.folder .. '/' .. typed
      end
      local vpath, why = S.new_path(typed)
      if not vpath then
        notify(why .. '.', vim.log.levels.ERROR)
        return
      end
      create(choice.name, vpath)
    end
    if path and path ~= '' then
      return named(path)
    end
    vim.ui.input({ prompt = ('New %s memory (a name goes in %s/, or a path in the store; .md is added): ')
      :format(choice.name, choice.folder) }, named)
  end)
end

local STATUSES = { ok = true, stale = true, expiring = true, expired = true }
local CATEGORY_NAMES = { ['project-fact'] = true, preference = true, episodic = true, session = true }

--- The filters of :KinMemoryList: statuses and categories (any of each), or nil and the word not known.
function S.list_filters(words)
  local f = { statuses = {}, categories = {} }
  for _, w in ipairs(words or {}) do
    if STATUSES[w] then
      f.statuses[w] = true
    elseif CATEGORY_NAMES[w] then
      f.categories[w] = true
    else
      return nil, w
    end
  end
  return f
end

local function age(days)
  days = tonumber(days) or 0
  if days < 1 then
    return 'changed today'
  end
  local n = math.floor(days)
  return ('changed %d day%s ago'):format(n, n == 1 and '' or 's')
end

--- :KinMemoryList[!] [status…] [category…]: the memories in the quickfix list (! : every workspace's).
function S.list(words, everywhere)
  local filters, unknown = S.list_filters(words)
  if not filters then
    notify(('%q is not a filter: use a status (ok, stale, expiring, expired) or a category (project-fact, '
      .. 'preference, episodic, session).'):format(unknown), vim.log.levels.ERROR)
    return
  end
  server.execute('kin.memory.list', vim.empty_dict(), function(result)
    local items = {}
    local printable = core.printable
    for _, m in ipairs(type(result) == 'table' and result.memories or {}) do
      local keep = (everywhere or m.visible)
        and (next(filters.statuses) == nil or filters.statuses[m.status])
        and (next(filters.categories) == nil or filters.categories[m.category])
      if keep then
        local ws = m.workspace ~= vim.NIL and m.workspace or 'global (no stamp)'
        items[#items + 1] = {
          filename = vim.uri_to_fname(m.uri),
          lnum = 1,
          type = (m.status == 'expired' or m.status == 'stale') and 'W' or 'I',
          text = printable(('[%s] %s · %s · %s'):format(m.category, m.status, age(m.ageDays), ws)),
        }
      end
    end
    local what = #words > 0 and (' (' .. table.concat(words, ' ') .. ')') or ''
    vim.fn.setqflist({}, ' ', { title = ('kin-memory: %d memories%s'):format(#items, what), items = items })
    if #items == 0 then
      notify('no memory matches' .. what .. (everywhere and '' or '; :KinMemoryList! looks in every workspace') .. '.')
      return
    end
    vim.cmd('botright copen')
    notify(('%d memor%s in the quickfix list%s'):format(#items, #items == 1 and 'y' or 'ies', what))
  end)
end

--- :KinMemoryReindex: rebuild the recall index from the files.
function S.reindex()
  notify('reindexing…')
  server.execute('kin.memory.reindex', vim.empty_dict(), function(result)
    if type(result) ~= 'table' then
      return
    end
    if result.cancelled then
      notify('the reindex was cancelled.', vim.log.levels.WARN)
      return
    end
    notify(('reindexed %d files in %.2f s'):format(result.files or 0, tonumber(result.seconds) or 0))
  end)
end

--- :KinMemoryOpenStore: the store's folder in a new tab page whose working directory is the store
--- (the server's root: it alone resolves KIN_MEMORY_DIR and the settings files).
function S.open_store()
  local root = core.root()
  if not root then
    local client = server.client()
    root = client and core.root()
  end
  if not root then
    notify('the memory store is not known yet (the server has not answered); :checkhealth kin_memory says why.',
      vim.log.levels.ERROR)
    return
  end
  vim.cmd('tabnew')
  vim.cmd.tcd(vim.fn.fnameescape(root))
  vim.cmd.edit(vim.fn.fnameescape(root))
end

function S.define_commands()
  local cmd = vim.api.nvim_create_user_command
  cmd('KinMemoryNew', function(o)
    S.new(o.args)
  end, { nargs = '?', desc = 'kin-memory: create a memory (pick its category, name it)' })
  cmd('KinMemoryList', function(o)
    S.list(o.fargs, o.bang)
  end, {
    nargs = '*',
    bang = true,
    complete = function()
      return { 'ok', 'stale', 'expiring', 'expired', 'project-fact', 'preference', 'episodic', 'session' }
    end,
    desc = 'kin-memory: memories in the quickfix list (filters: status, category; ! for every workspace)',
  })
  cmd('KinMemoryReindex', S.reindex, { nargs = 0, desc = 'kin-memory: rebuild the recall index' })
  cmd('KinMemoryOpenStore', S.open_store, { nargs = 0, desc = 'kin-memory: open the store folder in a new tab' })
  cmd('KinMemoryRestart', function()
    server.restart()
  end, { nargs = 0, desc = 'kin-memory: restart the language server' })
end

return S
