-- :KinMemoryInit end to end against a scripted model server: the pass reads the project's AGENTS.md,
-- README and docs/ (the summary lists them), its proposal of a project fact stamped with the project
-- opens in the review buffer before anything is written, and `a` writes exactly the reviewed text.
local T = dofile(vim.env.KIN_NVIM_HARNESS)

local CREATED = '/memories/facts/widget-build.md'
local TEXT = '---\ncategory: project-fact\n---\n# Widget build\n\nBuild with `make`; test with `make test`.\n'

T.run(function()
  local fake = T.fake_model({
    { tool_calls = { { command = 'create', path = CREATED, file_text = TEXT } } },
    { stop = 'Saved how the widget is built.' },
  })
  T.write(T.project .. '/AGENTS.md', '# Agents\n\nBuild with `make`; test with `make test`.\n')
  T.write(T.project .. '/README.md', '# Widget\n\nWidget renders dashboards.\n')
  T.write(T.project .. '/docs/intro.md', '# Intro\n\nThe API talks to Postgres.\n')
  T.write(T.project .. '/src/notes.md', '# Not read by init\n')
  local file = T.path('facts/widget-build.md')
  local expected = TEXT:gsub('category: project%-fact\n', 'category: project-fact\nworkspace: ' .. T.project .. '\n', 1)

  vim.cmd('KinMemoryInit')
  local review = T.wait(T.review_buffer, 'the review buffer', 30000)
  local shown = T.buf_text(review)
  T.log('review buffer:\n' .. shown)
  T.check(shown:find('Read 3 documents', 1, true), 'the summary lists what was read:\n%s', shown)
  for _, name in ipairs({ 'AGENTS.md', 'README.md', 'docs/intro.md' }) do
    T.check(shown:find(name, 1, true), 'the summary names %s:\n%s', name, shown)
  end
  T.check(not shown:find('src/notes.md', 1, true), 'src/notes.md is not read:\n%s', shown)
  T.check(shown:find('\n### 1. create ' .. vim.pesc(CREATED) .. '\n'), 'the review heads the create:\n%s', shown)
  T.check(shown:find('\n+workspace: ' .. T.project .. '\n', 1, true), 'the created fact is stamped with the project:\n%s', shown)
  T.eq(vim.uv.fs_stat(file), nil, 'nothing created before applying')
  T.eq(fake.requests(), 2, 'model requests of the pass')

  T.press('a')
  local note = T.wait(function()
    return T.noted('applied %d+ of %d+')
  end, 'the apply report')
  T.check(note.msg:find('applied 1 of 1', 1, true), 'the report: %q', note.msg)
  T.eq(T.read(file), expected, 'bytes on disk of ' .. file)
  T.eq(fake.requests(), 2, 'model requests after applying (applying asks the model nothing)')
  T.eq(T.review_buffer(), nil, 'the review buffer after applying')
  T.log('numbers: 2 model requests for the pass, 0 for the apply; 1 file written; 0 conflicts')
end)
