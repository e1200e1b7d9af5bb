"""An independent check of a TRUE certificate: a second solver (cvc5) over a separately written
encoding of the control-flow graph.

Nothing here comes from the main encoding (`encode`, `smt`): the paths are encoded the classical
way, with a reachability literal per block, fresh values at joins and one definition per
assignment, and the IR's operators are translated again from their definition (`ir`,
`semantics`). From each cutpoint (the entry, every loop head with its invariant assumed), one
query asks whether some path reaches a failing assertion or a loop head where that head's
invariant is false. At loop heads every integer variable is in its type's range (SV-COMP's
executions have no signed overflow; unsigned values wrap). All queries unsat: "confirmed".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import cvc5
from cvc5 import Kind
from quokka.verifier import ir
from quokka.verifier.cfg import BasicBlock, Branch, Cfg, Jump, Simple, build_cfg
from quokka.verifier.engines.base import Budget

CONFIRMED, REFUTED, INCONCLUSIVE = "confirmed", "refuted", "inconclusive"
Term = Any  # cvc5.Term (cvc5 has no type information)


@dataclass(frozen=True)
class DoubleCheck:
    status: str  # "confirmed" | "refuted" | "inconclusive"
    reason: str


def double_check(program: ir.Program, invariants: Mapping[str, ir.Expr], budget: Budget) -> DoubleCheck:
    """Whether cvc5 confirms that `invariants` (loop id -> IR expression) prove `program` safe
    (never for a program with floating point: only a complete unrolling proves one, and it has no
    invariants for cvc5)."""
    refused = ir.refusal(program)
    if refused is not None:
        return DoubleCheck(REFUTED, refused)
    cfg = build_cfg(program)
    starts = [("entry", cfg.entry), *((loop.id, loop.head) for loop in cfg.loops.values())]
    for name, block in starts:
        if budget.expired:
            return DoubleCheck(INCONCLUSIVE, "out of time")
        answer = _Query(cfg, invariants, budget).from_cutpoint(name, block)
        if answer is not None:
            return answer
    return DoubleCheck(CONFIRMED, f"cvc5 {cvc5.__version__}: {len(starts)} cutpoints, every obligation holds")


def _integer_types(types: Mapping[str, ir.Type]) -> dict[str, ir.IntType | ir.ArrayType]:
    """The variables' types (`double_check` refuses programs with floats before it gets here)."""
    out: dict[str, ir.IntType | ir.ArrayType] = {}
    for name, ty in types.items():
        if not isinstance(ty, (ir.IntType, ir.ArrayType)):
            raise TypeError(f"{name} has type {ty}: only integers and arrays of them are encoded")
        out[name] = ty
    return out


