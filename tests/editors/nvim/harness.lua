-- Test harness for one headless Neovim case: runs the body once Neovim has started, turns any error
-- into "FAIL <case>: <reason>" on stderr and the exit status, and gives the waits cases share.
local T = {}
local uv = vim.uv
T.case = vim.env.KIN_NVIM_CASE or 'case'
T.store = uv.fs_realpath(vim.env.KIN_NVIM_STORE) -- the case's store, however the server is told of it
T.project = uv.fs_realpath(uv.cwd())
T.timeout = 15000
T.notes = {} -- every vim.notify, for asserting on user-facing messages

local function out(line)
  io.stderr:write(line .. '\n')
end

function T.log(...)
  out('  ' .. table.concat(vim.tbl_map(tostring, { ... }), ' '))
end

function T.fail(msg)
  error({ kin_fail = msg }, 2)
end

function T.check(cond, msg, ...)
  if not cond then
    T.fail(msg:format(...))
  end
  return cond
end

function T.eq(actual, expected, what)
  if not vim.deep_equal(actual, expected) then
    T.fail(('%s: expected %s, got %s'):format(what, vim.inspect(expected), vim.inspect(actual)))
  end
end

function T.path(rel)
  return T.store .. '/' .. rel
end

function T.read(path)
  local f = io.open(path, 'rb')
  if not f then
    return nil
  end
  local s = f:read('*a')
  f:close()
  return s
end

--- Write a file the way another process (the agent) would: to disk, no buffer involved.
function T.write(path, text)
  vim.fn.mkdir(vim.fs.dirname(path), 'p')
  local f = assert(io.open(path .. '.tmp', 'wb'))
  f:write(text)
  f:close()
  assert(os.rename(path .. '.tmp', path))
end

--- Wait until pred() returns a truthy value; fail with `what` (a string or function) otherwise.
function T.wait(pred, what, timeout)
  local value
  local ok = vim.wait(timeout or T.timeout, function()
    value = pred()
    return value ~= nil and value ~= false
  end, 20)
  if not ok then
    T.fail(('timed out after %d ms waiting for %s'):format(timeout or T.timeout,
      type(what) == 'function' and what() or what))
  end
  return value
end

--- Wait until kin-memory has attached to buf (by path: the buffer keeps the filetype markdown): at
--- once when the plugin already knows the store, else when its startup question to the server
--- (`kin-memory info`) has been answered.
--- The first notification after the n-th one whose message matches `pattern`, or nil.
function T.notes_since(n, pattern)
  for i = n + 1, #T.notes do
    if T.notes[i].msg:find(pattern) then
      return T.notes[i]
    end
  end
end

--- Run an Ex command and wait for a notification matching `pattern` after it.
function T.run_and_wait(command, pattern, what, timeout)
  local n = #T.notes
  vim.cmd(command)
  return T.wait(function()
    return T.notes_since(n, pattern)
  end, what, timeout)
end

function T.wait_filetype(buf, rel)
  T.wait(function()
    return #vim.lsp.get_clients({ bufnr = buf, name = 'kin_memory' }) > 0
  end, function()
    return ('kin-memory to attach to %s (store root known to the plugin: %s)'):format(rel,
      tostring(require('kin_memory').root()))
  end)
  T.eq(vim.bo[buf].filetype, 'markdown', 'the filetype of ' .. rel)
end

--- Wait for buf's kin-memory client to be attached and initialized; returns the client.
function T.wait_client(buf, rel)
  return T.wait(function()
    local c = vim.lsp.get_clients({ bufnr = buf, name = 'kin_memory' })[1]
    return c and c.initialized and c
  end, 'the kin_memory client to attach to ' .. rel .. ' (did the server start?)')
end

--- Open a memory of the store and wait until kin-memory has attached to it.
function T.open(rel)
  vim.cmd.edit(vim.fn.fnameescape(T.path(rel)))
  local buf = vim.api.nvim_get_current_buf()
  T.wait_filetype(buf, rel)
  return buf, T.wait_client(buf, rel)
end

function T.diags(buf, code)
  return vim.tbl_filter(function(d)
    return code == nil or d.code == code
  end, vim.diagnostic.get(buf))
end

function T.codes(buf)
  local codes = vim.tbl_map(function(d)
    return d.code
  end, vim.diagnostic.get(buf))
  table.sort(codes)
  return codes
end

--- Wait for a diagnostic with `code` on buf; returns it.
function T.wait_diag(buf, code, timeout)
  return T.wait(function()
    return T.diags(buf, code)[1]
  end, function()
    return ('diagnostic %s on %s (has: %s)'):format(code, vim.api.nvim_buf_get_name(buf),
      table.concat(T.codes(buf), ', '))
  end, timeout)
