"""Invariants written in C: `parse_invariant` (expression text -> IR) and ACSL loop annotations.

One ACSL form joins C's: a bounded quantifier over array cells, `\\forall integer k; lo <= k < hi
==> body` (also `lo < k` and `k <= hi`; `integer` or a C integer type), as `ir.Forall` prints it.

The expression parser is a small precedence-climbing parser (three Python frames per nesting
level, so 100-deep parenthesised invariants as UAutomizer prints them are fine) that builds
pycparser AST nodes; their typing goes through the same `ExprLowerer` as `lower`.
"""

from __future__ import annotations

import re
from typing import Any

from pycparser import c_ast
from pycparser.c_parser import Coord as PCoord
from quokka.verifier.ir.cexpr import CTypes

from ..errors import Coord, InputError, UnsupportedFeature
from ..ir import BOUND, LLONG, Binary, Cast, Const, Expr, Forall, IntType, Program, Stmt, Var
from .coords import CoordMap
from .ctype import STDINT_TYPES, canonical_int_name
from .expr import ExprLowerer
from .preprocess import Preprocessed
from .state import ConstBinding, LowerState, VarBinding

MAX_INVARIANT_CHARS = 100_000
INVARIANT_FILE = "<invariant>"

_TOKEN = re.compile(
    r"""(?P<ws>\s+)
    | (?P<num>\d[\w.]*)
    | (?P<id>[A-Za-z_]\w*)
    | (?P<chr>'(?:\\.|[^'\\\n])*')
    | (?P<str>"(?:\\.|[^"\\\n])*")
    | (?P<op>==>|<==>|<<=|>>=|\+\+|--|<<|>>|<=|>=|==|!=|&&|\|\||[-+*/%&|^]=|->|[-+*/%&|^!~<>=?:,()\[\].{};])
    """,
    re.VERBOSE,
)
_PREC = {
    "||": 1,
    "&&": 2,
    "|": 3,
    "^": 4,
    "&": 5,
    "==": 6,
    "!=": 6,
    "<": 7,
    ">": 7,
    "<=": 7,
    ">=": 7,
    "<<": 8,
    ">>": 8,
    "+": 9,
    "-": 9,
    "*": 10,
    "/": 10,
    "%": 10,
}
_ASSIGN = {"=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>="}
_TYPE_WORDS = {"signed", "unsigned", "char", "short", "int", "long", "_Bool", "const", "volatile"}
_TYPEDEFS = {**STDINT_TYPES, "bool": "_Bool"}


