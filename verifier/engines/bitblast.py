"""Programs decided exactly over bit-vectors: loop-free ones, and those whose loops run a bounded
number of times and compute with bits.

Over bit-vectors (`smt_bv`) the question "does some path fail an assertion?" is decidable for a
program without loops: Z3 bit-blasts it. A program whose loops never run more than k times is
one once unrolled k times (`bmc` finds the k at which no path runs a loop more often: a
complete unrolling). The integer encodings (`bmc`, `spacer`, Houdini) over-approximate or give
up on the bitwise operators and shifts, where bit-blasting is at home; so a program with loops
is tried here when it uses them (e.g. `while (i < 16) z |= (x & (1U << i)) << i;`).

An error on a path with defined behaviour is replayed like any BMC counterexample; when there is
none, and no path has undefined behaviour either (signed overflow, division by zero, a bad shift
or index), the program is SAFE: on such executions wrapping and mathematical signed arithmetic
agree, so the integer encodings that check certificates (`checks.certificate_result`) mean the
same program.
"""

from __future__ import annotations

from quokka.verifier.encode.smt_bv import BITS

from ..cfg import build_cfg
from ..ir import Binary, Program, Unary, stmt_exprs, walk, walk_stmts
from . import bmc
from .base import Budget, EngineResult, unknown

ENGINE = "bitblast"
MAX_BOUND = 64  # iterations per loop: enough for a loop over the bits of a 64-bit word
BIT_OPS = frozenset({"&", "|", "^", "<<", ">>"})


def check(program: Program, budget: Budget) -> EngineResult:
    """SAFE (empty certificate), UNSAFE (replayed inputs) or UNKNOWN."""
    if not build_cfg(program).loops:
        return bmc.check(program, budget, max_bound=1, domain=BITS, engine=ENGINE)
    if not uses_bits(program):
        return unknown(ENGINE, "the program has loops and no bitwise operators (left to the integer engines)")
    return bmc.check(program, budget, max_bound=MAX_BOUND, domain=BITS, engine=ENGINE)


def applies(program: Program) -> bool:
    """Whether `check` can decide anything for `program`: loop-free, or computing with bits."""
    return not program.loops or uses_bits(program)


def uses_bits(program: Program) -> bool:
    """Whether some statement computes with a bitwise operator, a shift or `~`."""
    for stmt in walk_stmts(program.body):
        for e in stmt_exprs(stmt):
            if any(_is_bitwise(n) for n in walk(e)):
                return True
    return False


def _is_bitwise(e: object) -> bool:
    return (isinstance(e, Binary) and e.op in BIT_OPS) or (isinstance(e, Unary) and e.op == "~")