class _Query:
    """The obligations of the paths from one cutpoint, as one cvc5 query."""

    def __init__(self, cfg: Cfg, invariants: Mapping[str, ir.Expr], budget: Budget) -> None:
        self.cfg = cfg
        self.invariants = invariants
        self.tm = cvc5.TermManager()
        self.solver = cvc5.Solver(self.tm)
        self.solver.setLogic("ALL")
        self.solver.setOption("arrays-exp", "true")  # constant arrays (zero-initialised locals)
        self.solver.setOption("tlimit-per", str(budget.z3_timeout_ms()))
        self.ops = _Ops(self.tm)
        self.types = _integer_types(cfg.program.var_types)
        self.fresh = 0
        self.bad: list[Term] = []

    def from_cutpoint(self, name: str, block: int) -> DoubleCheck | None:
        env = self._start_env(name)
        if name != "entry":
            self.solver.assertFormula(self._holds(name, env))
        self._paths(block, env)
        if not self.bad:
            return None
        self.solver.assertFormula(self.ops.any(self.bad))
        result = self.solver.checkSat()
        if result.isUnsat():
            return None
        where = f"from {'the entry' if name == 'entry' else 'loop ' + name}"
        if result.isSat():
            return DoubleCheck(REFUTED, f"cvc5 finds an obligation {where} that fails")
        return DoubleCheck(INCONCLUSIVE, f"cvc5 gives up {where}: {result.getUnknownExplanation()}")

    # --- states

    def _var(self, name: str, ty: ir.IntType | ir.ArrayType) -> Term:
        self.fresh += 1
        sort = self.ops.array_sort if isinstance(ty, ir.ArrayType) else self.tm.getIntegerSort()
        return self.tm.mkConst(sort, f"{name}@{self.fresh}")

    def _start_env(self, name: str) -> dict[str, Term]:
        env: dict[str, Term] = {}
        for v, ty in self.types.items():
            if name == "entry":
                env[v] = self.ops.zero_array if isinstance(ty, ir.ArrayType) else self.ops.num(0)
            else:
                env[v] = self._var(v, ty)
                if isinstance(ty, ir.IntType):
                    self.solver.assertFormula(self.ops.in_range(env[v], ty))
        return env

    def _holds(self, loop: str, env: Mapping[str, Term]) -> Term:
        inv = self.invariants.get(loop)
        return self.ops.true if inv is None else _Exprs(self.ops, env).truth(inv)

    # --- paths: a reachability literal per block, joins through fresh values

    def _paths(self, start: int, env: dict[str, Term]) -> None:
        arrivals: dict[int, list[tuple[Term, dict[str, Term]]]] = {start: [(self.ops.true, env)]}
        order = self.cfg.order
        for b in order[order.index(start):]:
            incoming = arrivals.pop(b, [])
            if incoming:
                reach, at = self._join(incoming)
                self._block(self.cfg.blocks[b], reach, at, arrivals)

    def _join(self, incoming: list[tuple[Term, dict[str, Term]]]) -> tuple[Term, dict[str, Term]]:
        if len(incoming) == 1:
            return incoming[0]
        reach = self.ops.any([r for r, _ in incoming])
        env: dict[str, Term] = {}
        for v, ty in self.types.items():
            values = [e[v] for _, e in incoming]
            if all(x == values[0] for x in values[1:]):
                env[v] = values[0]
                continue
            env[v] = self._var(v, ty)
            for r, e in incoming:
                self.solver.assertFormula(self.tm.mkTerm(Kind.IMPLIES, r, self.ops.eq(env[v], e[v])))
        return reach, env

    def _block(self, block: BasicBlock, reach: Term, env: dict[str, Term],
               arrivals: dict[int, list[tuple[Term, dict[str, Term]]]]) -> None:
        for s in block.stmts:
            reach = self._simple(s, reach, env)
        end = block.end
        targets: list[tuple[int, Term]] = []
        if isinstance(end, Jump):
            targets = [(end.target, reach)]
        elif isinstance(end, Branch):
            cond = _Exprs(self.ops, env).truth(end.cond)
            targets = [(end.then, self.ops.all([reach, cond])),
                       (end.orelse, self.ops.all([reach, cond.notTerm()]))]
        for target, taken in targets:
            head = self.cfg.blocks[target].head
            if head is None:
                arrivals.setdefault(target, []).append((taken, dict(env)))
            else:
                self.bad.append(self.ops.all([taken, self._holds(head, env).notTerm()]))

    def _simple(self, s: Simple, reach: Term, env: dict[str, Term]) -> Term:
        if isinstance(s, ir.Assign):
            value = _Exprs(self.ops, env).value(s.value)
            env[s.target] = self._var(s.target, self.types[s.target])
            self.solver.assertFormula(self.ops.eq(env[s.target], value))
            return reach
        if isinstance(s, ir.Havoc):
            ty = self.types[s.target]
            env[s.target] = self._var(s.target, ty)
            if isinstance(ty, ir.ArrayType):
                return reach  # any elements: more executions than C's, which a proof may cover
            return self.ops.all([reach, self.ops.in_range(env[s.target], ty)])
        cond = _Exprs(self.ops, env).truth(s.cond)
        if isinstance(s, ir.Assert):
            self.bad.append(self.ops.all([reach, cond.notTerm()]))
        assert isinstance(s, (ir.Assert, ir.Assume))
        return self.ops.all([reach, cond])


