"""The abstract-interpretation proposer: the constraints of the polyhedron `engines.absint` computes
at each loop head, one candidate each (`x + y == 10`, `x <= 10`, `i - 2*j >= 0`).

The polyhedron is projected on the variables in scope at the loop; a bound that only repeats a
variable's type range is left out, and so is one with a coefficient over `MAX_COEFF` (a hull
with a type's range: `715827549*t + 1431655765*j <= ...`). Only guesses: Houdini and the
certificate check decide (the analysis approximates C, see its docstring).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from quokka.verifier.engines.absint import Heads, Linear, loop_heads
from quokka.verifier.ir import IntType, Program, VarDecl
from quokka.verifier.ir.printer import c_names, format_expr
from quokka.verifier.verdict.dump import dump_json

from .facts import ExprBuilder, linear
from .protocol import Candidate, LoopContext, ProposalContext

NAME = "absint"
MAX_COEFF = 1 << 20  # larger coefficients come from hulls with a type's range: no invariant one wants


class AbsintProposer:
    """Proposes each loop head's polyhedron, constraint by constraint (see the module docstring)."""

    name = NAME

    def __init__(self, dump_dir: Path | None = None) -> None:
        self.dump_dir = dump_dir
        self._cache: tuple[Program, Heads] | None = None

    def propose(self, context: ProposalContext) -> list[Candidate]:
        heads = self._heads(context)
        out: list[Candidate] = []
        for loop in context.loops:
            out += loop_candidates(context.program, loop, heads.constraints.get(loop.loop.id, ()))
        return out

    def _heads(self, context: ProposalContext) -> Heads:
        program = context.program
        if self._cache is None or self._cache[0] is not program:
            scopes = {loop.loop.id: [d.name for d in loop.variables] for loop in context.loops}
            heads = loop_heads(program, min(context.budget_s, 5.0), scopes)
            self._cache = (program, heads)
            if self.dump_dir is not None:
                dump_json(self.dump_dir / "absint", "heads.json", heads_json(program, heads))
        return self._cache[1]


def heads_json(program: Program, heads: Heads) -> dict[str, object]:
    """`--dump-dir`'s absint/heads.json: per loop head its constraints (C text), or why none."""
    loops: dict[str, list[str]] = {}
    for loop_id, constraints in heads.constraints.items():
        builder = ExprBuilder({d.name: d for d in program.variables})
        names = c_names(program, loop_id)
        loops[loop_id] = [
            format_expr(builder.to_expr(linear(c, op, k, NAME)), names) for c, op, k in constraints
        ]
    return {"complete": heads.complete, "reason": heads.reason, "heads": loops}


def loop_candidates(program: Program, loop: LoopContext, constraints: tuple[Linear, ...]) -> list[Candidate]:
    decls = {d.name: d for d in program.variables}
    builder = ExprBuilder(decls)
    names = c_names(program, loop.loop.id)
    out = []
    for coeffs, op, bound in constraints:
        if _type_range(coeffs, op, bound, decls) or max(map(abs, coeffs.values())) > MAX_COEFF:
            continue
        e = builder.to_expr(linear(coeffs, op, bound, NAME))
        out.append(Candidate(loop.loop.id, e, format_expr(e, names, readable=True), NAME))
    return out


def _type_range(coeffs: Mapping[str, int], op: str, bound: int, decls: Mapping[str, VarDecl]) -> bool:
    """Whether `c*v op bound` says no more than the type of `v` does."""
    if len(coeffs) != 1 or op == "==":
        return False
    ((v, c),) = coeffs.items()
    ty = decls[v].type
    if not isinstance(ty, IntType):
        return False
    lo, hi = sorted((c * ty.min, c * ty.max))
    return bound <= lo if op == ">=" else bound >= hi
