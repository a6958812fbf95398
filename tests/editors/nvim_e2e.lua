-- End-to-end test of the Argus LSP client in real (headless) Neovim:
--   ARGUS_LSP=build/argus-lsp nvim --headless -u NONE -c 'luafile tests/editors/nvim_e2e.lua'
-- Opens a copy of examples/broken/typo.ag through editors/nvim, waits for
-- AG3001 "unknown name 'laod'", hovers a name, applies the quick fix, checks
-- the buffer and that the diagnostic goes away, then checks that -D values
-- set from Neovim reach the server; then, on tests/lsp/calls.ag, the check's
-- progress, ptxas's register hint, navigation, hints, completion and the
-- refactorings. Exits non-zero on any failure.
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

  -- 5. The features beyond the first set, on tests/lsp/calls.ag (a kernel with a
  -- device function and a pipelined loop), through Neovim's own commands where it has them.
  local calls_path = dir .. '/calls.ag'
  vim.fn.writefile(vim.fn.readfile(repo .. '/tests/lsp/calls.ag'), calls_path)
  -- The check's progress as Neovim's statusline plugins read it: LspProgressUpdate,
  -- then vim.lsp.util.get_progress_messages().
  local progress_seen = {}
  vim.api.nvim_create_autocmd('User', {
    pattern = 'LspProgressUpdate',
    callback = function()
      for _, m in ipairs(vim.lsp.util.get_progress_messages()) do
        table.insert(progress_seen, { title = m.title, message = m.message, percentage = m.percentage, done = m.done })
      end
    end,
  })
  vim.cmd('edit ' .. vim.fn.fnameescape(calls_path))
  local calls = vim.api.nvim_get_current_buf()
  local calls_uri = vim.uri_from_bufnr(calls)
  ok = vim.wait(TIMEOUT, function() return #vim.lsp.buf_get_clients(calls) > 0 end, 50)
  check(ok, 'the argus client did not attach to calls.ag')
  local lines = vim.api.nvim_buf_get_lines(calls, 0, -1, true)
  local function line_of(needle)
    for i, l in ipairs(lines) do
      local col = l:find(needle, 1, true)
      if col then return i - 1, col - 1 end
    end
    error('no line with ' .. needle)
  end
  local doc = { uri = calls_uri }

  -- Progress of the check of calls.ag: begun with Argus's title, then done.
  ok = vim.wait(TIMEOUT, function()
    for _, m in ipairs(progress_seen) do
      if m.done then return true end
    end
    return false
  end, 50)
  check(ok, 'no finished progress of the check: ' .. vim.inspect(progress_seen))
  check(progress_seen[1].title == 'Argus: checking' and not progress_seen[1].done, 'first progress: ' .. vim.inspect(progress_seen))
  log('progress: ' .. #progress_seen .. ' updates, ' .. progress_seen[1].title .. ' ... done')

  -- ptxas's registers for the kernel, after its header, once measured (Neovim 0.7
  -- does not take workspace/inlayHint/refresh: the test asks again until they come).
  local gemm_line = line_of('STAGES: const = 3):')
  local register_hint
  local has_ptxas = vim.fn.executable('/usr/local/cuda/bin/ptxas') == 1
  ok = not has_ptxas or vim.wait(TIMEOUT, function()
    local all = request(calls, 'textDocument/inlayHint', { textDocument = doc, range = { start = { line = 0, character = 0 }, ['end'] = { line = #lines, character = 0 } } })
    for _, h in ipairs(all) do
      if type(h.label) == 'string' and h.label:match('^%d+ registers') then register_hint = h end
    end
    return register_hint ~= nil
  end, 200)
  check(ok, 'no register hint for gemm')
  if has_ptxas then
    check(register_hint.position.line == gemm_line and register_hint.position.character == #lines[gemm_line + 1],
      'register hint not after the header: ' .. vim.inspect(register_hint))
    check(register_hint.tooltip:find('ptxas (sm_80)', 1, true), 'tooltip: ' .. tostring(register_hint.tooltip))
    log('register hint: ' .. register_hint.label)
  else
    log('register hint: not checked (no ptxas at /usr/local/cuda/bin/ptxas)')
  end

  -- Declaration through vim.lsp.buf.declaration(): the cursor jumps to `def scale`.
  local call_line, call_col = line_of('scale(acc, 2.0)')
  vim.api.nvim_win_set_cursor(0, { call_line + 1, call_col + 1 })
  vim.lsp.buf.declaration()
  local def_line = line_of('def scale')
  ok = vim.wait(TIMEOUT, function() return vim.api.nvim_win_get_cursor(0)[1] == def_line + 1 end, 50)
  check(ok, 'vim.lsp.buf.declaration() did not jump to def scale; cursor at ' .. vim.inspect(vim.api.nvim_win_get_cursor(0)))

  -- Type definition of acc: the zeros(...) it was made by.
  local acc_line, acc_col = line_of('acc = scale(acc, 2.0)')
  vim.api.nvim_win_set_cursor(0, { acc_line + 1, acc_col })
  vim.lsp.buf.type_definition()
  local zeros_line = line_of('acc = zeros(')
  ok = vim.wait(TIMEOUT, function() return vim.api.nvim_win_get_cursor(0)[1] == zeros_line + 1 end, 50)
  check(ok, 'vim.lsp.buf.type_definition() did not jump to zeros(...); cursor at ' .. vim.inspect(vim.api.nvim_win_get_cursor(0)))

  -- Incoming calls of scale into the quickfix list (vim.lsp.buf.incoming_calls()).
  vim.fn.setqflist({}, 'r')
  vim.api.nvim_win_set_cursor(0, { def_line + 1, 5 })
  vim.lsp.buf.incoming_calls()
  ok = vim.wait(TIMEOUT, function() return #vim.fn.getqflist() >= 2 end, 50)
  check(ok, 'incoming_calls() filled no quickfix list: ' .. vim.inspect(vim.fn.getqflist()))
  vim.cmd('cclose')
  local outgoing = request(calls, 'callHierarchy/outgoingCalls', {
    item = request(calls, 'textDocument/prepareCallHierarchy', { textDocument = doc, position = { line = line_of('def gemm'), character = 5 } })[1],
  })
  check(#outgoing == 1 and outgoing[1].to.name == 'scale', 'outgoing calls of gemm: ' .. vim.inspect(outgoing))

  -- Workspace symbols (vim.lsp.buf.workspace_symbol fills the quickfix list).
  vim.fn.setqflist({}, 'r')
  vim.lsp.buf.workspace_symbol('scl')
  ok = vim.wait(TIMEOUT, function() return #vim.fn.getqflist() >= 1 end, 50)
  check(ok and vim.fn.getqflist()[1].text:find('scale', 1, true), 'workspace_symbol: ' .. vim.inspect(vim.fn.getqflist()))
  vim.cmd('cclose')

  local folds = request(calls, 'textDocument/foldingRange', { textDocument = doc })
  local loop_line = line_of('for kt in pipelined')
  local folded = false
  for _, f in ipairs(folds) do
    if f.startLine == loop_line and f.endLine == line_of('acc = dot(') then folded = true end
  end
  check(folded, 'no folding range for the pipelined loop: ' .. vim.inspect(folds))
  local selection = request(calls, 'textDocument/selectionRange', { textDocument = doc, positions = { { line = call_line, character = call_col + 7 } } })
  check(selection[1].range and selection[1].parent, 'selection range without parents: ' .. vim.inspect(selection))
  local report = request(calls, 'textDocument/diagnostic', { textDocument = doc })
  -- Only the warning that -D BLOCK (set above) names no parameter of this file's kernel.
  local errors = 0
  for _, d in ipairs(report.items or {}) do
    if d.severity == 1 then errors = errors + 1 end
  end
  check(report.kind == 'full' and #report.items >= 1 and errors == 0, 'pull diagnostics: ' .. vim.inspect(report))
  local hints = request(calls, 'textDocument/inlayHint', { textDocument = doc, range = { start = { line = 0, character = 0 }, ['end'] = { line = #lines, character = 0 } } })
  local stage_hint = false
  for _, h in ipairs(hints) do
    if h.label == '4 KiB × 3 stages = 12 KiB' then stage_hint = true end
  end
  check(stage_hint, 'no shared-bytes hint with stages: ' .. vim.inspect(hints))
  -- Completion: snippets only for a client that says it takes them.
  local snippets = vim.lsp.protocol.make_client_capabilities().textDocument.completion.completionItem.snippetSupport
  local dot_line = line_of('acc = dot(')
  local completion = request(calls, 'textDocument/completion', { textDocument = doc, position = { line = dot_line, character = 8 } })
  local items = completion.items or completion
  local copy_bulk
  for _, item in ipairs(items) do
    if item.label == 'copy_bulk' then copy_bulk = item end
  end
  check(copy_bulk, 'copy_bulk is not completed')
  if snippets then
    check(copy_bulk.insertTextFormat == 2 and copy_bulk.insertText == 'copy_bulk(${1:dst}, ${2:src})', vim.inspect(copy_bulk))
  else
    check(copy_bulk.insertTextFormat ~= 2, 'a snippet sent to a client without snippet support: ' .. vim.inspect(copy_bulk))
  end
  -- Refactoring: inline scale at its call, applied as Neovim applies a workspace edit.
  local actions = request(calls, 'textDocument/codeAction', {
    textDocument = doc, range = { start = { line = call_line, character = call_col + 2 }, ['end'] = { line = call_line, character = call_col + 2 } },
    context = { diagnostics = {} },
  })
  local inline
  for _, action in ipairs(actions) do
    if action.kind == 'refactor.inline' then inline = action end
  end
  check(inline, 'no inline action at the call of scale: ' .. vim.inspect(actions))
  vim.lsp.util.apply_workspace_edit(inline.edit, 'utf-16')
  local inlined = vim.api.nvim_buf_get_lines(calls, call_line, call_line + 1, true)[1]
  check(inlined == '        acc = acc * 2.0', 'inlined line: ' .. inlined)

  -- Refactoring: extract the if/else into a device function (with the inlined line above).
  lines = vim.api.nvim_buf_get_lines(calls, 0, -1, true)
  local if_line = line_of('if BM > 32:')
  local else_end = line_of('acc = scale(acc, 0.5)')
  local extract
  for _, action in ipairs(request(calls, 'textDocument/codeAction', {
    textDocument = doc, range = { start = { line = if_line, character = 4 }, ['end'] = { line = else_end, character = #lines[else_end + 1] } },
    context = { diagnostics = {} },
  })) do
    if action.kind == 'refactor.extract.function' then extract = action end
  end
  check(extract, 'no extract-function action for the if/else')
  vim.lsp.util.apply_workspace_edit(extract.edit, 'utf-16')
  local text = table.concat(vim.api.nvim_buf_get_lines(calls, 0, -1, true), '\n')
  check(text:find('@device\ndef extracted(BM, acc):\n    if BM > 32:\n        acc = acc * 2.0\n', 1, true), 'extracted:\n' .. text)
  check(text:find('\n    acc = extracted(BM, acc)\n', 1, true), 'no call of the extracted function:\n' .. text)
  -- The server agrees: the refactored file has no errors.
  ok = vim.wait(TIMEOUT, function()
    local report = request(calls, 'textDocument/diagnostic', { textDocument = doc })
    for _, d in ipairs(report.items or {}) do
      if d.severity == 1 then return false end
    end
    return true
  end, 200)
  check(ok, 'errors after the extraction')
  log('declaration, type definition, call hierarchy, workspace symbols, folding, selection, pull diagnostics, inlay hints, completion, inline, extract')

  if #protocol_errors > 0 then
    local message = 'protocol errors seen by the client: ' .. table.concat(protocol_errors, '; ')
    check(os.getenv('ARGUS_E2E_LENIENT') == '1', message)
    log('WARNING: ' .. message)
  end

  -- 6. Shut the server down cleanly.
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
