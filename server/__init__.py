"""The Quokka language server (`quokka lsp`): proven invariants inline, assertion status, counterexamples.

Layout, outermost first:

* `lsp` — the pygls wiring. Handlers only record edits in the `scheduler` and answer requests from
  the pure functions below; `quokka/verify` is a custom request that honours `$/cancelRequest`.
* `scheduler` — the document store. Each document has at most one background verification of a
  snapshot; a newer version or a cancel kills it, and a result whose document changed is dropped.
* `runner` — one `quokka verify --json` process group per run (`verify_main` is its entry point);
  `cache` — outcomes by content hash in sqlite; `settings` — the editor's `quokka.*` settings.
* `hints`, `diagnostics`, `actions` — pure: an outcome (`model`) and the text (`text`, `view`) in,
  LSP inlay hints, hovers, diagnostics, code actions and code lenses out.
"""
