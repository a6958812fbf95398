-- End-to-end test of the Argus LSP client in real (headless) Neovim:
--   ARGUS_LSP=build/argus-lsp nvim --headless -u NONE -c 'luafile tests/editors/nvim_e2e.lua'
-- Opens a copy of examples/broken/typo.ag through editors/nvim, waits for
-- AG3001 "unknown name 'laod'", hovers a name, applies the quick fix, checks
-- the buffer and that the diagnostic goes away, then checks that -D values
-- set from Neovim reach the server. Exits non-zero on any failure.
local script = debug.getinfo(1, 'S').source:sub(2)
local repo = vim.fn.fnamemodify(script, ':p:h:h:h')
local server = os.getenv('ARGUS_LSP') or (repo .. '/build/argus-lsp')
local TIMEOUT = 30000

local function log(message) io.stdout:write('nvim_e2e: ' .. message .. '\n') end

local function fail(message)
  io.stderr:write('nvim_e2e: FAIL: ' .. message .. '\n')
  vim.cmd('cquit! 1')
end

local function check(cond, message)
  if not cond then error(message, 2) end
end

local function code_of(d)
  if d.code then return d.code end
  return d.user_data and d.user_data.lsp and d.user_data.lsp.code
end

local function find_code(bufnr, code)
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    if code_of(d) == code then return d end
  end
end

local function codes(bufnr)
  local out = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do table.insert(out, tostring(code_of(d))) end
  return table.concat(out, ',')
end

local function request(bufnr, method, params)
  local responses, err = vim.lsp.buf_request_sync(bufnr, method, params, TIMEOUT)
  check(responses, method .. ' got no response: ' .. tostring(err))
  for _, response in pairs(responses) do
    check(not response.err, method .. ' failed: ' .. vim.inspect(response.err))
    return response.result
  end
end

