-- :help kin-memory works with the plugin on the runtimepath (the tags file ships with it), every
-- :KinMemory… command and every setup() option has a tag, and the shipped tags are what :helptags
-- makes of the help file today.
local T = dofile(vim.env.KIN_NVIM_HARNESS)
local kin = require('kin_memory')

T.run(function()
  vim.cmd('help kin-memory')
  local buf = vim.api.nvim_get_current_buf()
  T.eq(vim.bo[buf].buftype, 'help', 'buftype after :help kin-memory')
  T.eq(vim.fs.basename(vim.api.nvim_buf_get_name(buf)), 'kin-memory.txt', 'the help file shown')
  T.check(vim.api.nvim_get_current_line():find('*kin-memory*', 1, true), 'the cursor is on the tag: %q',
    vim.api.nvim_get_current_line())
  vim.cmd('help :KinMemoryHealth')
  T.check(vim.api.nvim_get_current_line():find('*:KinMemoryHealth*', 1, true), ':help :KinMemoryHealth jumps to it')

  local doc = vim.env.KIN_REPO .. '/extension-nvim/doc'
  local shipped = T.read(doc .. '/tags')
  local tags = {}
  for tag in shipped:gmatch('([^\t\n]+)\t') do
    tags[tag] = true
  end
  for name in pairs(vim.api.nvim_get_commands({})) do
    if name:match('^KinMemory') then
      T.check(tags[':' .. name], 'a help tag for :%s', name)
    end
  end
  for key in pairs(kin.options) do
    T.check(tags['kin-memory-' .. key], 'a help tag for the option %s', key)
  end

  local copy = vim.fn.tempname()
  vim.fn.mkdir(copy, 'p')
  vim.fn.writefile(vim.fn.readfile(doc .. '/kin-memory.txt', 'b'), copy .. '/kin-memory.txt', 'b')
  vim.cmd('helptags ' .. vim.fn.fnameescape(copy))
  T.eq(T.read(copy .. '/tags'), shipped, 'doc/tags as :helptags makes it (run :helptags extension-nvim/doc)')
end)
