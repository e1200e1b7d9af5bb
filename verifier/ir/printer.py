"""Deterministic C-like text for IR expressions, statements and programs.

Expressions print as valid C with the fewest parentheses C's precedence allows (the tree is
preserved: `a - (b - c)` keeps its parentheses). Style: no spaces around `*`, `/`, `%`, single
spaces around every other binary operator, e.g. `z == 6*n + 6 && y == 3*n*n + 3*n + 1`.
Casts print as `(type)e`, `Ite` as `c ? a : b`, `Select` as `a[i]` (`p->f` when the array is a
heap field whose name is `->f`), `Store` as the
pseudo-call `store(a, i, v)` (the array `a` with element `i` set to `v`), and `Forall` as ACSL
does, `\\forall integer k; 0 <= k < i ==> a[k] == 0` (no C form exists).

Constants re-parse as the same value and type: `int` plainly (`-3`; INT_MIN as
`(-2147483647 - 1)`), other types with a C suffix (`4294967295u`, `5L`, `7uLL`), types
without literals as a cast (`(short)5`); floating constants in the shortest decimal that rounds
back to them (`3.25`, `0.5f`), infinities and NaN as gcc's builtins (`__builtin_inf()`).
Floating operators print as their C counterparts, conversions as casts (`(double)n`, `(int)x`).

`format_expr(e, readable=True)` (and `format_expr_c_names` by default) prints the display form
of `simplify.readable`: `z == 6*n + 6` for the `z == 6LL*n + 6LL` the dynamic proposer builds.

Statements print as pseudo-C, one per line, indented by two spaces per level; the printer
walks statements with an explicit stack, so deep nesting is fine.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from quokka.verifier import ir
from quokka.verifier.ir import simplify

# C precedence levels (higher binds tighter).
_POSTFIX, _UNARY, _TERNARY = 16, 15, 3
_BINARY_PREC = {
    "*": 13, "/": 13, "%": 13,
    "+": 12, "-": 12,
    "<<": 11, ">>": 11,
    "<": 10, "<=": 10, ">": 10, ">=": 10,
    "==": 9, "!=": 9,
    "&": 8, "^": 7, "|": 6, "&&": 5, "||": 4,
}  # fmt: skip
_TIGHT_OPS = frozenset({"*", "/", "%"})
_SUFFIX = {
    "int": "",
    "unsigned int": "u",
    "long": "L",
    "unsigned long": "uL",
    "long long": "LL",
    "unsigned long long": "uLL",
}

Names = Mapping[str, str]


def _prec(e: ir.Expr) -> int:
    if isinstance(e, ir.Forall):
        return 0
    if isinstance(e, (ir.Binary, ir.FloatBinary, ir.FloatCompare)):
        return _BINARY_PREC[e.op]
    if isinstance(e, ir.Ite):
        return _TERNARY
    if isinstance(e, (ir.Unary, ir.Cast, ir.FloatUnary, ir.ToFloat, ir.FloatToInt)):
        return _UNARY
    if isinstance(e, ir.Const):
        return _UNARY if e.value < 0 or _SUFFIX.get(e.type.name) is None else _POSTFIX
    if isinstance(e, ir.FloatConst):
        return _UNARY if format_float(e.value, e.type.name).startswith("-") else _POSTFIX
    return _POSTFIX


def format_const(value: int, ty: ir.IntType) -> str:
    """A C literal (or cast of one) that denotes `value` of type `ty`."""
    suffix = _SUFFIX.get(ty.name)
    if suffix is None:
        return f"({ty.name}){format_const(value, ir.INT)}"  # char, short, _Bool: values of int
    if ty.signed and value == ty.min:
        return f"({value + 1}{suffix} - 1{suffix})"
    return f"{value}{suffix}"


def format_float(value: float, type_name: str) -> str:
    """A C expression of type `type_name` (float or double) whose value is `value`."""
    suffix = "f" if type_name == "float" else ""
    if math.isnan(value):
        return f"__builtin_nan{suffix}(\"\")"
    if math.isinf(value):
        return f"{'-' if value < 0 else ''}__builtin_inf{suffix}()"
    return f"{value!r}{suffix}"  # shortest round trip; a float's value is one of float's too


_Part = str | ir.Expr


def _wrapped(e: ir.Expr, parens: bool) -> list[_Part]:
    return ["(", e, ")"] if parens else [e]


def _starts_with_minus(e: ir.Expr) -> bool:
    """Whether `e` prints with a leading `-` (so `-` before it would read as `--`)."""
    if isinstance(e, (ir.Unary, ir.FloatUnary)):
        return e.op == "-"
    if isinstance(e, ir.FloatConst):
        return format_float(e.value, e.type.name).startswith("-")
    return isinstance(e, ir.Const) and format_const(e.value, e.type).startswith("-")


class _ExprPrinter:
    """Prints with an explicit stack of pending parts (text, or an expression still to print)."""

    def __init__(self, names: Names | None) -> None:
        self.names = names or {}

    def fmt(self, root: ir.Expr) -> str:
        out: list[str] = []
        stack: list[_Part] = [root]
        while stack:
            item = stack.pop()
            if isinstance(item, str):
                out.append(item)
            else:
                stack.extend(reversed(self._parts(item)))
        return "".join(out)

    def _parts(self, e: ir.Expr) -> list[_Part]:
        if isinstance(e, ir.Const):
            return [format_const(e.value, e.type)]
        if isinstance(e, ir.FloatConst):
            return [format_float(e.value, e.type.name)]
        if isinstance(e, ir.Var):
            return [self.names.get(e.name, e.name.removeprefix(ir.BOUND))]
        if isinstance(e, (ir.Binary, ir.FloatBinary, ir.FloatCompare)):
            prec = _BINARY_PREC[e.op]
            op = e.op if e.op in _TIGHT_OPS else f" {e.op} "
            return [*_wrapped(e.left, _prec(e.left) < prec), op, *_wrapped(e.right, _prec(e.right) <= prec)]
        if isinstance(e, (ir.Unary, ir.Cast, ir.FloatUnary, ir.ToFloat, ir.FloatToInt)):
            prefix = e.op if isinstance(e, (ir.Unary, ir.FloatUnary)) else f"({e.type.name})"
            parens = _prec(e.operand) < _UNARY or (prefix == "-" and _starts_with_minus(e.operand))
            return [prefix, *_wrapped(e.operand, parens)]
        if isinstance(e, ir.Ite):
            cond, orelse = (
                _wrapped(e.cond, _prec(e.cond) <= _TERNARY),
                _wrapped(e.orelse, _prec(e.orelse) < _TERNARY),
            )
            return [*cond, " ? ", e.then, " : ", *orelse]
        if isinstance(e, ir.Select):
            field = self.names.get(e.array.name, "") if isinstance(e.array, ir.Var) else ""
            if field.startswith("->"):  # a field array of the heap model (`frontend.memory`)
                return [*_wrapped(e.index, _prec(e.index) < _POSTFIX), field]
            return [*_wrapped(e.array, _prec(e.array) < _POSTFIX), "[", e.index, "]"]
        if isinstance(e, ir.Forall):
            k = e.var.name.removeprefix(ir.BOUND)
            hi = _wrapped(e.hi, _prec(e.hi) <= _BINARY_PREC["<"])
            return [f"\\forall integer {k}; ", e.lo, f" <= {k} < ", *hi, " ==> ", e.body]
        if isinstance(e, ir.Store):
            base, chain = ir.store_chain(e)
            return [
                "store(" * len(chain),
                base,
                *(p for s in chain for p in (", ", s.index, ", ", s.value, ")")),
            ]
        raise TypeError(f"not an IR expression: {type(e).__name__}")


def format_expr(e: ir.Expr, names: Names | None = None, *, readable: bool = False) -> str:
    """`e` as a C expression; `names` renames variables (IR name -> printed name).

    `readable` prints `simplify.readable(e)` instead: the same meaning under the IR's semantics
    (the text parses back to an equivalent expression), arranged for people.
    """
    return _ExprPrinter(names).fmt(simplify.readable(e) if readable else e)


def c_names(program: ir.Program, loop_id: str | None = None) -> dict[str, str]:
    """IR name -> C name, for printing with the names of the source.

    With `loop_id`, the C names visible at that loop's head are used; otherwise each variable's
    `c_name`. A C name shared by several IR variables (shadowing, inlined calls) is kept only
    for the one visible at the loop, or for none without a loop: those print under their IR name.
    """
    if loop_id is not None:
        visible = {name: c for c, name in program.loop(loop_id).scope}
        taken = set(visible.values())
        others = {v.name: v.c_name for v in program.variables if v.name not in visible}
        unique = _unique_c_names(program.variables)
        return visible | {name: c for name, c in others.items() if c not in taken and name in unique}
    return _unique_c_names(program.variables)


def _unique_c_names(decls: tuple[ir.VarDecl, ...]) -> dict[str, str]:
    counts: dict[str, int] = {}
    for d in decls:
        counts[d.c_name] = counts.get(d.c_name, 0) + 1
    return {d.name: d.c_name for d in decls if counts[d.c_name] == 1}


def format_expr_c_names(
    e: ir.Expr, program: ir.Program, loop_id: str | None = None, *, readable: bool = True
) -> str:
    """`e` with the program's C variable names (see `c_names`), readable unless told otherwise."""
    return format_expr(e, c_names(program, loop_id), readable=readable)