class _Ops:
    """cvc5 terms for the arithmetic the IR is defined with."""

    def __init__(self, tm: cvc5.TermManager) -> None:
        self.tm = tm
        ints = tm.getIntegerSort()
        self.array_sort = tm.mkArraySort(ints, ints)
        self.zero_array = tm.mkConstArray(self.array_sort, self.num(0))
        self.true = tm.mkTrue()

    def num(self, value: int) -> Term:
        return self.tm.mkInteger(str(value))

    def op(self, kind: Kind, *args: Term) -> Term:
        return self.tm.mkTerm(kind, *args)

    def eq(self, a: Term, b: Term) -> Term:
        return self.op(Kind.EQUAL, a, b)

    def all(self, parts: list[Term]) -> Term:
        return parts[0] if len(parts) == 1 else self.op(Kind.AND, *parts)

    def any(self, parts: list[Term]) -> Term:
        return parts[0] if len(parts) == 1 else self.op(Kind.OR, *parts)

    def ite(self, c: Term, a: Term, b: Term) -> Term:
        return self.op(Kind.ITE, c, a, b)

    def as_int(self, c: Term) -> Term:
        return self.ite(c, self.num(1), self.num(0))

    def in_range(self, t: Term, ty: ir.IntType) -> Term:
        return self.all([self.op(Kind.GEQ, t, self.num(ty.min)), self.op(Kind.LEQ, t, self.num(ty.max))])

    def wrap(self, t: Term, ty: ir.IntType) -> Term:
        """The conversion of the integer `t` to `ty`: modulo 2**bits, into the type's range."""
        if ty.is_bool:
            return self.as_int(self.op(Kind.DISTINCT, t, self.num(0)))
        shifted = self.op(Kind.SUB, t, self.num(ty.min))
        reduced = self.op(Kind.INTS_MODULUS, shifted, self.num(1 << ty.bits))
        return self.op(Kind.ADD, reduced, self.num(ty.min))

    def tdiv(self, a: Term, b: Term) -> Term:
        """C's truncating division (SMT-LIB's `div` is Euclidean: the same for a >= 0)."""
        negated = self.op(Kind.NEG, self.op(Kind.INTS_DIVISION, self.op(Kind.NEG, a), b))
        return self.ite(self.op(Kind.GEQ, a, self.num(0)), self.op(Kind.INTS_DIVISION, a, b), negated)

    def bits(self, op_kind: Kind, a: Term, b: Term, ty: ir.IntType) -> Term:
        """A bit-level operation on the two's complement of `a` and `b` in `ty`'s width."""
        to_bv = self.tm.mkOp(Kind.INT_TO_BITVECTOR, ty.bits)
        bv = self.op(op_kind, self.tm.mkTerm(to_bv, a), self.tm.mkTerm(to_bv, b))
        return self.wrap(self.op(Kind.BITVECTOR_UBV_TO_INT, bv), ty)


_COMPARE = {"<": Kind.LT, "<=": Kind.LEQ, ">": Kind.GT, ">=": Kind.GEQ, "==": Kind.EQUAL, "!=": Kind.DISTINCT}
_BITS = {"&": Kind.BITVECTOR_AND, "|": Kind.BITVECTOR_OR, "^": Kind.BITVECTOR_XOR}


