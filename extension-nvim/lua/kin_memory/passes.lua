-- The model passes, each ending in a proposal reviewed before anything is written: :KinMemoryReflect
-- (a transcript), :KinMemoryInit (a repository's documents), :KinMemoryConsolidate; and
-- :KinMemoryCandidates, the consolidation candidates found without a model.
local core = require('kin_memory.core')
local server = require('kin_memory.server')
local review = require('kin_memory.review')

local P = {}

local notify, printable, one_line, uv = core.notify, core.printable, core.one_line, core.uv

--- :KinMemoryReflect {file}: one reflection pass; its proposal opens in a review buffer. Nothing is
--- written until you apply there (exactly what the buffer shows; the model is not asked again).
function P.reflect(file)
  if not file or file == '' then
    -- No file: the newest Claude Code or Codex session of this workspace, as `kin-memory reflect --latest`.
    server.execute('kin.memory.latestSession', {}, function(latest)
      if type(latest) == 'table' and type(latest.path) == 'string' then
        notify(('the newest %s session: %s'):format(printable(latest.agent or 'agent'), printable(latest.path)))
        P.reflect(latest.path)
      else
        local searched = type(latest) == 'table' and type(latest.searched) == 'table' and latest.searched or {}
        notify('no Claude Code or Codex session of this workspace was found (looked in '
          .. table.concat(vim.tbl_map(printable, searched), ', ') .. '); give a transcript: :KinMemoryReflect {file}',
          vim.log.levels.WARN)
      end
    end)
    return
  end
  local path = core.absolute(vim.fn.expand(file))
  if not uv.fs_stat(path) then
    notify('no such transcript: ' .. path, vim.log.levels.ERROR)
    return
  end
  notify('reflecting on ' .. vim.fs.basename(path) .. '…')
  server.execute('kin.memory.reflect', { transcript = path }, review.review_or_say('reflection'))
end

--- :KinMemoryInit [dir]: one model pass over the repository's AGENTS.md, README, docs/ …; its proposal
--- of stamped project facts opens in the review buffer. Default: the current working directory.
function P.init(dir)
  local path = core.absolute(vim.fn.expand(dir and dir ~= '' and dir or vim.fn.getcwd()))
  local st = uv.fs_stat(path)
  if not st or st.type ~= 'directory' then
    notify('not a folder: ' .. printable(path), vim.log.levels.ERROR)
    return
  end
  notify('reading the documents of ' .. printable(vim.fs.basename(path)) .. '…')
  server.execute('kin.memory.init', { folder = path }, review.review_or_say('initialization'))
end

--- Group `n`'s memories side by side: the first in the current window, each other one in a split.
local function open_group(group)
  for i, uri in ipairs(type(group.uris) == 'table' and group.uris or {}) do
    vim.cmd((i == 1 and 'edit ' or 'vsplit ') .. vim.fn.fnameescape(vim.uri_to_fname(uri)))
  end
end

--- The consolidation candidates (no model) in the quickfix list: one entry per memory, each naming its
--- group's number, kind and reason. With `n` (:KinMemoryCandidates n), group n opens side by side.
function P.candidates(n)
  local wanted = tonumber(n)
  server.execute('kin.memory.consolidationCandidates', vim.empty_dict(), function(result)
    local found = type(result) == 'table' and type(result.candidates) == 'table' and result.candidates or {}
    if #found == 0 then
      notify('no consolidation candidates: no duplicates, contradictions, stale facts or episodes to keep')
      return
    end
    if wanted then
      if not found[wanted] then
        notify(('there are %d candidate groups; no group %d'):format(#found, wanted), vim.log.levels.ERROR)
        return
      end
      open_group(found[wanted])
      return
    end
    local items = {}
    for i, c in ipairs(found) do
      for _, uri in ipairs(type(c.uris) == 'table' and c.uris or {}) do
        items[#items + 1] = { filename = vim.uri_to_fname(uri), lnum = 1,
          text = ('[%d] %s: %s'):format(i, one_line(c.kind or '?'), one_line(c.reason or '')) }
      end
    end
    vim.fn.setqflist({}, ' ', { title = ('kin-memory: %d consolidation candidates'):format(#found), items = items })
    vim.cmd('copen')
    notify(('%d consolidation candidate group(s) in the quickfix list; :KinMemoryCandidates {n} opens one side by side'):format(#found))
  end)
end

--- :KinMemoryConsolidate: with reflection settings, one model pass over the candidates, reviewed like a
--- reflection; without them, the candidates in the quickfix list.
function P.consolidate()
  local reflection = (core.options.settings or {}).reflection or {}
  if not reflection.provider or not reflection.model then
    notify('no model configured (settings.reflection.provider and .model in setup): listing the candidates')
    P.candidates()
    return
  end
  notify('consolidating memories…')
  server.execute('kin.memory.consolidate', vim.empty_dict(), review.review_or_say('consolidation'))
end

return P
