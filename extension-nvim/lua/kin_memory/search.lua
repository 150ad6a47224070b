-- :KinMemorySearch: ranked recall through the server, one result picked with vim.ui.select and opened.
local core = require('kin_memory.core')
local server = require('kin_memory.server')

local S = {}

local notify, one_line = core.notify, core.one_line

function S.format_result(item)
  local title = one_line(item.title ~= vim.NIL and item.title or '')
  local label = title ~= '' and (title .. '  ') or ''
  local snippet = one_line(item.snippet ~= vim.NIL and item.snippet or '')
  return ('%s%s [%s]  %s'):format(label, item.path, item.category, snippet)
end

--- :KinMemorySearch [query]: ranked recall, pick one with vim.ui.select, open it.
function S.search(query, everywhere)
  if not query or not query:match('%S') then
    vim.ui.input({ prompt = 'Search memories: ' }, function(input)
      if input and input:match('%S') then
        S.search(input, everywhere)
      end
    end)
    return
  end
  -- `category:…`, `status:…` and `age:<N` words in the query are filters (read by the server);
  -- with `everywhere` (:KinMemorySearch!) every workspace's memories are searched.
  local arg = { query = query, limit = core.options.search_limit }
  if everywhere then
    arg.workspace = 'none'
  end
  server.execute('kin.memory.search', arg, function(result)
    local results = type(result) == 'table' and result.results or nil
    local incomplete = type(result) == 'table' and result.complete == false
    if incomplete then
      -- the index was still catching up: an empty or short list is not "no such memory"
      notify('indexing… the results may be incomplete; search again in a moment', vim.log.levels.WARN)
    end
    if type(result) == 'table' and type(result.note) == 'string' then
      -- the semantic layer is still filling: these results matched words only
      notify(result.note)
    end
    local hidden = type(result) == 'table' and tonumber(result.hidden) or 0
    if hidden > 0 then
      notify(('%d more in other workspaces: :KinMemorySearch! %s shows them'):format(hidden, one_line(query)))
    end
    if type(results) ~= 'table' or #results == 0 then
      if not incomplete then
        notify(('no memory matches %q'):format(query), vim.log.levels.WARN)
      end
      return
    end
    vim.ui.select(results, {
      prompt = ('Memories for %q'):format(query),
      kind = 'kin_memory_search',
      format_item = S.format_result,
    }, function(choice)
      if choice then
        core.open_uri(choice.uri)
      end
    end)
  end)
end

return S
