"""`goto` and labels: the pass over one function body that lowering its labels needs.

Labels have function scope. A label is the head of a loop when some `goto` to it comes at or after
it in the source (a backward jump). The pass checks every `goto` (errors located at the goto): it
names a label of the function; it does not enter a `while`/`do`/`for` loop from outside (which
would make the control flow irreducible; `cfg.build_cfg` judges the loops of labels, and `entries`
says where to locate its verdict); it enters a `switch` case only from inside that case, since
`switch` lowers to guarded cases (`switch.py`) whose closing `break` is dropped, so a jump into
another case would run the cases after it. A `goto` may jump into the scope of a local variable
past its declaration (C leaves the variable indeterminate): `skips` names those declarations, and
lowering havocs them at the goto.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from pycparser import c_ast

from ..errors import Coord, FrontendError, UnsupportedFeature

# The local variable declarations in scope at a node, innermost first: (declaration, outer) cells.
DeclChain = tuple[c_ast.Decl, "DeclChain"] | None
Locate = Callable[[Any], Coord | None]


@dataclass(frozen=True)
class GotoPlan:
    """What lowering one function body needs to know about its labels and gotos.

    `heads`: the labels some goto jumps back to (loop heads); `last_back`: for each, the id of the
    last goto that jumps back to it (the end of the loop in the source); `skips`: by goto id, the
    declarations the goto jumps past into their scope (source order); `skipped`: all of those;
    `entries`: by goto id, the gotos that enter the loop of a label past it (see `_loop_entries`).
    """

    heads: frozenset[str] = frozenset()
    last_back: Mapping[str, int] = field(default_factory=dict)
    skips: Mapping[int, tuple[c_ast.Decl, ...]] = field(default_factory=dict)
    skipped: frozenset[int] = frozenset()
    entries: Mapping[int, str] = field(default_factory=dict)


@dataclass
class GotoContext:
    """One function instance (main, or one inlined call) while it is lowered.

    `open`: the loop ids of its loop-head labels whose last backward goto is still to come;
    `names`: the IR names of its declarations in `plan.skipped` (by id of the declaration).
    """

    plan: GotoPlan
    open: dict[str, str] = field(default_factory=dict)
    names: dict[int, str] = field(default_factory=dict)


class _Where(NamedTuple):
    """Where a node is: the local declarations in scope, the switch cases (or the statements of a
    switch before its first case) and the loop bodies around it (ids, outermost first)."""

    scope: DeclChain = None
    regions: tuple[int, ...] = ()
    loops: tuple[int, ...] = ()
    switch_body: bool = False


class _Site(NamedTuple):
    pos: int
    node: Any
    where: _Where


def plan_gotos(body: Any, locate: Locate, once: Callable[[c_ast.DoWhile], bool]) -> GotoPlan:
    """The labels and gotos of the function body `body` (checked as the module docstring says).

    `locate` maps a node to its source coordinate; `once(node)` says that the `do ... while`
    `node` runs its body once (`do { ... } while (0)`, not a loop).
    """
    labels: dict[str, _Site] = {}
    gotos: list[_Site] = []
    for index, (node, where) in enumerate(_walk(body, once)):
        if isinstance(node, c_ast.Label):
            if node.name in labels:
                raise FrontendError(locate(node), f"duplicate label '{node.name}'")
            labels[node.name] = _Site(index, node, where)
        elif isinstance(node, c_ast.Goto):
            gotos.append(_Site(index, node, where))
    if not gotos:
        return GotoPlan()
    return _plan(labels, gotos, locate)


def _plan(labels: dict[str, _Site], gotos: list[_Site], locate: Locate) -> GotoPlan:
    last_back: dict[str, int] = {}
    skips: dict[int, tuple[c_ast.Decl, ...]] = {}
    for goto in gotos:
        label = labels.get(goto.node.name)
        if label is None:
            raise FrontendError(locate(goto.node), f"goto to undefined label '{goto.node.name}'")
        _check_entry(goto, label, locate)
        if goto.pos > label.pos:
            last_back[goto.node.name] = id(goto.node)
        skipped = _skipped(label.where.scope, goto.where.scope)
        if skipped:
            skips[id(goto.node)] = skipped
    every = frozenset(id(d) for decls in skips.values() for d in decls)
    return GotoPlan(frozenset(last_back), last_back, skips, every, _loop_entries(labels, gotos))


def _loop_entries(labels: dict[str, _Site], gotos: list[_Site]) -> dict[int, str]:
    """The forward gotos into the loop of a label (from the label to a backward goto to it) past
    the label, by id, with what they enter. The loop then has two entries, or a head other than
    the label (`goto check; body: ...; check: if (c) goto body;`): unless the target cannot reach
    the backward goto, `cfg.build_cfg` rejects the program, and one of these is the culprit."""
    spans: list[tuple[int, int, str]] = []
    for goto in gotos:
        label = labels[goto.node.name]
        if goto.pos > label.pos:
            spans.append((label.pos, goto.pos, label.node.name))
    out: dict[int, str] = {}
    for goto in gotos:
        target = labels[goto.node.name]
        for start, end, head in spans:
            if goto.pos < start < target.pos < end:
                out[id(goto.node)] = f"label {target.node.name}, inside the loop of label {head}"
    return out


def _check_entry(goto: _Site, label: _Site, locate: Locate) -> None:
    name = goto.node.name
    into = label.where
    if into.loops and into.loops[-1] not in goto.where.loops:
        raise UnsupportedFeature(locate(goto.node), "goto into a loop", f"label {name}")
    if into.regions and into.regions[-1] not in goto.where.regions:
        raise UnsupportedFeature(locate(goto.node), "goto into a switch case", f"label {name}")


def _skipped(at_label: DeclChain, at_goto: DeclChain) -> tuple[c_ast.Decl, ...]:
    """The declarations in scope at the label but not at the goto, in source order."""
    shared: set[int] = set()
    cell = at_goto
    while cell is not None:
        shared.add(id(cell))
        cell = cell[1]
    out: list[c_ast.Decl] = []
    cell = at_label
    while cell is not None and id(cell) not in shared:
        out.append(cell[0])
        cell = cell[1]
    return tuple(reversed(out))


# ----------------------------------------------------------------------------- the walk


def _walk(body: Any, once: Callable[[c_ast.DoWhile], bool]) -> Iterator[tuple[Any, _Where]]:
    """Every node of `body` with where it is, in source order (pre-order, no recursion)."""
    stack: list[tuple[Any, _Where]] = [(body, _Where())]
    while stack:
        node, where = stack.pop()
        yield node, where
        stack.extend(reversed(_children(node, where, once)))


def _children(node: Any, where: _Where, once: Callable[[c_ast.DoWhile], bool]) -> list[tuple[Any, _Where]]:
    plain = where._replace(switch_body=False)
    if isinstance(node, c_ast.Compound):
        return _items(list(node.block_items or []), where)
    if isinstance(node, (c_ast.Case, c_ast.Default)):
        inner = plain._replace(regions=(*where.regions, id(node)))
        expr = [(node.expr, inner)] if isinstance(node, c_ast.Case) else []
        return expr + _items(list(node.stmts or []), inner)
    if isinstance(node, c_ast.Switch):
        body = plain._replace(switch_body=True)
        if not isinstance(node.stmt, (c_ast.Compound, c_ast.Case, c_ast.Default)):
            body = plain._replace(regions=(*where.regions, id(node.stmt)))
        return [(node.cond, plain), (node.stmt, body)]
    if isinstance(node, c_ast.For):
        return _for(node, plain)
    if isinstance(node, (c_ast.While, c_ast.DoWhile)):
        looping = not (isinstance(node, c_ast.DoWhile) and once(node))
        inner = plain._replace(loops=(*where.loops, id(node))) if looping else plain
        return [(node.cond, plain), (node.stmt, inner)]
    return [(child, plain) for _, child in node.children()]


def _items(items: list[Any], where: _Where) -> list[tuple[Any, _Where]]:
    """The statements of a block: each sees the declarations before it; in a switch body, those
    before the first case are regions of their own (switch lowering drops them)."""
    first = next((k for k, s in enumerate(items) if isinstance(s, (c_ast.Case, c_ast.Default))), len(items))
    out: list[tuple[Any, _Where]] = []
    scope = where.scope
    for k, item in enumerate(items):
        regions = (*where.regions, id(item)) if where.switch_body and k < first else where.regions
        out.append((item, _Where(scope, regions, where.loops)))
        if _is_local_variable(item):
            scope = (item, scope)
    return out


def _for(node: c_ast.For, where: _Where) -> list[tuple[Any, _Where]]:
    scope = where.scope
    if isinstance(node.init, c_ast.DeclList):
        for d in node.init.decls:
            if _is_local_variable(d):
                scope = (d, scope)
    after = where._replace(scope=scope)
    inner = after._replace(loops=(*where.loops, id(node)))
    parts = [(node.init, where), (node.cond, after), (node.next, after), (node.stmt, inner)]
    return [(n, w) for n, w in parts if n is not None]


def _is_local_variable(node: Any) -> bool:
    """A declaration of an automatic variable (whose initialisation a goto may skip)."""
    if not isinstance(node, c_ast.Decl) or node.name is None or isinstance(node.type, c_ast.FuncDecl):
        return False
    storage = node.storage or []
    return "static" not in storage and "extern" not in storage
