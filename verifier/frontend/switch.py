"""`switch` as a sequence of guarded segments, with fallthrough and `break` made explicit.

Segment i (the statements after a group of case labels) runs when `fall` is set (the previous
segment fell through) or a label matches; `default` matches when no case label does. A `break`
that is not the last statement of its segment sets a flag that guards everything after it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pycparser import c_ast
from quokka.verifier.ir import cexpr, semantics

from ..errors import FrontendError, UnsupportedFeature
from ..ir import INT, Assign, Binary, Const, Expr, If, IntType, Stmt, Var
from .state import SwitchContext

if TYPE_CHECKING:
    from .stmt import StmtLowerer


@dataclass
class Segment:
    labels: list[int | None]  # None: default
    nodes: list[Any]
    falls: bool = False
    breaks: bool = False
    block: tuple[Stmt, ...] = ()


def find_node(root: Any, wanted: Callable[[Any], bool], below: Callable[[Any], Iterable[Any]]) -> Any:
    """The first node that is `wanted`: `root` itself, else one of the nodes `below` leads to from it
    (depth first, with a stack: deep nesting is no recursion); None when there is none."""
    stack = [root]
    while stack:
        node = stack.pop()
        if wanted(node):
            return node
        stack.extend(below(node))
    return None


def _outside_switches(node: Any) -> Iterable[Any]:
    return () if isinstance(node, c_ast.Switch) else (child for _, child in node.children())


def _nested_label(node: Any) -> Any:
    """A case/default label inside a nested statement (not inside a nested switch)."""
    return find_node(node, lambda n: isinstance(n, (c_ast.Case, c_ast.Default)), _outside_switches)


def _segments(lw: StmtLowerer, items: list[Any], ty: IntType) -> list[Segment]:
    segments: list[Segment] = []
    labels: list[int | None] = []
    for item in items:
        if not isinstance(item, (c_ast.Case, c_ast.Default)):
            if segments or labels:
                raise FrontendError(lw.st.coord(item), "statement outside any case label")
            nested = _nested_label(item)
            if nested is not None:  # `L: case 1: ...` before the first case would be dropped with it
                raise UnsupportedFeature(lw.st.coord(nested), "case label inside a nested statement")
            continue  # unreachable code before the first label (a goto into it is rejected: `gotos`)
        if isinstance(item, c_ast.Case):
            labels.append(semantics.wrap(lw.const_int(item.expr), ty))
        else:
            labels.append(None)
        stmts = list(item.stmts or [])
        for s in stmts:
            nested = _nested_label(s)
            if nested is not None:
                raise UnsupportedFeature(lw.st.coord(nested), "case label inside a nested statement")
        if stmts:
            segments.append(Segment(labels, stmts))
            labels = []
    if labels:
        segments.append(Segment(labels, []))
    return segments


def _match(lw: StmtLowerer, seg: Segment, ctrl: Expr, all_cases: list[int], ty: IntType) -> Expr:
    ct = lw.st.ct
    conds: list[Expr] = []
    for label in seg.labels:
        if label is None:
            others = [cexpr.binary(ct, "!=", ctrl, Const(v, ty)) for v in all_cases]
            conds.append(_join("&&", others, Const(1, INT)))
        else:
            conds.append(cexpr.binary(ct, "==", ctrl, Const(label, ty)))
    return _join("||", conds, Const(0, INT))


def _join(op: str, items: list[Expr], empty: Expr) -> Expr:
    if not items:
        return empty
    acc = items[0]
    for e in items[1:]:
        acc = cexpr.fold(Binary(op, acc, e, INT))
    return acc


def _lower_segments(lw: StmtLowerer, segments: list[Segment], ctx: SwitchContext) -> None:
    for i, seg in enumerate(segments):
        nodes = seg.nodes
        ends = bool(nodes) and isinstance(nodes[-1], c_ast.Break)
        if ends:
            nodes = nodes[:-1]
        seg.falls = i + 1 < len(segments) and not ends and not (nodes and _jumps(nodes[-1]))
        before = ctx.uses
        seg.block = tuple(lw.stmts(nodes))
        seg.breaks = ctx.uses > before


def _jumps(node: Any) -> bool:
    """The statement never completes normally by falling off its end (break, return, ...)."""
    if isinstance(node, (c_ast.Break, c_ast.Return, c_ast.Continue, c_ast.Goto)):
        return True
    if isinstance(node, c_ast.Compound):
        return bool(node.block_items) and _jumps(node.block_items[-1])
    return False


def _control(lw: StmtLowerer, node: c_ast.Switch, out: list[Stmt]) -> tuple[Expr, IntType]:
    """The promoted controlling value, saved in a temporary (the cases may change its variables)."""
    ctrl = lw.scalar(node.cond, out)
    if not isinstance(ctrl.type, IntType):
        raise FrontendError(lw.st.coord(node), f"switch quantity of type {ctrl.type} is not an integer")
    ty = lw.st.ct.promote(ctrl.type)
    ctrl = cexpr.convert(ctrl, ty)
    if isinstance(ctrl, Const):
        return ctrl, ty
    t = lw.st.temp(ty, "sw")
    out.append(Assign(t.name, ctrl, lw.st.coord(node)))
    return t, ty


def _assemble(
    lw: StmtLowerer, segments: list[Segment], ctrl: Expr, ty: IntType, ctx: SwitchContext, coord: Any
) -> list[Stmt]:
    all_cases = [v for seg in segments for v in seg.labels if v is not None]
    fall = lw.st.temp(INT, "fall") if any(seg.falls for seg in segments) else None
    acc: list[Stmt] = []
    for i in reversed(range(len(segments))):
        seg = segments[i]
        entered_by_fall = fall is not None and i > 0 and segments[i - 1].falls
        cond = _match(lw, seg, ctrl, all_cases, ty)
        then = list(seg.block)
        if fall is not None and entered_by_fall:
            cond = Binary("||", fall, cond, INT)
        if fall is not None and (seg.falls or entered_by_fall):
            then.append(Assign(fall.name, Const(int(seg.falls), INT), coord))
        guarded = If(cond, tuple(then), (), coord)
        if seg.breaks and acc and ctx.flag is not None:
            acc = [guarded, If(cexpr.negate(Var(ctx.flag, INT)), tuple(acc), (), coord)]
        else:
            acc = [guarded, *acc]
    init = [Assign(v, Const(0, INT), coord) for v in (ctx.flag, fall.name if fall else None) if v]
    return [*init, *acc]


def lower_switch(lw: StmtLowerer, node: c_ast.Switch, out: list[Stmt]) -> None:
    st = lw.st
    ctrl, ty = _control(lw, node, out)
    items = list(node.stmt.block_items or []) if isinstance(node.stmt, c_ast.Compound) else [node.stmt]
    ctx = SwitchContext()
    st.breakables.append(ctx)
    st.scopes.push()
    try:
        segments = _segments(lw, items, ty)
        _lower_segments(lw, segments, ctx)
    finally:
        st.scopes.pop()
        st.breakables.pop()
    out.extend(_assemble(lw, segments, ctrl, ty, ctx, st.coord(node)))
