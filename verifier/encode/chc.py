"""The cutpoint graph of `encode` as constrained Horn clauses (`verdict.dump` writes them as SMT-LIB).

One uninterpreted predicate per loop head over the variables live there; one clause per edge:
`P_src(pre) /\\ guard /\\ post == values -> P_dst(post)` (no `P_src` for the entry; the error
location is the predicate `Err` with no arguments, and the system is safe iff `Err` is not
derivable). Rule i is named `e<i>` after edge i of the encoding.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import z3
from quokka.verifier.encode import ENTRY, ERROR, Edge, Encoding, constants
from quokka.verifier.encode.smt import const, sort_of
from quokka.verifier.encode.z3_to_ir import subterms
from quokka.verifier.ir import Program


@dataclass(frozen=True, eq=False)
class Clause:
    name: str
    edge: Edge
    variables: tuple[z3.ExprRef, ...]
    body: z3.BoolRef
    head: z3.BoolRef
    exact: bool = True


@dataclass(frozen=True, eq=False)
class ChcSystem:
    encoding: Encoding
    preds: Mapping[str, z3.FuncDeclRef]
    args: Mapping[str, tuple[str, ...]]  # loop -> IR names of the predicate's arguments
    error: z3.FuncDeclRef
    clauses: tuple[Clause, ...]

    @property
    def abstracted(self) -> bool:
        """Whether some clause over-approximates its edge (see `abstract_for_spacer`)."""
        return any(not c.exact for c in self.clauses)

    def pre_args(self, loop: str) -> list[z3.ExprRef]:
        """The pre-state constants that are `loop`'s predicate arguments."""
        return [self.encoding.pre[v] for v in self.args[loop]]


def _post_const(name: str, program: Program) -> z3.ExprRef:
    return const(f"{name}!post", program.var(name).type)


def _clause(system_preds: Mapping[str, z3.FuncDeclRef], args: Mapping[str, tuple[str, ...]],
            error: z3.FuncDeclRef, enc: Encoding, index: int) -> Clause:
    edge = enc.edges[index]
    body = [edge.guard]
    if edge.src != ENTRY:
        body.insert(0, system_preds[edge.src](*[enc.pre[v] for v in args[edge.src]]))
    if edge.dst == ERROR:
        head = error()
    else:
        posts = [_post_const(v, enc.program) for v in args[edge.dst]]
        body.extend(p == edge.post[v] for p, v in zip(posts, args[edge.dst], strict=True))
        head = system_preds[edge.dst](*posts)
    exact = z3.And(body)
    formula = abstract_for_spacer(exact)
    found = constants([formula, head])
    found.pop(error.name(), None)  # the nullary error predicate is not a variable
    return Clause(f"e{index}", edge, tuple(found[n] for n in sorted(found)), formula, head, formula.eq(exact))


def abstract_for_spacer(formula: z3.BoolRef) -> z3.BoolRef:
    """`formula` without the terms Spacer rejects as uninterpreted, over-approximated soundly.

    `div`/`mod` by a non-constant `b` become fresh `q`, `r` with `b != 0 -> a == b*q + r /\
    0 <= r < |b|` (exact unless `b == 0`, which C leaves undefined anyway); `bv2int` of an
    n-bit vector (bitwise operators) becomes a fresh value in [0, 2**n). The formula can only
    get more models, so invariants found for it hold for the exact edge relation as well.
    """
    pairs: list[tuple[z3.ExprRef, z3.ExprRef]] = []
    facts: list[z3.BoolRef] = []
    for t in filter(z3.is_app, subterms(formula)):
        kind = t.decl().kind()
        if kind in (z3.Z3_OP_IDIV, z3.Z3_OP_MOD) and not z3.is_int_value(t.arg(1)):
            a, b = t.arg(0), t.arg(1)
            q, r = z3.Int(f"div!{len(pairs)}"), z3.Int(f"mod!{len(pairs)}")
            pairs += [(a / b, q), (a % b, r)]
            facts.append(z3.Implies(b != 0, z3.And(a == b * q + r, r >= 0, r < z3.If(b >= 0, b, -b))))
        elif kind == z3.Z3_OP_BV2INT:
            u = z3.Int(f"bv!{len(pairs)}")
            pairs.append((t, u))
            facts.append(z3.And(u >= 0, u < 2 ** t.arg(0).size()))
    if not pairs:
        return formula
    return z3.And([z3.substitute(f, *pairs) for f in [formula, *facts]])


def build(enc: Encoding, prefix: str = "") -> ChcSystem:
    """The Horn clauses of `enc` (predicate names get `prefix`, to keep several systems apart)."""
    types = enc.program.var_types
    preds = {
        loop: z3.Function(f"{prefix}inv_{loop}", *[sort_of(types[v]) for v in vs], z3.BoolSort())
        for loop, vs in enc.live.items()
    }
    error = z3.Function(f"{prefix}Err", z3.BoolSort())
    clauses = tuple(_clause(preds, enc.live, error, enc, i) for i in range(len(enc.edges)))
    return ChcSystem(enc, preds, dict(enc.live), error, clauses)


def fixedpoint(system: ChcSystem, params: Mapping[str, object]) -> z3.Fixedpoint:
    """A Spacer `Fixedpoint` holding `system`; query it with `fp.query(system.error())`."""
    fp = z3.Fixedpoint()
    fp.set(engine="spacer")
    for key, value in params.items():
        fp.set(key, value)
    for pred in [*system.preds.values(), system.error]:
        fp.register_relation(pred)
    for c in system.clauses:
        if c.variables:
            fp.declare_var(*c.variables)
        fp.rule(c.head, c.body, c.name)
    return fp


def horn_assertions(system: ChcSystem) -> list[z3.BoolRef]:
    """The clauses as universally closed formulas; with `Err` false, satisfiable iff safe."""
    out = []
    for c in system.clauses:
        head = z3.BoolVal(False) if c.edge.dst == ERROR else c.head
        implication = z3.Implies(c.body, head)
        out.append(z3.ForAll(list(c.variables), implication) if c.variables else implication)
    return out
