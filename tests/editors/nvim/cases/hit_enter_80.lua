-- e2e: ui 80
-- hit_enter on an 80-column screen (68 cells of room for a message): the one-line messages are cut
-- with "…" where they do not fit, and still none waits for Enter.
dofile(vim.env.KIN_NVIM_DIR .. '/cases/hit_enter.lua')