local function run()
  if os.getenv('ARGUS_E2E_LSP_LOG') then vim.lsp.set_log_level('debug') end
  check(vim.fn.executable(server) == 1, 'argus-lsp is not executable at ' .. server .. ' (set ARGUS_LSP)')
  vim.opt.runtimepath:prepend(repo .. '/editors/nvim')
  vim.cmd('filetype plugin indent on')
  vim.cmd('syntax on')

  local dir = vim.fn.tempname()
  vim.fn.mkdir(dir, 'p')
  local path = dir .. '/typo.ag'
  vim.fn.writefile(vim.fn.readfile(repo .. '/examples/broken/typo.ag'), path)

  local argus = require('argus')
  -- Protocol errors the client sees (a duplicate response, a bad message) fail
  -- the test (ARGUS_E2E_LENIENT=1 only reports them).
  local protocol_errors = {}
  argus.setup({
    cmd = { server },
    target = 'sm_80',
    on_error = function(code, err)
      table.insert(protocol_errors, tostring(vim.lsp.client_errors[code] or code) .. ' ' .. vim.inspect(err):sub(1, 80))
    end,
  })
  vim.cmd('edit ' .. vim.fn.fnameescape(path))
  local bufnr = vim.api.nvim_get_current_buf()
  check(vim.bo[bufnr].filetype == 'argus', 'filetype is ' .. vim.bo[bufnr].filetype)
  check(vim.bo[bufnr].expandtab and vim.bo[bufnr].shiftwidth == 4, 'ftplugin indent settings not applied')
  check(vim.bo[bufnr].commentstring == '# %s', 'commentstring is ' .. vim.bo[bufnr].commentstring)
  check(vim.b[bufnr].current_syntax == 'argus', 'syntax/argus.vim not loaded')
  log('nvim ' .. tostring(vim.version().major) .. '.' .. tostring(vim.version().minor)
    .. ', lsp via ' .. (vim.lsp.start and 'vim.lsp.start' or 'vim.lsp.start_client'))

  -- 1. The diagnostic.
  local ok = vim.wait(TIMEOUT, function() return find_code(bufnr, 'AG3001') ~= nil end, 50)
  check(ok, 'no AG3001 diagnostic within ' .. TIMEOUT .. ' ms; have: ' .. codes(bufnr))
  local typo = find_code(bufnr, 'AG3001')
  check(typo.message:find("unknown name 'laod'", 1, true), 'unexpected message: ' .. typo.message)
  local line = vim.api.nvim_buf_get_lines(bufnr, typo.lnum, typo.lnum + 1, true)[1]
  check(line:sub(typo.col + 1, typo.end_col) == 'laod', 'diagnostic range covers "'
    .. line:sub(typo.col + 1, typo.end_col) .. '"')
  check(typo.severity == vim.diagnostic.severity.ERROR, 'AG3001 is not an error')
  check(#argus.clients() == 1, 'expected one argus client, have ' .. #argus.clients())
  log('diagnostic: ' .. typo.message)

  -- 2. Hover on the name `i` (line "i = program_id(0)"); the tiles are invalid while BLOCK = 1000.
  local uri = vim.uri_from_bufnr(bufnr)
  local a_line
  for i, l in ipairs(vim.api.nvim_buf_get_lines(bufnr, 0, -1, true)) do
    if l:match('^%s*i = program_id') then a_line = i - 1 end
  end
  check(a_line, "no line 'i = program_id' in the example")
  local a_col = vim.api.nvim_buf_get_lines(bufnr, a_line, a_line + 1, true)[1]:find('i') - 1
  local hover = request(bufnr, 'textDocument/hover', { textDocument = { uri = uri }, position = { line = a_line, character = a_col } })
  check(hover and hover.contents, 'hover returned nothing')
  local hover_text = type(hover.contents) == 'string' and hover.contents or hover.contents.value
  check(hover_text:find('**i**', 1, true) and hover_text:find('i32', 1, true), 'hover lacks the name or i32: ' .. hover_text)
  log('hover: ' .. hover_text:gsub('\n.*', ''))

  -- 3. The code action: what the server offers, then applied through Neovim's own menu.
  local lsp_diagnostics = {}
  if vim.lsp.diagnostic.get_line_diagnostics then
    lsp_diagnostics = vim.lsp.diagnostic.get_line_diagnostics(bufnr, typo.lnum)
  end
  local range = { start = { line = typo.lnum, character = typo.col }, ['end'] = { line = typo.end_lnum, character = typo.end_col } }
  local actions = request(bufnr, 'textDocument/codeAction', {
    textDocument = { uri = uri }, range = range, context = { diagnostics = lsp_diagnostics },
  })
  check(actions and #actions > 0, 'no code actions')
  local fix
  for _, action in ipairs(actions) do
    if action.kind == 'quickfix' and action.title:find('load', 1, true) then fix = action end
  end
  check(fix, 'no quick fix mentioning load: ' .. vim.inspect(actions))
  check(fix.isPreferred == true, 'the quick fix is not preferred')
  -- Apply it the way a user does: :lua vim.lsp.buf.code_action() on the diagnostic,
  -- choosing the quick fix in the menu (vim.ui.select, answered here).
  local offered = {}
  local real_select = vim.ui.select
  vim.ui.select = function(items, opts, on_choice)
    for i, item in ipairs(items) do
      local action = item[2] or item.action or item
      local title = (opts.format_item and opts.format_item(item)) or action.title or ''
      table.insert(offered, title)
      if title:find(fix.title, 1, true) then return on_choice(item, i) end
    end
    on_choice(nil, nil)
  end
  vim.api.nvim_win_set_cursor(0, { typo.lnum + 1, typo.col })
  vim.lsp.buf.code_action()
  ok = vim.wait(TIMEOUT, function()
    return vim.api.nvim_buf_get_lines(bufnr, typo.lnum, typo.lnum + 1, true)[1]:find('load(y', 1, true) ~= nil
  end, 50)
  vim.ui.select = real_select
  check(ok, 'vim.lsp.buf.code_action() did not apply the fix; menu offered: ' .. vim.inspect(offered))
  check(#offered > 0, 'the fix was applied without going through the code action menu')
  local fixed = vim.api.nvim_buf_get_lines(bufnr, typo.lnum, typo.lnum + 1, true)[1]
  check(fixed:find('b = load(y.tile', 1, true), 'buffer not fixed: ' .. fixed)
  check(not table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, -1, true), '\n'):find('laod'), 'laod still in the buffer')
  log('applied "' .. fix.title .. '" from a menu of ' .. #offered .. ': ' .. vim.trim(fixed))

  -- The edit reaches the server through didChange and the diagnostic clears.
  ok = vim.wait(TIMEOUT, function() return find_code(bufnr, 'AG3001') == nil end, 50)
  check(ok, 'AG3001 still reported after the fix; have: ' .. codes(bufnr))
  check(find_code(bufnr, 'AG4003') ~= nil, 'AG4003 (BLOCK = 1000) should remain; have: ' .. codes(bufnr))

  -- 4. -D values from Neovim reach the server: BLOCK=1024 overrides the bad default.
  argus.set_defines({ BLOCK = 1024 })
  ok = vim.wait(TIMEOUT, function() return #vim.diagnostic.get(bufnr) == 0 end, 50)
  check(ok, 'diagnostics remain after -D BLOCK=1024: ' .. codes(bufnr))
  log('-D BLOCK=1024 cleared AG4003')

  if #protocol_errors > 0 then
    local message = 'protocol errors seen by the client: ' .. table.concat(protocol_errors, '; ')
    check(os.getenv('ARGUS_E2E_LENIENT') == '1', message)
    log('WARNING: ' .. message)
  end

  -- 5. Shut the server down cleanly.
  local client = argus.clients()[1]
  vim.lsp.stop_client(client.id)
  ok = vim.wait(5000, function() return vim.lsp.get_client_by_id(client.id) == nil end, 50)
  check(ok, 'the server did not stop after shutdown/exit')
end

local ok, err = xpcall(run, debug.traceback)
if not ok then
  fail(tostring(err))
else
  log('PASS')
  vim.cmd('qall!')
end
