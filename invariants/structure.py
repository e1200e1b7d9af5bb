"""What the shape of a loop suggests: which variables it defines, its guard, its head assertions.

The frontend inlines `__VERIFIER_assert(e)` as a scope `{ cond = e; if (!cond) assert(0); return; }`,
so the head of a loop is scanned with the values of such helper variables substituted: the
assertion reads `e` again, over the loop's variables.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from quokka.verifier.ir import (
    COMPARE_OPS,
    INT,
    Assert,
    Assign,
    Assume,
    Binary,
    Block,
    Break,
    Const,
    Expr,
    Havoc,
    If,
    Loop,
    Program,
    Return,
    Scope,
    Stmt,
    Unary,
    Var,
    children,
    free_vars,
    stmt_children,
    stmt_exprs,
    walk,
    walk_stmts,
    with_children,
)


def find_loop(program: Program, loop_id: str) -> Loop | None:
    for s in walk_stmts(program.body):
        if isinstance(s, Loop) and s.id == loop_id:
            return s
    return None


def assigned_in(loop: Loop) -> list[str]:
    """Variables the loop writes, in order of their first write."""
    out: dict[str, None] = {}
    for s in walk_stmts(loop.body + loop.step):
        if isinstance(s, (Assign, Havoc)):
            out.setdefault(s.target, None)
    return list(out)


def preference(names: list[str], loop: Loop | None) -> list[str]:
    """`names` ordered most dependent first: the loop's later writes first, then the variables
    it writes earlier (counters), then the ones it never writes (parameters)."""
    written = assigned_in(loop) if loop is not None else []
    first = [v for v in reversed(written) if v in names]
    return first + [v for v in names if v not in first]


def substitute(e: Expr, values: Mapping[str, Expr]) -> Expr:
    """`e` with each variable in `values` replaced by its expression."""
    if isinstance(e, Var):
        return values.get(e.name, e)
    return with_children(e, [substitute(c, values) for c in children(e)])


@dataclass
class LoopHead:
    """Conditions found at the head of a loop, before it writes any of `protected`."""

    protected: frozenset[str]
    values: dict[str, Expr] = field(default_factory=dict)
    asserted: list[Expr] = field(default_factory=list)
    exits: list[Expr] = field(default_factory=list)

    def scan(self, block: Block) -> bool:
        """Scan `block`; False once the loop may have changed a protected variable."""
        for s in block:
            if isinstance(s, Return):
                return True  # leaves an inlined function: its caller goes on
            if not self._stmt(s):
                return False
        return True

    def _stmt(self, s: Stmt) -> bool:
        if isinstance(s, (Assign, Havoc)):
            return self._write(s)
        if isinstance(s, Assert):
            self.asserted.append(substitute(s.cond, self.values))
        elif isinstance(s, Scope):
            return self.scan(s.body)
        elif isinstance(s, If):
            return self._if(s)
        elif isinstance(s, Loop):
            return False
        return True

    def _write(self, s: Assign | Havoc) -> bool:
        if s.target in self.protected:
            return False
        self.values.pop(s.target, None)
        if isinstance(s, Assign):
            self.values[s.target] = substitute(s.value, self.values)
        return True

    def _if(self, s: If) -> bool:
        cond = substitute(s.cond, self.values)
        if _fails(s.then) and not s.orelse:
            self.asserted.append(negate(cond))
        elif _is_break(s.then) and not s.orelse:
            self.exits.append(cond)
        elif _is_break(s.orelse) and not s.then:
            self.exits.append(negate(cond))
        else:
            return self._conditional(s, cond)
        return True

    def _conditional(self, s: If, cond: Expr) -> bool:
        """`if (c) assert(e);` asserts `!c || e`; False if a branch may write a protected variable."""
        branches = s.then + s.orelse
        written = {t.target for t in walk_stmts(branches) if isinstance(t, (Assign, Havoc))}
        if written & self.protected or any(isinstance(t, Loop) for t in walk_stmts(branches)):
            return False
        for branch, guard in ((s.then, cond), (s.orelse, negate(cond))):
            inner = LoopHead(self.protected, dict(self.values))
            inner.scan(branch)
            self.asserted += [Binary("||", negate(guard), e, INT) for e in inner.asserted]
        for v in written:
            self.values.pop(v, None)
        return True


_FLIP = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!=", "!=": "=="}


def negate(e: Expr) -> Expr:
    """`!e`, without double negations and with comparisons flipped."""
    if isinstance(e, Unary) and e.op == "!":
        inner = e.operand
        return inner if (isinstance(inner, Binary) and inner.op in _FLIP) or _is_truth(inner) else e
    if isinstance(e, Binary) and e.op in _FLIP:
        return Binary(_FLIP[e.op], e.left, e.right, e.type)
    return Unary("!", e, INT)


def _is_truth(e: Expr) -> bool:
    return (isinstance(e, Binary) and e.op in ("&&", "||")) or (isinstance(e, Unary) and e.op == "!")


def _fails(block: Block) -> bool:
    return bool(block) and isinstance(block[0], Assert) and block[0].cond == Const(0, INT)


def _is_break(block: Block) -> bool:
    return len(block) == 1 and isinstance(block[0], Break)


def loop_head(loop: Loop, loop_vars: frozenset[str]) -> LoopHead:
    """Assertions and exit tests at the head of `loop`, over `loop_vars` only."""
    head = LoopHead(loop_vars)
    head.scan(loop.body)
    head.asserted = [e for e in head.asserted if free_vars(e) <= loop_vars]
    head.exits = [e for e in head.exits if free_vars(e) <= loop_vars]
    return head


def path_facts(program: Program, loop_id: str, loop_vars: frozenset[str]) -> list[Expr]:
    """Conditions that hold whenever the loop is entered, over `loop_vars` it does not write: the
    assumptions and assertions on the way to it, the branches taken, and the tests whose other
    branch ends the run (`if (!(n <= N)) return 0;` in main, `assume_abort_if_not(c)`)."""
    loop = find_loop(program, loop_id)
    helpers = frozenset(d.name for d in program.variables if d.kind in ("param", "temp"))
    found = _PathFacts(loop_id, helpers).find(program.body, 0)
    if loop is None or found is None:
        return []
    kept = loop_vars - frozenset(assigned_in(loop))
    return [e for e in found if free_vars(e) <= kept]


@dataclass
class _PathFacts:
    """What is known on the way to loop `target`; `values` are the expressions of the `helpers`
    (parameters of inlined functions, temporaries), read through in what is known."""

    target: str
    helpers: frozenset[str]
    values: dict[str, Expr] = field(default_factory=dict)
    known: list[Expr] = field(default_factory=list)

    def find(self, block: Block, depth: int) -> list[Expr] | None:
        """The facts at the loop's entry if `block` contains it (`depth`: of inlined functions)."""
        for s in block:
            found = self._stmt(s, depth)
            if found is not None or isinstance(s, Return):
                return found
        return None

    def _stmt(self, s: Stmt, depth: int) -> list[Expr] | None:
        if isinstance(s, Loop):
            return self._loop(s, depth)
        if isinstance(s, If):
            return self._if(s, depth)
        if isinstance(s, Scope):
            return self.find(s.body, depth + 1)
        if isinstance(s, (Assume, Assert)):
            self.known.append(substitute(s.cond, self.values))
        elif isinstance(s, (Assign, Havoc)):
            self._forget({s.target})
            if isinstance(s, Assign) and s.target in self.helpers:
                self.values[s.target] = substitute(s.value, self.values)
        return None

    def _loop(self, s: Loop, depth: int) -> list[Expr] | None:
        if s.id == self.target:
            return list(self.known)
        self._forget(set(assigned_in(s)))
        return self._branch(s.body, depth, None)

    def _if(self, s: If, depth: int) -> list[Expr] | None:
        cond = substitute(s.cond, self.values)
        for branch, guard in ((s.then, cond), (s.orelse, negate(cond))):
            found = self._branch(branch, depth, guard)
            if found is not None:
                return found
        ends_then, ends_else = _ends(s.then, depth), _ends(s.orelse, depth)
        self._forget({t.target for t in walk_stmts(s.then + s.orelse) if isinstance(t, (Assign, Havoc))})
        if ends_then != ends_else:
            self.known.append(negate(cond) if ends_then else cond)
        return None

    def _branch(self, block: Block, depth: int, guard: Expr | None) -> list[Expr] | None:
        known = [*self.known, *([guard] if guard is not None else [])]
        inner = _PathFacts(self.target, self.helpers, dict(self.values), known)
        return inner.find(block, depth)

    def _forget(self, written: set[str]) -> None:
        self.known = [e for e in self.known if not free_vars(e) & written]
        self.values = {v: e for v, e in self.values.items() if not ({v} | free_vars(e)) & written}


