-- kin-memory for Neovim 0.11+: the language server through vim.lsp.config/vim.lsp.enable, attached by
-- path to the memory files of the store (which keep the filetype `markdown`, so markdown's ftplugin,
-- syntax, `FileType markdown` autocmds and other markdown servers still apply), and user commands for
-- the server's custom commands.
--
-- This module is the top of the plugin: setup(), the commands, and the public functions, re-exported
-- from the modules that hold them. Those modules never require this one:
--   core (options, store root, messages, scratch windows) ← server (the client, `execute`)
--   ← bootstrap, review, search, preview, lifecycle, history, manage, stats, sync
--   ← passes, bulk (they open reviews) ← this module.
-- `health` (loaded by :checkhealth) sits beside them on core and bootstrap; frontmatter needs none.
local core = require('kin_memory.core')
local server = require('kin_memory.server')
local bootstrap = require('kin_memory.bootstrap')
local review = require('kin_memory.review')
local passes = require('kin_memory.passes')
local search = require('kin_memory.search')
local lifecycle = require('kin_memory.lifecycle')
local preview = require('kin_memory.preview')
local sync = require('kin_memory.sync')

local M = {}

M.name = core.name

-- The public functions, where they live.
local EXPORTS = {
  [core] = { 'root', 'info', 'is_memory_file', 'is_memory_buffer', 'notify', 'printable', 'one_line', 'scratch',
    'close_with_q' },
  [server] = { 'attach', 'client', 'refresh_info', 'refresh_lenses', 'restart', 'doing', 'execute' },
  [bootstrap] = { 'info_command', 'show_info' },
  [review] = { 'review' },
  [passes] = { 'reflect', 'init', 'candidates', 'consolidate' },
  [search] = { 'format_result', 'search' },
  [lifecycle] = { 'sweep', 'confirm_delete', 'reviewed' },
  [preview] = { 'preview_summary', 'preview' },
  [sync] = { 'sync', 'compare' },
}
for module, names in pairs(EXPORTS) do
  for _, name in ipairs(names) do
    M[name] = module[name]
  end
end

-- `options` is the core's table (setup() replaces it): reading or assigning `require('kin_memory').options`
-- reads or assigns that one, so every module sees the same options.
setmetatable(M, {
  __index = function(_, key)
    if key == 'options' then
      return core.options
    end
  end,
  __newindex = function(t, key, value)
    if key == 'options' then
      core.options = value
    else
      rawset(t, key, value)
    end
  end,
})

local function define_commands()
  local cmd = vim.api.nvim_create_user_command
  cmd('KinMemorySearch', function(o)
    search.search(o.args, o.bang)
  end, { nargs = '*', bang = true, desc = 'kin-memory: search memories (ranked recall; ! for every workspace)' })
  cmd('KinMemoryReflect', function(o)
    passes.reflect(o.args)
  end, { nargs = '?', complete = 'file', desc = 'kin-memory: reflect on a transcript, or the newest session (asks before applying)' })
  cmd('KinMemoryInit', function(o)
    passes.init(o.args)
  end, { nargs = '?', complete = 'dir', desc = 'kin-memory: propose memories from a repository (asks before applying)' })
  cmd('KinMemoryConsolidate', passes.consolidate, { nargs = 0, desc = 'kin-memory: merge duplicates, fix contradictions (asks before applying)' })
  cmd('KinMemoryCandidates', function(o)
    passes.candidates(o.args)
  end, { nargs = '?', desc = 'kin-memory: consolidation candidates in the quickfix list (with n: group n side by side)' })
  cmd('KinMemorySweep', lifecycle.sweep, { nargs = 0, desc = 'kin-memory: delete expired memories (asks first)' })
  cmd('KinMemoryReviewed', lifecycle.reviewed, { nargs = 0, desc = 'kin-memory: mark this memory reviewed' })
  cmd('KinMemoryPreview', preview.preview, { nargs = 0, desc = 'kin-memory: preview the prompt block' })
  cmd('KinMemoryInfo', bootstrap.show_info, { nargs = 0, desc = 'kin-memory: where the store is and how it was found' })
  require('kin_memory.history').define_commands()
  require('kin_memory.bulk').define_commands()
  require('kin_memory.manage').define_commands()
  require('kin_memory.stats').define_commands()
  sync.define_commands()
end

--- Set everything up. Options: `cmd` (server command, default `{'kin-memory', 'serve'}`),
--- `info_cmd` (the command printing `kin-memory info --json`; derived from `cmd` when unset),
--- `settings` (the `kinMemory` section), `search_limit`, `start_timeout_ms`, `info_timeout_ms`.
function M.setup(opts)
  core.options = vim.tbl_deep_extend('force', vim.deepcopy(core.defaults), opts or {})
  for _, key in ipairs({ 'cmd', 'info_cmd' }) do
    if opts and opts[key] then
      core.options[key] = opts[key] -- a list: replace, never merge element-wise
    end
  end
  vim.lsp.config(core.name, server.lsp_config())
  vim.lsp.enable(core.name)
  local group = vim.api.nvim_create_augroup('kin_memory', { clear = true })
  local lens_group = vim.api.nvim_create_augroup('kin_memory_codelens', { clear = true })
  vim.api.nvim_create_autocmd('LspAttach', {
    group = group,
    callback = function(args)
      local client = vim.lsp.get_client_by_id(args.data.client_id)
      if client and client.name == core.name then
        server.refresh_info(client)
        server.enable_lenses(args.buf, lens_group)
        require('kin_memory.frontmatter').attach(args.buf)
      end
    end,
  })
  define_commands()
  vim.lsp.commands['kinMemory.confirmDelete'] = lifecycle.confirm_delete
  bootstrap.bootstrap() -- last: an answer (or failure) arriving later finds everything above in place
end

return M