end

--- Send a request from buf and wait for the kin-memory client's answer; fails on an error answer.
function T.request(buf, method, params)
  local answers, err = vim.lsp.buf_request_sync(buf, method, params, T.timeout)
  T.check(answers, '%s: no answer (%s)', method, tostring(err))
  for _, a in pairs(answers) do
    T.check(not a.err, '%s: server error: %s', method, a.err and a.err.message or '')
    return a.result
  end
  T.fail(method .. ': no client answered')
end

--- workspace/executeCommand on the kin-memory client, synchronously.
function T.exec(client, command, arg)
  local answer, err = client:request_sync('workspace/executeCommand',
    { command = command, arguments = { arg } }, T.timeout)
  T.check(answer, '%s: no answer (%s)', command, tostring(err))
  return answer.result, answer.err
end

--- Replace vim.ui.select with a scripted chooser; the returned table records every call.
function T.script_select(choose)
  local calls = {}
  vim.ui.select = function(items, opts, on_choice)
    local call = { items = items, prompt = opts.prompt, kind = opts.kind, labels = {} }
    for i, item in ipairs(items) do
      call.labels[i] = opts.format_item and opts.format_item(item) or tostring(item)
    end
    calls[#calls + 1] = call
    local idx = choose(call)
    vim.schedule(function()
      on_choice(idx and items[idx] or nil, idx)
    end)
  end
  return calls
end

--- Replace vim.ui.input with scripted answers (one per call, in order); returns the prompts asked.
function T.script_input(answers)
  local asked = {}
  vim.ui.input = function(opts, on_confirm)
    asked[#asked + 1] = { prompt = opts.prompt, default = opts.default }
    local answer = answers[#asked]
    vim.schedule(function()
      on_confirm(answer)
    end)
  end
  return asked
end

--- The lines of the buffer named `name` once it exists and has more than `min` lines.
function T.wait_buffer(name, min)
  return T.wait(function()
    local b = vim.fn.bufnr(name)
    return b ~= -1 and vim.api.nvim_buf_line_count(b) > (min or 1) and b
  end, 'the ' .. name .. ' buffer')
end

--- Run the project's CLI as the user would in this project (same environment, same directory).
function T.cli(args)
  local out = vim.system(vim.list_extend({ 'kin-memory' }, args), { text = true, cwd = T.project }):wait()
  T.check(out.code == 0, 'kin-memory %s exited with %d: %s', table.concat(args, ' '), out.code, out.stderr or '')
  return out.stdout
end

function T.noted(pattern)
  for _, n in ipairs(T.notes) do
    if n.msg:find(pattern) then
      return n
    end
  end
end

--- Give the plugin extra `settings` (merged into the README's setup) before any server starts, and
--- wait until it knows the store again (setup() asks `kin-memory info` anew).
function T.setup(settings)
  local kin = require('kin_memory')
  kin.setup({ settings = vim.tbl_deep_extend('force', vim.deepcopy(kin.options.settings), settings) })
  T.wait(function()
    return kin.root()
  end, 'the plugin to learn the store root after setup()')
end

--- Start the scripted model server (tests/editors/fake_model.py, OpenAI wire format) with `steps`,
--- and point the plugin's reflection settings at it, with an API key in an environment variable the
--- server inherits. Returns { url, state() -> the server's counters, requests() -> how many requests }.
function T.fake_model(steps)
  local dir = vim.fn.tempname()
  vim.fn.mkdir(dir, 'p')
  local script, state = dir .. '/script.json', dir .. '/state.json'
  local f = assert(io.open(script, 'w'))
  f:write(vim.json.encode({ format = 'openai', steps = steps }))
  f:close()
  vim.env.KIN_E2E_MODEL_KEY = 'e2e-key-' .. tostring(uv.hrtime())
  local out = {}
  local proc = vim.system({ vim.env.KIN_PYTHON, vim.env.KIN_NVIM_DIR .. '/../fake_model.py', script,
    '--state', state, '--key-env', 'KIN_E2E_MODEL_KEY' }, {
    stdin = true, -- it exits when this pipe closes, whatever happens to this Neovim
    stdout = function(_, data)
      out[#out + 1] = data
    end,
    stderr = function(_, data)
      out[#out + 1] = data
    end,
  })
  T.on_exit(function()
    proc:kill(15)
  end)
  local url = T.wait(function()
    return table.concat(out):match('^(http://127%.0%.0%.1:%d+)\n')
  end, function()
    return 'the fake model server to start (its output: ' .. table.concat(out) .. ')'
  end)
  local fake = { url = url }
  function fake.state()
    local text = T.read(state)
    return text and vim.json.decode(text) or {}
  end
  function fake.requests()
    return fake.state().requests or 0
  end
  T.setup({
    reflection = { provider = 'openai', model = 'e2e-model', baseUrl = url .. '/v1', apiKeyEnv = 'KIN_E2E_MODEL_KEY',
      timeoutSeconds = 30 },
  })
  return fake
end

--- The review buffer of a proposal (`kin-memory://proposal/<id>`), if one is loaded.
function T.review_buffer()
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(b) and vim.api.nvim_buf_get_name(b):find('^kin%-memory://proposal/') then
      return b
    end
  end
end

function T.buf_text(buf)
  local text = table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), '\n')
  return vim.bo[buf].eol and text .. '\n' or text
end

--- Type keys as the user would (mappings apply), e.g. a review buffer's `a`.
function T.press(keys)
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(keys, true, false, true), 'mx', false)
end

--- Picture this Neovim's screen as it is now into tests/editors/.artifacts/<name>.png: screenshot.py
--- attaches as a UI over this Neovim's socket (the case's header needs `-- e2e: screenshot`), fails
--- unless the screen shows every text of `expect`, and detaches. Returns the screen's text.
function T.screenshot(name, expect)
  local python = vim.env.KIN_SHOT_PYTHON
  T.check(python and python ~= '', 'T.screenshot needs the line -- e2e: screenshot in the case header')
  local address = vim.v.servername ~= '' and vim.v.servername or vim.fn.serverstart()
  local out = vim.env.KIN_REPO .. '/tests/editors/.artifacts/' .. name .. '.png'
  local argv = { python, vim.env.KIN_NVIM_DIR .. '/screenshot.py', '--attach', address, '--out', out }
  for _, text in ipairs(expect or {}) do
    vim.list_extend(argv, { '--expect', text })
  end
  local done
  vim.system(argv, { text = true }, function(result)
    done = result
  end)
  -- vim.wait keeps serving this Neovim's RPC, so the UI can attach and be painted meanwhile.
  T.wait(function()
    return done
  end, 'the screenshot', 30000)
  T.check(done.code == 0, 'the screenshot failed: %s%s', done.stdout or '', done.stderr or '')
  T.log(('screenshot %s:'):format(out))
  for line in (done.stdout or ''):gmatch('[^\n]+') do
    T.log('| ' .. line)
  end
  return done.stdout
end

local exit_hooks = {}

--- Run fn when the case ends, pass or fail (stop helper processes).
function T.on_exit(fn)
  exit_hooks[#exit_hooks + 1] = fn
end

local function shutdown(code)
  for _, fn in ipairs(exit_hooks) do
    pcall(fn)
  end
  for _, c in ipairs(vim.lsp.get_clients()) do
    c:stop()
  end
  vim.wait(2000, function()
    return #vim.lsp.get_clients() == 0
  end, 20)
  for _, c in ipairs(vim.lsp.get_clients()) do
    c:stop(true)
  end
  vim.cmd('cquit ' .. code)
end

-- With a UI (ui.py, the case header's `-- e2e: ui`): the body runs as a coroutine that goes back to
-- Neovim's main loop at each T.ui_check and T.ui_type, as a person's steps would, so that a message
-- that does not fit stops Neovim at a hit-enter prompt there (ui.py looks, and resumes the body).
T.ui = vim.env.KIN_NVIM_UI == '1'
local body_co

local function verdict(ok, err)
  if ok then
    out(('\nPASS %s'):format(T.case)) -- on its own line, whatever Neovim printed
    shutdown(0)
  else
    out(('\nFAIL %s: %s'):format(T.case, err))
    shutdown(1)
  end
end

local function resume(...)
  local ok, err = coroutine.resume(body_co, ...)
  if not ok then
    verdict(false, debug.traceback(body_co, tostring(err)))
  end
end

--- Back to the main loop until ui.py has looked for a prompt (and, given `picture`, pictured the screen
--- into tests/editors/.artifacts/<picture>.png); returns what it saw: { prompt = bool, mode, screen =
--- the screen's text, cmdline = its last line, earlier = prompts met during the step }.
function T.ui_check(label, picture)
  T.check(T.ui, 'T.ui_check needs the line -- e2e: ui in the case header')
  vim.rpcnotify(vim.g.kin_ui_channel, 'kin_check', label, picture or '')
  local seen = coroutine.yield()
  T.log(('[ui] %s: %s | %s'):format(label, seen.prompt and ('PROMPT (' .. seen.mode .. ')') or 'no prompt',
    seen.cmdline))
  return seen
end

--- Type `keys` as the person would (the main loop reads them) and come back once pred() is truthy;
--- returns its value.
function T.ui_type(keys, pred, what, timeout)
  local limit = uv.now() + (timeout or T.timeout)
  local timer = assert(uv.new_timer())
  local done = false
  vim.api.nvim_input(vim.api.nvim_replace_termcodes(keys, true, false, true))
  timer:start(50, 50, vim.schedule_wrap(function()
    if done then
      return
    end
    local ok, value = pcall(pred)
    if (ok and value) or not ok or uv.now() > limit then
      done = true
      timer:stop()
      timer:close()
      resume(ok and value or nil, ok and '' or value)
    end
  end))
  local value, err = coroutine.yield()
  T.check(value, 'timed out waiting for %s %s', type(what) == 'function' and what() or what, err or '')
  return value
end

--- What a failed case says: a T.check's own sentence, or any other error with its traceback.
local function failure(e)
  if type(e) == 'table' and e.kin_fail then
    return e.kin_fail
  end
  return debug.traceback(tostring(e), 2)
end

local function run_ui(body)
  -- Neovim's own vim.notify stays (it is what puts a message on the screen); what it echoes is noted.
  local echo = vim.api.nvim_echo
  vim.api.nvim_echo = function(chunks, history, opts)
    local text = table.concat(vim.tbl_map(function(c)
      return c[1]
    end, chunks))
    if text ~= '' then
      local level = (opts or {}).err and vim.log.levels.ERROR
        or (chunks[1] and chunks[1][2] == 'WarningMsg') and vim.log.levels.WARN or vim.log.levels.INFO
      T.notes[#T.notes + 1] = { msg = text, level = level }
      T.log('[echo]', text)
    end
    return echo(chunks, history, opts)
  end
  body_co = coroutine.create(function()
    local ok, err = xpcall(body, failure)
    verdict(ok, err)
  end)
  _G.kin_ui_start = function() -- by ui.py, once it has told this Neovim its channel
    vim.schedule(resume)
  end
  _G.kin_ui_resume = function(seen)
    vim.schedule(function()
      resume(seen)
    end)
  end
end

--- Run the case body after startup; its verdict becomes the exit status.
function T.run(body)
  if T.ui then
    return run_ui(body)
  end
  vim.notify = function(msg, level)
    T.notes[#T.notes + 1] = { msg = tostring(msg), level = level }
    T.log('[notify]', tostring(msg))
  end
  vim.api.nvim_create_autocmd('VimEnter', {
    once = true,
    callback = function()
      vim.schedule(function()
        local t0 = uv.hrtime()
        local ok, err = xpcall(body, failure)
        local ms = (uv.hrtime() - t0) / 1e6
        if ok then
          out(('\nPASS %s (%.0f ms)'):format(T.case, ms)) -- on its own line, whatever Neovim printed
          shutdown(0)
        else
          out(('\nFAIL %s: %s'):format(T.case, err))
          shutdown(1)
        end
      end)
    end,
  })
end

--- Run argv to its end, checking it exited with one of `codes` (default: 0); its standard output.
function T.system(argv, cwd, env, codes)
  local out = vim.system(argv, { text = true, cwd = cwd, env = env }):wait()
  T.check(vim.tbl_contains(codes or { 0 }, out.code), '%s exited with %d: %s%s', table.concat(argv, ' '), out.code,
    out.stdout or '', out.stderr or '')
  return out.stdout
end

--- The other machine of the sync cases ("laptop": {home, store, clone}): its `kin-memory ARGS…`, run in
--- its clone with its own HOME and store (a sync that reports a conflict exits with 1), and its memory
--- tool. The clone is read at each call: a case may set it after this.
function T.other_machine(m)
  local function cli(...)
    local out = T.system(vim.list_extend({ 'kin-memory' }, { ... }), m.clone,
      { HOME = m.home, KIN_MEMORY_DIR = m.store, GIT_CONFIG_GLOBAL = m.home .. '/gitconfig' },
      select(1, ...) == 'sync' and { 0, 1 } or { 0 })
    T.log('[' .. (m.name or 'laptop') .. ']', vim.trim(out))
    return out
  end
  return cli, function(call)
    return cli('tool', vim.json.encode(call))
  end
end

--- The quick fixes the server offers for diagnostic `d` of `buf` (as Neovim's code-action flow asks), and
--- their titles (logged).
function T.quick_fixes(buf, d)
  local actions = T.request(buf, 'textDocument/codeAction', {
    textDocument = vim.lsp.util.make_text_document_params(buf),
    range = { start = { line = d.lnum, character = d.col }, ['end'] = { line = d.end_lnum, character = d.end_col } },
    context = { diagnostics = { d.user_data.lsp }, only = { 'quickfix' } },
  }) or {}
  local titles = vim.tbl_map(function(a)
    return a.title
  end, actions)
  T.log('actions:', table.concat(titles, ' | '))
  return actions, titles
end

return T
