"""Loop-free programs decided exactly: the whole program as one bit-vector formula.

A program without loops has finitely many paths, and over bit-vectors (`smt_bv`) the question
"does some path fail an assertion?" is decidable: Z3 bit-blasts it. The unrolling is `bmc`'s
(with no loop to unroll it is complete). An error on a path with defined behaviour is replayed
like any BMC counterexample; when there is none, and no path has undefined behaviour either
(signed overflow, division by zero, a bad shift or index), the program is SAFE: on such
executions wrapping and mathematical signed arithmetic agree, so the integer encodings that
check certificates (`checks.certificate_result`) mean the same program.
"""

from __future__ import annotations

from ..cfg import build_cfg
from ..ir import Program
from ..smt_bv import BITS
from . import bmc
from .base import Budget, EngineResult, unknown

ENGINE = "bitblast"


def check(program: Program, budget: Budget) -> EngineResult:
    """SAFE (empty certificate), UNSAFE (replayed inputs) or UNKNOWN for a loop-free program."""
    if build_cfg(program).loops:
        return unknown(ENGINE, "the program has loops (only loop-free programs are bit-blasted)")
    return bmc.check(program, budget, max_bound=1, domain=BITS, engine=ENGINE)