# ----------------------------------------------------------------------------- statements

_INDENT = "  "


def conjunct_parts(texts: Sequence[str]) -> tuple[str, ...]:
    """Printed invariants as parts of one conjunction: each in parentheses when there are several,
    so that `n <= a + 1 || n == 0` joined with `x >= 0` cannot read as `n <= a + 1 || (n == 0 && ...)`."""
    return tuple(texts) if len(texts) <= 1 else tuple(f"({t})" for t in texts)


def join_conjuncts(texts: Sequence[str], connective: str = " && ") -> str:
    """Printed invariants as one conjunction (the text every display of a certificate shows)."""
    return connective.join(conjunct_parts(texts))


def format_type_decl(name: str, ty: ir.Type) -> str:
    if isinstance(ty, ir.ArrayType):
        size = "" if ty.size is None else str(ty.size)
        return f"{ty.elem.name} {name}[{size}]"
    return f"{ty.name} {name}"


def _simple_stmt(s: ir.Stmt, p: _ExprPrinter) -> str:
    if isinstance(s, ir.Assign):
        return f"{p.names.get(s.target, s.target)} = {p.fmt(s.value)};"
    if isinstance(s, ir.Havoc):
        return f"havoc {p.names.get(s.target, s.target)};  // {s.origin}"
    if isinstance(s, ir.Assume):
        return f"assume({p.fmt(s.cond)});"
    if isinstance(s, ir.Assert):
        return f"assert({p.fmt(s.cond)});"
    if isinstance(s, ir.Break):
        return "break;"
    if isinstance(s, ir.Continue):
        return "continue;"
    if isinstance(s, ir.Return):
        return "return;"
    if isinstance(s, ir.Goto):
        return f"goto {s.label};"
    if isinstance(s, ir.Label):
        return f"{s.name}:;" + ("" if s.loop is None else f"  // loop {s.loop}")
    raise TypeError(f"not a simple statement: {type(s).__name__}")


