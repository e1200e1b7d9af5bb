-- Run by test_lsp_neovim.py inside `nvim --headless`: open a program, wait for the Quokka server,
-- then read inlay hints (resolved), hover and diagnostics through Neovim's own LSP client, and write
-- them as JSON to vim.g.probe_out.
local out = {}
local function finish()
  vim.fn.writefile({ vim.json.encode(out) }, vim.g.probe_out)
  vim.cmd("qa!")
end

local ok, err = pcall(function()
  vim.cmd("edit " .. vim.fn.fnameescape(vim.g.probe_file))
  local bufnr = vim.api.nvim_get_current_buf()
  out.filetype = vim.bo[bufnr].filetype
  local client
  out.attached = vim.wait(20000, function()
    client = vim.lsp.get_clients({ bufnr = bufnr, name = "quokka" })[1]
    return client ~= nil and client.initialized
  end, 50)
  if not out.attached then return end
  local hints = {}
  out.hints_arrived = vim.wait(vim.g.probe_wait_ms, function()
    hints = vim.lsp.inlay_hint.get({ bufnr = bufnr })
    return #hints > 0
  end, 50)
  out.hints = {}
  for _, item in ipairs(hints) do
    local hint = item.inlay_hint
    local resolved = client:request_sync("inlayHint/resolve", hint, 10000, bufnr)
    local tooltip = resolved and resolved.result and resolved.result.tooltip
    table.insert(out.hints, {
      label = type(hint.label) == "string" and hint.label or hint.label[1].value,
      line = hint.position.line,
      character = hint.position.character,
      tooltip = type(tooltip) == "table" and tooltip.value or tooltip,
    })
  end
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(bufnr) },
    position = { line = vim.g.probe_line, character = vim.g.probe_character },
  }
  local hover = vim.lsp.buf_request_sync(bufnr, "textDocument/hover", params, 10000)
  for _, response in pairs(hover or {}) do
    if response.result then out.hover = response.result.contents.value end
  end
  vim.wait(5000, function() return #vim.diagnostic.get(bufnr) > 0 end, 50)
  out.diagnostics = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    table.insert(out.diagnostics, { line = d.lnum, severity = d.severity, message = d.message })
  end
  out.position_encoding = client.offset_encoding
  local titles = {}
  vim.wait(5000, function()
    titles = {}
    for _, lens in ipairs(vim.lsp.codelens.get(bufnr)) do
      if lens.command then table.insert(titles, lens.command.title) end
    end
    return #titles == 3 and not titles[1]:find("verifying")
  end, 50)
  out.lenses = titles
end)
if not ok then out.error = tostring(err) end
finish()
