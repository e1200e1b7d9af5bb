"""Quokka's verifier, packaged in the order of its data flow.

- `frontend/`: cpp, pycparser and the lowering to the IR (the only importer of pycparser)
- `ir/`: the IR, its builder, printer, type checker and the semantics of C operations
- `cfg/`: basic blocks and loop heads, the one meaning of control flow
- `encode/`: cutpoint encodings, CHC, integer and bit-vector SMT, seeds from path models
- `engines/`: one strategy each (inductive check, Houdini, Spacer, BMC, algebra, fuzzing, ...)
- `exec/`: the interpreter, the IR as C, compiled runs and counterexample replay
- `verdict/`: the portfolio, the gates every verdict passes, `Result` and witnesses
- `infra/`: child processes and limits, the results store, profiles, `--dump-dir`

Top level: the `quokka` dispatcher and `parse` command, errors, options, properties, task files and
the lexical layer of C text. Packages import only what lies before them in that list (plus the top
level); `verdict` and `infra` may import all of it.
"""