class _Parser:
    def __init__(self, text: str, scope: set[str], data_model: str) -> None:
        self.toks: list[tuple[str, str, int]] = []
        pos = 0
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if m is None:
                raise InputError(Coord(INVARIANT_FILE, 1, pos + 1), f"unexpected character {text[pos]!r}")
            if m.lastgroup != "ws":
                self.toks.append((m.lastgroup or "", m.group(0), pos + 1))
            pos = m.end()
        self.pos = 0
        self.scope = scope
        self.size_t = "unsigned long" if data_model == "LP64" else "unsigned int"

    def peek(self, k: int = 0) -> tuple[str, str, int]:
        i = self.pos + k
        return self.toks[i] if i < len(self.toks) else ("eof", "", self.toks[-1][2] + 1 if self.toks else 1)

    def take(self) -> tuple[str, str, int]:
        tok = self.peek()
        self.pos += 1
        return tok

    def error(self, message: str, col: int | None = None) -> InputError:
        return InputError(Coord(INVARIANT_FILE, 1, col or self.peek()[2]), message)

    def expect(self, text: str) -> None:
        kind, value, col = self.take()
        if value != text:
            found = "the end" if kind == "eof" else repr(value)
            raise self.error(f"expected {text!r}, found {found} (unbalanced parentheses?)", col)

    @staticmethod
    def coord(col: int) -> PCoord:
        return PCoord(INVARIANT_FILE, 1, col)

    def parse(self) -> Any:
        if not self.toks:
            raise self.error("empty invariant", 1)
        node = self.expression()
        kind, value, col = self.peek()
        if kind != "eof":
            raise self.error(f"unexpected {value!r} (unbalanced parentheses?)", col)
        return node

    def expression(self) -> Any:
        """conditional-expression [, ...]; assignments are rejected."""
        node = self.binary(1)
        _, value, col = self.peek()
        if value == "?":
            self.take()
            then = self.expression()
            self.expect(":")
            node = c_ast.TernaryOp(node, then, self.expression(), self.coord(col))
        elif value in _ASSIGN:
            raise self.error(f"assignment ({value}) is not allowed in an invariant", col)
        if self.peek()[1] == ",":
            items = [node]
            while self.peek()[1] == ",":
                self.take()
                items.append(self.binary(1))
            node = c_ast.ExprList(items, self.coord(col))
        return node

    def binary(self, min_prec: int) -> Any:
        left = self.unary()
        while True:
            kind, op, col = self.peek()
            if op in ("==>", "<==>"):
                raise self.error(f"{op} is not C: write an implication a ==> b as !(a) || (b)", col)
            prec = _PREC.get(op) if kind == "op" else None
            if prec is None or prec < min_prec:
                return left
            self.take()
            left = c_ast.BinaryOp(op, left, self.binary(prec + 1), self.coord(col))

    def unary(self) -> Any:
        kind, value, col = self.take()
        if value in ("-", "+", "!", "~"):
            return c_ast.UnaryOp(value, self.unary(), self.coord(col))
        if value in ("++", "--"):
            raise self.error(f"{value} is not allowed in an invariant", col)
        if value == "(" and self._type_ahead():
            names = self._type_names()
            self.expect(")")
            return c_ast.Cast(self._typename(names, col), self.unary(), self.coord(col))
        if value == "(":
            node = self.expression()
            self.expect(")")
        elif kind == "id" and value == "sizeof":
            return self.sizeof(col)
        elif kind == "id":
            node = c_ast.ID(value, self.coord(col))
        elif kind == "num" and re.search(r"^[0-9]*\.|^[0-9]+[eE]|^0[xX].*[pP]", value):
            raise self.error(f"floating-point constant {value} is not allowed (integers only)", col)
        elif kind == "num":
            node = c_ast.Constant("int", value, self.coord(col))

        elif kind == "chr":
            node = c_ast.Constant("char", value, self.coord(col))
        elif kind == "str":
            raise self.error("a string literal is not allowed in an invariant", col)
        else:
            found = "the end of the invariant" if kind == "eof" else repr(value)
            raise self.error(f"expected an expression, found {found}", col)
        return self.postfix(node)

    def sizeof(self, col: int) -> Any:
        if self.peek()[1] == "(" and self._type_ahead(1):
            self.take()
            names = self._type_names()
            self.expect(")")
            return c_ast.UnaryOp("sizeof", self._typename(names, col), self.coord(col))
        return c_ast.UnaryOp("sizeof", self.unary(), self.coord(col))

    def postfix(self, node: Any) -> Any:
        while True:
            _, value, col = self.peek()
            if value == "[":
                self.take()
                index = self.expression()
                self.expect("]")
                node = c_ast.ArrayRef(node, index, self.coord(col))
            elif value == "(":
                raise self.error("a function call is not allowed in an invariant", col)
            elif value in ("++", "--"):
                raise self.error(f"{value} is not allowed in an invariant", col)
            elif value in (".", "->"):
                raise self.error("struct access is not supported in an invariant", col)
            else:
                return node

    def _type_ahead(self, k: int = 0) -> bool:
        kind, value, _ = self.peek(k)
        is_type = value in _TYPE_WORDS or value in _TYPEDEFS or value == "size_t"
        return kind == "id" and value not in self.scope and is_type

    def _type_names(self) -> list[str]:
        names: list[str] = []
        while self._type_ahead():
            value = self.take()[1]
            if value in ("const", "volatile"):
                continue
            alias = self.size_t if value == "size_t" else _TYPEDEFS.get(value)
            names += alias.split() if alias else [value]
        return names

    def _typename(self, names: list[str], col: int) -> c_ast.Typename:
        if canonical_int_name(names) in (None, "void"):
            raise self.error(f"not an integer type: {' '.join(names)}", col)
        decl = c_ast.TypeDecl(None, [], None, c_ast.IdentifierType(names), self.coord(col))
        return c_ast.Typename(None, [], None, decl, self.coord(col))


def parse_invariant(text: str, program: Program, loop_id: str) -> Expr:
    """`text`, a C expression over the C names in scope at loop `loop_id`, as an IR expression.

    Typed exactly as `lower` types C (promotions, usual arithmetic conversions). Raises
    InputError for side effects, calls, unknown names, bad syntax or non-integer values.
    """
    try:
        info = program.loop(loop_id)
    except KeyError:
        raise InputError(None, f"no loop {loop_id!r} in {program.file}") from None
    if len(text) > MAX_INVARIANT_CHARS:
        raise InputError(Coord(INVARIANT_FILE, 1), f"invariant longer than {MAX_INVARIANT_CHARS} characters")
    names = dict(info.scope)
    st = LowerState(CTypes(program.data_model), _invariant_coords())
    types = program.var_types
    for c_name, ir_name in info.scope:
        if ir_name in types:
            st.scopes.define(c_name, VarBinding(ir_name, types[ir_name]))
    for word, value in (("true", 1), ("false", 0)):
        if word not in names:
            st.scopes.define(word, ConstBinding(value))
    try:
        quantified = _FORALL.match(text)
        if quantified is not None:
            return _lower_forall(st, set(names), program.data_model, quantified)
        node = _Parser(text, set(names), program.data_model).parse()
        return _lower_invariant(st, node)
    except RecursionError:
        raise InputError(Coord(INVARIANT_FILE, 1), "invariant nested too deeply") from None
    except UnsupportedFeature as exc:
        raise InputError(exc.coord, exc.message) from None


