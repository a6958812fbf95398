-- Unit tests of editors/nvim in real headless Neovim, without a server:
--   nvim --headless -u NONE -i NONE -c 'luafile tests/editors/nvim_unit.lua'
-- filetype detection, ftplugin settings, syntax groups, indentation, the
-- settings payload, and the Neovim 0.8+ path (vim.lsp.start) with a stub.
local script = debug.getinfo(1, 'S').source:sub(2)
local repo = vim.fn.fnamemodify(script, ':p:h:h:h')
local passed, failed = 0, 0

local function case(name, fn)
  local ok, err = xpcall(fn, debug.traceback)
  if ok then
    passed = passed + 1
    io.stdout:write('ok - ' .. name .. '\n')
  else
    failed = failed + 1
    io.stdout:write('not ok - ' .. name .. '\n' .. tostring(err) .. '\n')
  end
end

local function eq(actual, expected, what)
  if not vim.deep_equal(actual, expected) then
    error((what or 'value') .. ': expected ' .. vim.inspect(expected) .. ', got ' .. vim.inspect(actual), 2)
  end
end

vim.opt.runtimepath:prepend(repo .. '/editors/nvim')
vim.cmd('filetype plugin indent on')
vim.cmd('syntax on')
local argus = require('argus')

local dir = vim.fn.tempname()
vim.fn.mkdir(dir, 'p')
local gemm = dir .. '/gemm.ag'
vim.fn.writefile(vim.fn.readfile(repo .. '/examples/gemm.ag'), gemm)
vim.cmd('edit ' .. vim.fn.fnameescape(gemm))
local buf = vim.api.nvim_get_current_buf()

case('ftdetect: *.ag is argus', function() eq(vim.bo[buf].filetype, 'argus', 'filetype') end)

case('ftplugin: spaces, width 4, # comments', function()
  eq(vim.bo[buf].expandtab, true, 'expandtab')
  eq(vim.bo[buf].shiftwidth, 4, 'shiftwidth')
  eq(vim.bo[buf].commentstring, '# %s', 'commentstring')
end)

-- The syntax group at the first occurrence of `needle` on the line containing `line_pat`.
local function group_at(line_pat, needle)
  for lnum, line in ipairs(vim.api.nvim_buf_get_lines(buf, 0, -1, true)) do
    if line:find(line_pat, 1, true) then
      local col = line:find(needle, 1, true)
      assert(col, needle .. ' not on line ' .. line)
      return vim.fn.synIDattr(vim.fn.synID(lnum, col, 1), 'name')
    end
  end
  error('no line with ' .. line_pat)
end

case('syntax: decorators, keywords, dtypes, builtins, numbers, comments', function()
  eq(group_at('@kernel', '@kernel'), 'argusDecorator', '@kernel')
  eq(group_at('def gemm', 'def'), 'argusDefine', 'def')
  eq(group_at('def gemm', 'gemm'), 'argusFunction', 'function name')
  eq(group_at('def gemm', 'Tensor'), 'argusType', 'Tensor')
  eq(group_at('def gemm', 'f32'), 'argusDtype', 'f32')
  eq(group_at('BM: const', 'const'), 'argusStorage', 'const')
  eq(group_at('BM: const', '64'), 'argusNumber', '64')
  eq(group_at('for kt', 'for'), 'argusRepeat', 'for')
  eq(group_at('for kt', 'in'), 'argusOperator', 'in')
  eq(group_at('acc = dot', 'dot'), 'argusBuiltin', 'dot')
  eq(group_at('barrier()', 'barrier'), 'argusBuiltin', 'barrier')
  eq(group_at('# Tiled', 'Tiled'), 'argusComment', 'comment')
end)