class _Exprs:
    """IR expressions over an environment of cvc5 terms."""

    def __init__(self, ops: _Ops, env: Mapping[str, Term]) -> None:
        self.ops = ops
        self.env = env

    def truth(self, e: ir.Expr) -> Term:
        """`e != 0`."""
        ops = self.ops
        if isinstance(e, ir.Binary) and e.op in _COMPARE:
            return ops.op(_COMPARE[e.op], self.value(e.left), self.value(e.right))
        if isinstance(e, ir.Binary) and e.op in ("&&", "||"):
            parts = [self.truth(e.left), self.truth(e.right)]
            return ops.all(parts) if e.op == "&&" else ops.any(parts)
        if isinstance(e, ir.Unary) and e.op == "!":
            return self.truth(e.operand).notTerm()
        if isinstance(e, ir.Forall):
            return self._forall(e)
        return ops.op(Kind.DISTINCT, self.value(e), ops.num(0))

    def _forall(self, e: ir.Forall) -> Term:
        ops, tm = self.ops, self.ops.tm
        k = tm.mkVar(tm.getIntegerSort(), e.var.name)
        body = _Exprs(ops, {**self.env, e.var.name: k}).truth(e.body)
        in_range = ops.all([ops.op(Kind.LEQ, self.value(e.lo), k), ops.op(Kind.LT, k, self.value(e.hi))])
        return ops.op(Kind.FORALL, ops.op(Kind.VARIABLE_LIST, k), ops.op(Kind.IMPLIES, in_range, body))

    def value(self, e: ir.Expr) -> Term:
        ops = self.ops
        if isinstance(e, ir.Const):
            return ops.num(e.value)
        if isinstance(e, ir.Var):
            return self.env[e.name]
        if isinstance(e, ir.Binary) and (e.op in _COMPARE or e.op in ("&&", "||")):
            return ops.as_int(self.truth(e))
        if isinstance(e, ir.Forall):
            return ops.as_int(self.truth(e))
        if isinstance(e, ir.Unary):
            return self._unary(e)
        if isinstance(e, ir.Binary):
            return self._binary(e)
        if isinstance(e, ir.Cast):
            return self._cast(e)
        if isinstance(e, ir.Ite):
            return ops.ite(self.truth(e.cond), self.value(e.then), self.value(e.orelse))
        if isinstance(e, ir.Select):
            return ops.op(Kind.SELECT, self.value(e.array), self.value(e.index))
        assert isinstance(e, ir.Store)
        return ops.op(Kind.STORE, self.value(e.array), self.value(e.index), self.value(e.value))

    def _cast(self, e: ir.Cast) -> Term:
        """A conversion; the identity where every value of the operand's type is one of the target
        (an array element, unconstrained in the solver, is still a value of its type)."""
        src, value = e.operand.type, self.value(e.operand)
        if isinstance(src, ir.IntType) and e.type.contains(src) and not e.type.is_bool:
            return value
        return self.ops.wrap(value, e.type)

    def _unary(self, e: ir.Unary) -> Term:
        ops, a = self.ops, self.value(e.operand)
        if e.op == "!":
            return ops.as_int(self.truth(e.operand).notTerm())
        r = ops.op(Kind.NEG, a) if e.op == "-" else ops.op(Kind.SUB, ops.op(Kind.NEG, a), ops.num(1))
        return r if e.type.signed else ops.wrap(r, e.type)

    def _binary(self, e: ir.Binary) -> Term:
        ops, ty = self.ops, e.type
        a, b = self.value(e.left), self.value(e.right)
        if e.op in _BITS:
            return ops.bits(_BITS[e.op], a, b, ty)
        if e.op in ("<<", ">>"):
            return self._shift(e, a, b)
        arith = {"+": Kind.ADD, "-": Kind.SUB, "*": Kind.MULT}
        if e.op in arith:
            r = ops.op(arith[e.op], a, b)
        elif e.op == "/":
            r = ops.tdiv(a, b)
        else:
            r = ops.op(Kind.SUB, a, ops.op(Kind.MULT, b, ops.tdiv(a, b)))
        return r if ty.signed else ops.wrap(r, ty)

    def _shift(self, e: ir.Binary, a: Term, b: Term) -> Term:
        ops, ty = self.ops, e.type
        if isinstance(e.right, ir.Const) and 0 <= e.right.value < ty.bits:
            factor = ops.num(1 << e.right.value)
            if e.op == "<<":
                r = ops.op(Kind.MULT, a, factor)
                return r if ty.signed else ops.wrap(r, ty)
            return ops.op(Kind.INTS_DIVISION, a, factor)  # floor: an arithmetic shift
        right = Kind.BITVECTOR_ASHR if ty.signed else Kind.BITVECTOR_LSHR
        return ops.bits(Kind.BITVECTOR_SHL if e.op == "<<" else right, a, b, ty)