def _invariant_coords() -> CoordMap:
    return CoordMap(Preprocessed("", INVARIANT_FILE, "", "\0no file"))


def _lower_invariant(st: LowerState, node: Any) -> Expr:
    lw = ExprLowerer(st)
    lw.effects_error = lambda coord, what: InputError(coord, f"{what} is not allowed in an invariant")
    out: list[Stmt] = []
    expr = lw.value(node, out)
    if out or not isinstance(expr.type, IntType):
        raise InputError(Coord(INVARIANT_FILE, 1), "not a side-effect-free integer expression")
    return expr


_FORALL = re.compile(r"\s*\\forall\s+(\w+(?:\s+\w+)*?)\s+([A-Za-z_]\w*)\s*;(.*)", re.S)


def _lower_forall(st: LowerState, scope: set[str], data_model: str, m: re.Match[str]) -> Expr:
    """`\\forall T k; lo <= k < hi ==> body` as a `Forall` over `k` of type T (`integer`: long long)."""
    words, name, rest = m.group(1).split(), m.group(2), m.group(3)
    ty = LLONG if words == ["integer"] else _bound_type(words, data_model)  # `integer`: C's bounds fit
    condition, body = _split_at(rest, "==>")
    lo_text, lo_op, hi_op, hi_text = _range(condition, name)
    k = Var(BOUND + name, ty)
    lo = _bound(st, scope, data_model, lo_text, ty, 1 if lo_op == "<" else 0)
    hi = _bound(st, scope, data_model, hi_text, ty, 1 if hi_op == "<=" else 0)
    st.scopes.push()
    st.scopes.define(name, VarBinding(k.name, ty))
    try:
        prop = _lower_invariant(st, _Parser(body, scope | {name}, data_model).parse())
    finally:
        st.scopes.pop()
    return Forall(k, lo, hi, prop)


def _bound_type(words: list[str], data_model: str) -> IntType:
    name = canonical_int_name(words)
    if name is None or name in ("void", "_Bool"):
        raise _error(f"a quantified variable needs an integer type, not {' '.join(words)}")
    return CTypes(data_model).named(name)


def _error(message: str) -> InputError:
    return InputError(Coord(INVARIANT_FILE, 1), message)


def _tokens(text: str) -> list[tuple[str, int, int, int]]:
    """(token, start, end, parenthesis depth) for each token of `text`."""
    out, depth = [], 0
    for m in _TOKEN.finditer(text):
        tok = m.group(0)
        depth -= tok in (")", "]")
        if m.lastgroup != "ws":
            out.append((tok, m.start(), m.end(), depth))
        depth += tok in ("(", "[")
    return out


def _split_at(text: str, op: str) -> tuple[str, str]:
    """`text` cut at its first `op` outside parentheses."""
    for tok, start, end, depth in _tokens(text):
        if depth == 0 and tok == op:
            return text[:start], text[end:]
    raise _error(f"a quantified invariant needs '{op}' after its range")


def _range(text: str, name: str) -> tuple[str, str, str, str]:
    """`lo OP name OP hi` as (lo, OP, OP, hi), OP being `<` or `<=`."""
    toks = _tokens(text)
    for i in range(1, len(toks) - 1):
        (before, lo_stop, _, _), (tok, _, _, depth), (after, _, hi_start, _) = toks[i - 1 : i + 2]
        if tok == name and depth == 0 and before in ("<", "<=") and after in ("<", "<="):
            return text[:lo_stop], before, after, text[hi_start:]
    raise _error(f"the range of a quantifier is written lo <= {name} < hi")


def _bound(st: LowerState, scope: set[str], data_model: str, text: str, ty: IntType, plus: int) -> Expr:
    e = _lower_invariant(st, _Parser(text, scope, data_model).parse())
    assert isinstance(e.type, IntType)
    if not ty.contains(e.type):
        raise _error(f"a bound of type {e.type} may not fit the quantified {ty}")
    e = e if e.type == ty else Cast(e, ty)
    return Binary("+", e, Const(plus, ty), ty) if plus else e


_ACSL = re.compile(r"/\*@(.*?)\*/|//@([^\n]*)", re.S)
# a loop invariant ends at a semicolon, except the one after a quantifier's variable
_LOOP_INVARIANT = re.compile(r"\bloop\s+invariant\s+((?:\\forall\s[^;]*;)?[^;]*);")


def find_acsl_invariants(text: str) -> list[tuple[int, str]]:
    """`(line, expression)` for each `loop invariant E;` in `/*@ ... */` or `//@` annotations.

    The line is the annotation's last line, so an annotation directly above a loop reports the
    line after which the loop's invariant is inserted (`LoopInfo.insert_after_line`).
    """
    out: list[tuple[int, str]] = []
    for m in _ACSL.finditer(text):
        body = m.group(1) if m.group(1) is not None else m.group(2)
        end_line = text.count("\n", 0, m.end()) + 1
        for inv in _LOOP_INVARIANT.finditer(body):
            expr = " ".join(inv.group(1).split())
            if expr:
                out.append((end_line, expr))
    return out
