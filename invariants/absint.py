"""The abstract-interpretation proposer: the constraints of the polyhedron `engines.absint` computes
at each loop head, one candidate each (`x + y == 10`, `x <= 10`, `i - 2*j >= 0`), and for a head
partitioned by the loop's branch conditions each part's facts under its guard, and the
disjunction of the parts.

The polyhedron is projected on the variables in scope at the loop; a bound that only repeats a
variable's type range is left out, and so is one with a coefficient over `MAX_COEFF` (a hull
with a type's range: `715827549*t + 1431655765*j <= ...`). Only guesses: Houdini and the
certificate check decide (the analysis approximates C, see its docstring).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from quokka.verifier.engines.absint import Heads, Linear, Part, loop_heads, negation
from quokka.verifier.ir import INT, Binary, Expr, IntType, Program, VarDecl
from quokka.verifier.ir.printer import c_names, format_expr
from quokka.verifier.verdict.dump import dump_json

from .facts import ExprBuilder, linear
from .protocol import Candidate, LoopContext, ProposalContext

NAME = "absint"
MAX_COEFF = 1 << 20  # larger coefficients come from hulls with a type's range: no invariant one wants
MAX_BOUND = 1 << 64  # and larger constants too (and they need not fit the widest IR type)


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
            out += part_candidates(context.program, loop, heads.parts.get(loop.loop.id, ()))
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
    """`--dump-dir`'s absint/heads.json: per loop head its constraints and its parts (each a guard
    and constraints), as text over the C names; or why there are none."""
    loops: dict[str, object] = {}
    for loop_id, constraints in heads.constraints.items():
        names = c_names(program, loop_id)
        loops[loop_id] = {
            "constraints": [_text(c, names) for c in constraints],
            "parts": [
                {
                    "guard": [_text(g, names) for g in p.guard],
                    "constraints": [_text(c, names) for c in p.constraints],
                }
                for p in heads.parts.get(loop_id, ())
            ],
        }
    return {"complete": heads.complete, "reason": heads.reason, "heads": loops}


def _text(lin: Linear, names: Mapping[str, str]) -> str:
    """`3*x - y <= 5` (mathematical integers: the dump's text, not an IR expression)."""
    coeffs, op, bound = lin
    terms = [
        f"{'-' if c < 0 else '+'} {'' if abs(c) == 1 else f'{abs(c)}*'}{names.get(v, v)}"
        for v, c in coeffs.items()
    ]
    lhs = " ".join(terms).removeprefix("+ ").replace("- ", "-", 1 if terms[0][0] == "-" else 0)
    return f"{lhs} {op} {bound}"


def loop_candidates(program: Program, loop: LoopContext, constraints: tuple[Linear, ...]) -> list[Candidate]:
    decls = {d.name: d for d in program.variables}
    builder = ExprBuilder(decls)
    exprs = [builder.to_expr(linear(*c, NAME)) for c in _useful(constraints, decls)]
    return _candidates(program, loop, exprs)


def part_candidates(program: Program, loop: LoopContext, parts: tuple[Part, ...]) -> list[Candidate]:
    """Per part, each of its facts guarded by the part's atoms (`x >= 1000000 || y == 0`), and the
    disjunction of the parts (`x <= 999999 && y == 0 || x >= 1000000 && x == 3*y + 1000000`)."""
    decls = {d.name: d for d in program.variables}
    scope = {d.name for d in loop.variables}
    builder = ExprBuilder(decls)
    exprs: list[Expr] = []
    whole: list[Expr] = []
    for part in parts:
        if any(not set(c).issubset(scope) for c, _, _ in part.guard):
            return []
        guard = [builder.to_expr(linear(*g, NAME)) for g in part.guard]
        negated = [builder.to_expr(linear(*negation(g), NAME)) for g in part.guard]
        facts = [
            builder.to_expr(linear(*c, NAME)) for c in _useful(part.constraints, decls) if c not in part.guard
        ]
        exprs += [_join("||", [*negated, f]) for f in facts]
        whole.append(_join("&&", [*guard, *facts]))
    return _candidates(program, loop, [*exprs, _join("||", whole)] if whole else exprs)


def _candidates(program: Program, loop: LoopContext, exprs: list[Expr]) -> list[Candidate]:
    names = c_names(program, loop.loop.id)
    return [Candidate(loop.loop.id, e, format_expr(e, names, readable=True), NAME) for e in exprs]


def _join(op: str, parts: list[Expr]) -> Expr:
    out = parts[0]
    for p in parts[1:]:
        out = Binary(op, out, p, INT)
    return out


def _useful(constraints: tuple[Linear, ...], decls: Mapping[str, VarDecl]) -> list[Linear]:
    return [
        (coeffs, op, bound)
        for coeffs, op, bound in constraints
        if not _type_range(coeffs, op, bound, decls)
        and max(map(abs, coeffs.values())) <= MAX_COEFF
        and abs(bound) <= MAX_BOUND
    ]


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
