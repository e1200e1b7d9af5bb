"""Running programs: the IR interpreter, the IR as C, compiled runs and the replay of counterexamples.

Owns: `interp`, `emit_c`, `replay`, `shrink`. May import `ir`, `cfg`, the top-level
modules (`errors`, `properties`, `lexer`); never `encode`, `engines` or `verdict`.
"""
