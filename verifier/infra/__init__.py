"""What every stage leans on: child processes and their limits, the results store, profiles, dumps.

Owns: `processes` (the one home of child processes), `store` (the one sqlite store), `profile`,
`dump` (`--dump-dir`). May import `ir`, `cfg`, `encode` (for dumps) and the top-level modules.
"""
