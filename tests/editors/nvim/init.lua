-- The Neovim setup the README tells users to paste, verbatim except for where the checkout lives.
vim.opt.runtimepath:append(vim.env.KIN_REPO .. '/extension-nvim')
require('kin_memory').setup({})
