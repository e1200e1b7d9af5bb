-- Quokka language server for Neovim 0.11+: proven loop invariants as inlay hints, assertion status
-- as diagnostics, counterexamples, ACSL code actions and a code lens on `main`.
--
-- Put this file in your config (e.g. ~/.config/nvim/lua/quokka.lua and `require("quokka")`), or
-- `:luafile` it. Overridable before loading: vim.g.quokka_cmd (the server command, a list) and
-- vim.g.quokka_settings (the `quokka.*` settings table).

-- SV-COMP ships preprocessed programs as `*.i`: treat them as C.
vim.filetype.add({ extension = { i = "c" } })

local settings = vim.tbl_deep_extend("force", {
  timeout = 30, -- seconds per verification
  verifyOn = "save", -- "save" (on open and save), "change" (debounced, on every edit) or "manual"
  proposers = { "dynamic", "arrays", "annotations" },
  showProvenHints = true, -- inlay hints with the proven invariants
  provenDiagnostics = true, -- a quiet Hint on each proven assertion
  -- model = "/path/to/model", endpoint = "http://127.0.0.1:8000/v1", samples = 8, -- "Verify with model"
}, vim.g.quokka_settings or {})

vim.lsp.config("quokka", {
  cmd = vim.g.quokka_cmd or { "quokka", "lsp" },
  filetypes = { "c" },
  root_markers = { "pyproject.toml", ".git" },
  settings = { quokka = settings },
  handlers = {
    -- Neovim 0.11's own refresh handler can leave the new hints undrawn while the buffer is unchanged
    -- (a redraw between its request and the answer marks the lines as up to date): re-enable instead,
    -- which starts the buffer's hint state afresh.
    ["workspace/inlayHint/refresh"] = function(_, _, ctx)
      for _, bufnr in ipairs(vim.lsp.get_buffers_by_client_id(ctx.client_id)) do
        if vim.lsp.inlay_hint.is_enabled({ bufnr = bufnr }) then
          vim.lsp.inlay_hint.enable(true, { bufnr = bufnr })
        end
      end
      return vim.NIL
    end,
  },
  commands = {
    -- "Copy proven invariant" runs here, in the editor: into the unnamed and the clipboard registers.
    ["quokka.copyInvariant"] = function(command)
      local text = command.arguments[1]
      vim.fn.setreg('"', text)
      pcall(vim.fn.setreg, "+", text)
      vim.notify("Quokka: copied " .. text)
    end,
  },
  on_attach = function(client, bufnr)
    vim.lsp.inlay_hint.enable(true, { bufnr = bufnr })
    vim.lsp.codelens.refresh({ bufnr = bufnr })
    -- Neovim does not take workspace/codeLens/refresh: refresh when a verification has published
    vim.api.nvim_create_autocmd({ "BufEnter", "BufWritePost", "CursorHold", "DiagnosticChanged" }, {
      buffer = bufnr,
      callback = function() vim.lsp.codelens.refresh({ bufnr = bufnr }) end,
    })
  end,
})

vim.lsp.enable("quokka")
