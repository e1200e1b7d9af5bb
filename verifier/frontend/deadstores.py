"""Stores to pointer variables that nothing reads, dropped before lowering.

SV-COMP programs keep pointers they never use again (`char *s; ... s = in;`): the memory model
cannot give `s` the address of an array, yet nothing depends on it. A local pointer variable of
a function whose every occurrence is the target of a plain `=` statement (or its declaration) is
dead when what it is given cannot misbehave (a name, a constant, an address, a cast of those);
its stores of a name or an address are removed: the program's executions are the same.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from pycparser import c_ast


def drop_dead_pointer_stores(function: c_ast.FuncDef, file_scope: set[str]) -> None:
    """Remove from `function`'s body the stores to its dead pointer variables (in place); a name
    also declared at file scope (`file_scope`) is left alone (a store may be to the global)."""
    dead = _dead_pointers(function) - file_scope
    if not dead:
        return
    for node in _walk(function.body):
        if isinstance(node, c_ast.Compound) and node.block_items:
            node.block_items = [s for s in node.block_items if not _dropped(s, dead)]
        elif isinstance(node, c_ast.Decl) and node.name in dead and _address(node.init):
            node.init = None


def _dropped(statement: Any, dead: set[str]) -> bool:
    return _store_target(statement) in dead and _address(statement.rvalue)


def _dead_pointers(function: c_ast.FuncDef) -> set[str]:
    declared = Counter(n.name for n in _walk(function) if isinstance(n, c_ast.Decl) and n.name)
    pointers = {n.name for n in _walk(function.body) if isinstance(n, c_ast.Decl) and declared[n.name] == 1
                and isinstance(n.type, c_ast.PtrDecl) and (n.init is None or _harmless(n.init))}  # fmt: skip
    stores = Counter(_store_target(n) for n in _walk(function.body) if isinstance(n, c_ast.Compound)
                     for n in n.block_items or ())  # fmt: skip
    uses = Counter(n.name for n in _walk(function.body) if isinstance(n, c_ast.ID))
    return {name for name in pointers if uses[name] == stores[name]}


def _store_target(statement: Any) -> str | None:
    """`x` for a statement `x = e;` whose `e` cannot misbehave, else None."""
    if not isinstance(statement, c_ast.Assignment) or statement.op != "=":
        return None
    target = statement.lvalue
    return target.name if isinstance(target, c_ast.ID) and _harmless(statement.rvalue) else None


def _harmless(e: Any) -> bool:
    if isinstance(e, (c_ast.ID, c_ast.Constant)):
        return True
    if isinstance(e, c_ast.Cast):
        return _harmless(e.expr)
    return isinstance(e, c_ast.UnaryOp) and e.op == "&" and isinstance(e.expr, c_ast.ID)


def _address(e: Any) -> bool:
    """Whether `e` (harmless) names memory: what the model cannot store (a constant, such as
    NULL, it can: those stores stay, and the program's IR is what it was)."""
    while isinstance(e, c_ast.Cast):
        e = e.expr
    return not isinstance(e, c_ast.Constant) and e is not None


def _walk(root: Any) -> list[Any]:
    out, stack = [], [root]
    while stack:
        node = stack.pop()
        if node is None:
            continue
        out.append(node)
        stack.extend(child for _, child in node.children())
    return out