def _ends(block: Block, depth: int) -> bool:
    """Whether running `block` ends the run: `assume(0)` (abort), or a return from main."""
    if not block:
        return False
    last = block[-1]
    aborts = isinstance(last, Assume) and last.cond == Const(0, INT)
    return aborts or (isinstance(last, Return) and depth <= 1)


def inner_assertions(loop: Loop, loop_vars: frozenset[str]) -> list[Expr]:
    """The head assertions of the loops directly inside `loop`, over `loop_vars` that nothing
    before them in the body writes: what holds at the inner head held at the outer one
    (`while (b != 0) { c = a; while (1) { assert(a == y*r + x*p); ... } ... }`)."""
    out: list[Expr] = []
    written: set[str] = set()
    for s in loop.body:
        if isinstance(s, Loop):
            out += loop_head(s, loop_vars - written).asserted
        written |= {t.target for t in walk_stmts((s,)) if isinstance(t, (Assign, Havoc))}
    return out


def enclosing_guards(program: Program, loop_id: str, loop_vars: frozenset[str]) -> list[Expr]:
    """The conditions under which each enclosing loop goes on (its exit tests negated), over
    `loop_vars` the loop does not write: they held when it was entered, and still hold."""
    chain = _enclosing(program.body, loop_id)
    if not chain:
        return []
    kept = loop_vars - frozenset(assigned_in(chain[-1]))
    return [negate(e) for outer in chain[:-1] for e in loop_head(outer, kept).exits]