case('indent: after a colon, inside brackets, after return, on else', function()
  local scratch = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_option(scratch, 'filetype', 'argus')
  vim.api.nvim_buf_set_lines(scratch, 0, -1, true, {
    'def f(a,', '      b):', 'x = 1', '    if x:  # note', 'y = 2', '        return y', 'else:', 'z',
    '    for i in range(4):', '        if i > 2:', '            pass', 'elif', 
  })
  vim.api.nvim_set_current_buf(scratch)
  local function indent_of(lnum) return vim.fn.ArgusIndent(lnum) end
  eq(indent_of(2), 4, 'continuation inside an open bracket')
  eq(indent_of(3), 4, 'after a def whose parameters span two lines')
  eq(indent_of(5), 8, 'after "if x:  # note"')
  eq(indent_of(7), 4, 'else lines up with its if after a return')
  eq(indent_of(8), 4, 'after else:')
  eq(indent_of(12), 8, 'elif lines up with the inner if')
  vim.api.nvim_set_current_buf(buf)
end)

case('settings: defines normalized, empty defines encode as an object', function()
  eq(argus.normalize_defines({ BM = 64, FAST = true, S = '0.5', ['bad name'] = 1, T = {} }),
    { BM = '64', FAST = 'true', S = '0.5' }, 'object defines')
  eq(argus.normalize_defines({ 'BM=64', ' BN = 32 ', 'junk', '=3' }), { BM = '64', BN = '32' }, 'list defines')
  argus.config = vim.tbl_extend('force', argus.config, { target = 'sm_80', defines = {} })
  local encoded = vim.fn.json_encode(argus.server_settings())
  assert(encoded:find('"defines":%s*{}'), 'defines must encode as {}: ' .. encoded)
  assert(encoded:find('"arch":%s*"sm_80"'), encoded)
end)

case('the default target is the file\'s # arch: line (empty), as argusc without --arch', function()
  package.loaded['argus'] = nil
  local fresh = require('argus')
  eq(fresh.config.target, '', 'default target')
  eq(fresh.server_settings().argus.target, '', 'sent as empty')
  package.loaded['argus'] = argus
end)

case('set_target rejects unknown targets', function()
  local notify = vim.notify
  local messages = {}
  vim.notify = function(m) table.insert(messages, m) end
  eq(argus.set_target('sm_75'), false, 'sm_75')
  eq(argus.set_target('sm_90a'), true, 'sm_90a')
  vim.notify = notify
  eq(argus.config.target, 'sm_90a', 'target')
  assert(messages[1] and messages[1]:find('sm_75', 1, true), vim.inspect(messages))
end)

case('Neovim 0.8+ path: vim.lsp.start gets the config and the buffer', function()
  local calls = {}
  local real_start = vim.lsp.start
  vim.lsp.start = function(config, opts) table.insert(calls, { config = config, opts = opts }); return 42 end
  argus.setup({ cmd = { 'sh', '-c', 'exit 0' }, target = 'sm_90', defines = { BM = 32 } })
  local other = dir .. '/other.ag'
  vim.fn.writefile({ '@device', 'def f(v):', '    return v' }, other)
  vim.cmd('edit ' .. vim.fn.fnameescape(other))
  vim.lsp.start = real_start
  local call = calls[#calls]
  assert(call, 'vim.lsp.start was not called on FileType')
  eq(call.opts.bufnr, vim.api.nvim_get_current_buf(), 'bufnr')
  eq(call.config.name, 'argus', 'name')
  eq(call.config.cmd, { 'sh', '-c', 'exit 0' }, 'cmd')
  eq(call.config.settings.argus, { arch = 'sm_90', target = 'sm_90', defines = { BM = '32' }, inlayHints = { registers = true } }, 'settings')
  -- No .git above the scratch dir: the root is the file's directory.
  eq(call.config.root_dir, vim.fn.fnamemodify(dir, ':p:h'), 'root_dir')
  eq(type(call.config.on_init), 'function', 'on_init')
end)

case('a missing server is reported, not thrown', function()
  local notify = vim.notify
  local messages = {}
  vim.notify = function(m) table.insert(messages, m) end
  argus.setup({ cmd = { '/nonexistent/argus-lsp' } })
  local id = argus.attach(buf)
  vim.notify = notify
  eq(id, nil, 'client id')
  assert(messages[1] and messages[1]:find('not executable', 1, true), vim.inspect(messages))
end)

io.stdout:write(string.format('%d passed, %d failed\n', passed, failed))
vim.cmd(failed == 0 and 'qall!' or 'cquit! 1')
