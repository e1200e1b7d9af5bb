"""The Quokka language server."""