def _enclosing(block: Block, loop_id: str) -> list[Loop] | None:
    """The loops from the outermost one that contains loop `loop_id` down to that loop."""
    for s in block:
        if isinstance(s, Loop) and s.id == loop_id:
            return [s]
        for sub in stmt_children(s):
            found = _enclosing(sub, loop_id)
            if found is not None:
                return [s, *found] if isinstance(s, Loop) else found
    return None


def after_loop(program: Program, loop_id: str, loop_vars: frozenset[str]) -> list[Expr]:
    """Conditions asserted right after the loop (before a loop variable changes), over
    `loop_vars`: the property the loop's invariant usually has to imply."""
    try:
        rest = _after(program.body, loop_id)
    except RecursionError:
        return []
    if rest is None:
        return []
    tail = LoopHead(loop_vars)
    tail.scan(rest)
    return [e for e in tail.asserted if free_vars(e) <= loop_vars]


def _after(block: Block, loop_id: str) -> Block | None:
    """The statements after the loop `loop_id` in the block that contains it."""
    for k, s in enumerate(block):
        if isinstance(s, Loop) and s.id == loop_id:
            return block[k + 1 :]
        for sub in stmt_children(s):
            found = _after(sub, loop_id)
            if found is not None:
                return found
    return None


def comparisons(e: Expr) -> list[Binary]:
    """The comparison sub-expressions of `e`."""
    return [n for n in walk(e) if isinstance(n, Binary) and n.op in COMPARE_OPS]


def program_constants(program: Program) -> frozenset[int]:
    """The integer constants the program's statements mention."""
    out: set[int] = set()
    for s in walk_stmts(program.body):
        for e in stmt_exprs(s):
            out.update(n.value for n in walk(e) if isinstance(n, Const))
    return frozenset(out)