# A work item: a statement to print at an indent, or a finished line.
_Item = tuple[ir.Stmt, int] | str


def _compound(s: ir.Stmt, depth: int, p: _ExprPrinter) -> tuple[str, list[_Item]]:
    """The opening line of a compound statement and the items that follow it, in order."""
    pad = _INDENT * depth
    if isinstance(s, ir.If):
        items: list[_Item] = [(t, depth + 1) for t in s.then]
        if s.orelse:
            items += [f"{pad}}} else {{", *((t, depth + 1) for t in s.orelse)]
        return f"if ({p.fmt(s.cond)}) {{", [*items, f"{pad}}}"]
    if isinstance(s, ir.Loop):
        items = [(t, depth + 1) for t in s.body]
        if s.step:
            items += [f"{pad}{_INDENT}// step of {s.id} (continue jumps here)"]
            items += [(t, depth + 1) for t in s.step]
        return f"while (1) {{  // loop {s.id}", [*items, f"{pad}}}"]
    assert isinstance(s, ir.Scope)
    return f"{{  // function {s.function}", [*((t, depth + 1) for t in s.body), f"{pad}}}"]


def _format_lines(block: tuple[ir.Stmt, ...], depth: int, p: _ExprPrinter) -> list[str]:
    lines: list[str] = []
    stack: list[_Item] = [(s, depth) for s in reversed(block)]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            lines.append(item)
            continue
        s, d = item
        if isinstance(s, (ir.If, ir.Loop, ir.Scope)):
            head, rest = _compound(s, d, p)
            lines.append(_INDENT * d + head)
            stack.extend(reversed(rest))
        else:
            lines.append(_INDENT * d + _simple_stmt(s, p))
    return lines


def format_stmt(s: ir.Stmt, indent: int = 0, names: Names | None = None) -> str:
    """`s` as pseudo-C lines (no trailing newline), indented by `indent` levels."""
    return "\n".join(_format_lines((s,), indent, _ExprPrinter(names)))


def format_block(block: tuple[ir.Stmt, ...], indent: int = 0, names: Names | None = None) -> str:
    return "\n".join(_format_lines(block, indent, _ExprPrinter(names)))


def format_program(program: ir.Program) -> str:
    """The whole program: header, declarations, loop table, body (ends with a newline)."""
    lines = [f"// {program.file} ({program.data_model})"]
    for d in program.variables:
        note = d.kind if d.c_name == d.name else f"{d.kind}, C name {d.c_name}"
        lines.append(f"{format_type_decl(d.name, d.type)};  // {note}")
    for info in program.loops:
        scope = ", ".join(f"{c}={name}" for c, name in info.scope)
        parent = f", inside {info.parent}" if info.parent else ""
        lines.append(
            f"// loop {info.id} at {info.coord} in {info.function}{parent}, "
            f"insert after line {info.insert_after_line}; scope: {scope}"
        )
    lines += _format_lines(program.body, 0, _ExprPrinter(None))
    return "\n".join(lines) + "\n"
