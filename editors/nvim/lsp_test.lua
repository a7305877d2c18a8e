-- Drives `tsl lsp` from a headless Neovim (0.7 or later), as tests/lsp_nvim.rs runs it:
--
--   TSL_BIN=target/debug/tsl TSL_FILE=some.tsl TSL_OUT=result.json \
--     nvim --headless --clean -u NONE -c 'luafile editors/nvim/lsp_test.lua'
--
-- It opens TSL_FILE, attaches the server, waits for its diagnostics, asks for a hover and a
-- definition at the positions TSL_HOVER and TSL_DEFINITION ("line:column", 0-based, the
-- column in bytes as Neovim counts), writes what came back to TSL_OUT as JSON, and quits.
-- Neovim 0.7 has no vim.lsp.start (0.8), so the client is started and attached by hand.

local out = {}

local function finish()
  local file = io.open(os.getenv("TSL_OUT"), "w")
  file:write(vim.fn.json_encode(out))
  file:close()
  vim.cmd("qa!")
end

local function position(variable)
  local line, column = string.match(os.getenv(variable) or "", "^(%d+):(%d+)$")
  return { line = tonumber(line), character = tonumber(column) }
end

local ok, problem = pcall(function()
  local path = os.getenv("TSL_FILE")
  vim.cmd("edit " .. vim.fn.fnameescape(path))
  local buffer = vim.api.nvim_get_current_buf()
  local client = vim.lsp.start_client({
    name = "tsl",
    cmd = { os.getenv("TSL_BIN"), "lsp" },
    root_dir = vim.fn.fnamemodify(path, ":p:h"),
  })
  out.client = client ~= nil
  vim.lsp.buf_attach_client(buffer, client)

  out.published = vim.wait(20000, function()
    return #vim.diagnostic.get(buffer) > 0
  end, 50)
  out.diagnostics = {}
  for _, diagnostic in ipairs(vim.diagnostic.get(buffer)) do
    table.insert(out.diagnostics, {
      line = diagnostic.lnum,
      column = diagnostic.col,
      code = diagnostic.code or (diagnostic.user_data and diagnostic.user_data.lsp and diagnostic.user_data.lsp.code),
      message = diagnostic.message,
    })
  end

  local function ask(method, variable)
    local params = {
      textDocument = vim.lsp.util.make_text_document_params(buffer),
      position = position(variable),
    }
    local answers = vim.lsp.buf_request_sync(buffer, method, params, 10000) or {}
    for _, answer in pairs(answers) do
      if answer.result then
        return answer.result
      end
    end
    return vim.NIL
  end

  out.hover = ask("textDocument/hover", "TSL_HOVER")
  out.definition = ask("textDocument/definition", "TSL_DEFINITION")
  vim.lsp.stop_client(client)
end)

if not ok then
  out.error = tostring(problem)
end
finish()
