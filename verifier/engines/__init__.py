"""The strategies: each decides (or helps decide) a program within a `base.Budget` and returns a
`base.EngineResult`.

Proving: `inductive` (the certificate checker), `houdini`, `spacer` (CHC), `twoquery`, `algebra`
(polynomial equalities, with `conserved`), `bitblast` (bounded programs, exactly over bit-vectors).
Falsifying: `bmc` (with `bmc_unroll`), `fuzz` (compiled runs), `execute` (programs without input).
May import `ir`, `cfg`, `encode`, `exec` and the top level; never `verdict`.
"""

from .base import Budget, EngineResult, Status

__all__ = ["Budget", "EngineResult", "Status"]
