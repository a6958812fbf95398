-- Argus for Neovim: starts argus-lsp for `argus` buffers and keeps its target
-- architecture and -D values in step. Works on Neovim 0.7 (vim.lsp.start_client
-- + buf_attach_client) and 0.8+ (vim.lsp.start).
--
--   require('argus').setup({ cmd = { 'argus-lsp' }, target = 'sm_90', defines = { BM = 64 } })
local M = {}

-- '' is "as argusc without --arch": the file's `# arch:` line, else sm_90.
M.targets = { [''] = true, sm_80 = true, sm_90 = true, sm_90a = true }

local defaults = {
  cmd = { 'argus-lsp' },
  target = '',
  defines = {},
  -- ptxas's registers per thread after each kernel's header (inlay hints, Neovim 0.10+
  -- shows them with vim.lsp.inlay_hint); false: the server does not run ptxas.
  register_hints = true,
  on_attach = nil,
  on_error = nil,
  capabilities = nil,
  root_markers = { '.git' },
}

M.config = vim.deepcopy(defaults)
-- The 0.7 path keeps one client per root directory and attaches buffers to it.
local clients_by_root = {}

-- Neovim 0.11 made client methods take `self` (client:notify); 0.7-0.10 use client.notify.
local function client_notify(client, method, params)
  if vim.fn.has('nvim-0.11') == 1 then return client:notify(method, params) end
  return client.notify(method, params)
end

local function notify_error(message)
  vim.notify('argus: ' .. message, vim.log.levels.ERROR)
end

--- Defines as strings keyed by const name; accepts { BM = 64 } or { 'BM=64' }.
function M.normalize_defines(defines)
  local out = {}
  for key, value in pairs(defines or {}) do
    if type(key) == 'number' and type(value) == 'string' then
      local name, v = value:match('^%s*([%a_][%w_]*)%s*=%s*(.-)%s*$')
      if name then out[name] = v end
    elseif type(key) == 'string' and key:match('^[%a_][%w_]*$') then
      local t = type(value)
      if t == 'string' or t == 'number' or t == 'boolean' then out[key] = tostring(value) end
    end
  end
  return out
end

--- The payload of workspace/didChangeConfiguration; argus-lsp reads settings.argus.target (or arch).
function M.server_settings()
  local target = M.config.target
  local defines = M.normalize_defines(M.config.defines)
  -- An empty Lua table would be sent as a JSON array; the server wants an object.
  if next(defines) == nil then defines = vim.empty_dict() end
  local hints = { registers = M.config.register_hints ~= false }
  return { argus = { arch = target, target = target, defines = defines, inlayHints = hints } }
end

local function root_dir(bufnr)
  local name = vim.api.nvim_buf_get_name(bufnr)
  local dir = name ~= '' and vim.fn.fnamemodify(name, ':p:h') or vim.fn.getcwd()
  for _, marker in ipairs(M.config.root_markers) do
    local found = vim.fn.finddir(marker, dir .. ';')
    if found == '' then found = vim.fn.findfile(marker, dir .. ';') end
    if found ~= '' then return vim.fn.fnamemodify(found, ':p:h:h') end
  end
  return dir
end

local function client_config(bufnr)
  local root = root_dir(bufnr)
  local settings = M.server_settings()
  return {
    name = 'argus',
    cmd = M.config.cmd,
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = root } },
    settings = settings,
    init_options = settings.argus,
    capabilities = M.config.capabilities or vim.lsp.protocol.make_client_capabilities(),
    on_attach = M.config.on_attach,
    on_error = M.config.on_error,
    on_init = function(client)
      client_notify(client, 'workspace/didChangeConfiguration', { settings = M.server_settings() })
      return true
    end,
  }
end

--- Starts (or reuses) the server for `bufnr` and attaches the buffer; returns the client id.
function M.attach(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  if vim.fn.executable(M.config.cmd[1]) ~= 1 then
    notify_error("'" .. tostring(M.config.cmd[1]) .. "' is not executable; pass setup({ cmd = { '/path/to/argus-lsp' } })")
    return nil
  end
  local config = client_config(bufnr)
  if vim.lsp.start then
    return vim.lsp.start(config, { bufnr = bufnr })
  end
  local id = clients_by_root[config.root_dir]
  if id == nil or vim.lsp.get_client_by_id(id) == nil or vim.lsp.client_is_stopped(id) then
    id = vim.lsp.start_client(config)
    if id == nil then
      notify_error('could not start ' .. table.concat(M.config.cmd, ' '))
      return nil
    end
    clients_by_root[config.root_dir] = id
  end
  vim.lsp.buf_attach_client(bufnr, id)
  return id
end

--- The running argus clients.
function M.clients()
  local out = {}
  local all = vim.lsp.get_clients and vim.lsp.get_clients() or vim.lsp.get_active_clients()
  for _, client in pairs(all) do
    if client.name == 'argus' then table.insert(out, client) end
  end
  return out
end

--- Sends the current target and defines to every running argus server.
function M.push_configuration()
  local settings = M.server_settings()
  for _, client in ipairs(M.clients()) do
    client.config.settings = settings
    client_notify(client, 'workspace/didChangeConfiguration', { settings = settings })
  end
end

function M.set_target(target)
  if not M.targets[target] then
    notify_error("unknown target '" .. tostring(target) .. "'; use sm_80, sm_90 or sm_90a")
    return false
  end
  M.config.target = target
  M.push_configuration()
  return true
end

function M.set_defines(defines)
  M.config.defines = defines or {}
  M.push_configuration()
end

function M.setup(opts)
  opts = opts or {}
  M.config = vim.tbl_deep_extend('force', vim.deepcopy(defaults), opts)
  -- Lists are replaced, not merged index by index.
  if opts.cmd then M.config.cmd = opts.cmd end
  if opts.defines then M.config.defines = opts.defines end
  if type(M.config.cmd) == 'string' then M.config.cmd = { M.config.cmd } end
  if not M.targets[M.config.target] then
    notify_error("unknown target '" .. tostring(M.config.target) .. "'; using the file's # arch: line")
    M.config.target = ''
  end

  local group = vim.api.nvim_create_augroup('argus_lsp', { clear = true })
  -- Detection without relying on ftdetect/ being on the runtimepath.
  vim.api.nvim_create_autocmd({ 'BufRead', 'BufNewFile' }, {
    group = group,
    pattern = '*.ag',
    callback = function(args)
      if vim.bo[args.buf].filetype ~= 'argus' then vim.bo[args.buf].filetype = 'argus' end
    end,
  })
  vim.api.nvim_create_autocmd('FileType', {
    group = group,
    pattern = 'argus',
    callback = function(args) M.attach(args.buf) end,
  })
  vim.api.nvim_create_user_command('ArgusTarget', function(cmd) M.set_target(cmd.args) end, {
    nargs = 1,
    complete = function() return { 'sm_80', 'sm_90', 'sm_90a' } end,
  })
  -- Buffers opened before setup() ran.
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(bufnr) and vim.bo[bufnr].filetype == 'argus' then M.attach(bufnr) end
  end
end

return M
