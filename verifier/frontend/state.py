"""The mutable bookkeeping of one lowering run: names, scopes, loops, overflow sites.

One `LowerState` lives for one call of `lower`/`parse_invariant` (no module-level state).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from quokka.verifier.ir.cexpr import CTypes

from ..errors import Coord, UnsupportedFeature
from ..ir import RECURSION_DEPTH, ArrayType, Expr, IntType, LoopInfo, Stmt, Type, Var, VarDecl
from ..properties import ASSERT
from .coords import CoordMap
from .gotos import GotoContext
from .memory import Memory


@dataclass(frozen=True)
class VarBinding:
    """A C variable: its IR name and type."""

    name: str
    type: Type


@dataclass(frozen=True)
class ConstBinding:
    """An enumeration constant."""

    value: int


@dataclass(frozen=True)
class TypedefBinding:
    """A typedef name; `node` is the pycparser type it stands for (resolved when used)."""

    node: Any


@dataclass(frozen=True)
class PoisonBinding:
    """A name whose declaration uses an unsupported feature: using it raises `error`."""

    error: UnsupportedFeature


@dataclass(frozen=True)
class BlockParam(VarBinding):
    """A pointer parameter given a block (`memory`): the caller's block variable under the
    parameter's name. Assigning the parameter is unsupported (it would move the caller's pointer)."""


@dataclass(frozen=True)
class RefBinding:
    """A pointer parameter given `&x` for a scalar variable: `*p` is the variable `name`; no other
    use of the pointer is modelled."""

    name: str
    type: IntType


Binding = VarBinding | ConstBinding | TypedefBinding | PoisonBinding | RefBinding
PointerArgument = BlockParam | RefBinding  # what a pointer parameter is bound to (`calls`)
Arguments = list[Expr | PointerArgument]  # a call's arguments: values, or what pointers are bound to


@dataclass
class Frame:
    """One block scope: ordinary identifiers and tags (enum/struct names)."""

    names: dict[str, Binding] = field(default_factory=dict)
    tags: dict[str, Type] = field(default_factory=dict)


class Scopes:
    """C's block scopes; a function body sees the file scope and its own blocks only."""

    def __init__(self, file_scope: Frame) -> None:
        self.frames: list[Frame] = [file_scope]

    def push(self) -> None:
        self.frames.append(Frame())

    def pop(self) -> None:
        self.frames.pop()

    def lookup(self, name: str) -> Binding | None:
        for frame in reversed(self.frames):
            if name in frame.names:
                return frame.names[name]
        return None

    def tag(self, name: str) -> Type | None:
        for frame in reversed(self.frames):
            if name in frame.tags:
                return frame.tags[name]
        return None

    def define(self, name: str, binding: Binding) -> None:
        self.frames[-1].names[name] = binding

    def visible_vars(self) -> tuple[tuple[str, str], ...]:
        """C name -> IR name of every visible variable, innermost declaration winning."""
        out: dict[str, str] = {}
        for frame in self.frames:
            for c_name, b in frame.names.items():
                if isinstance(b, VarBinding):
                    out.pop(c_name, None)
                    out[c_name] = b.name
                elif c_name in out:
                    del out[c_name]
        return tuple(out.items())

    def function_scope(self) -> Scopes:
        """A fresh scope chain for a function body: the file scope plus one empty block."""
        inner = Scopes(self.frames[0])
        inner.push()
        return inner


@dataclass
class SwitchContext:
    """The innermost enclosing `switch`: a `break` sets `flag` (created on first use)."""

    flag: str | None = None
    uses: int = 0


class LowerState:
    """Everything one lowering run accumulates."""

    def __init__(
        self, ct: CTypes, coords: CoordMap, file_scope: Frame | None = None, property_name: str = ASSERT
    ) -> None:
        self.ct = ct
        self.coords = coords
        self.property_name = property_name  # which calls are errors (`properties`)
        self.scopes = Scopes(file_scope or Frame())
        self.variables: list[VarDecl] = []
        self.taken: set[str] = set()
        self.reserved: set[str] = set()
        self.loops: list[LoopInfo] = []
        self.loop_stack: list[str] = []
        self.breakables: list[SwitchContext | None] = []
        self.overflow: dict[Coord, None] = {}
        self.init: list[Stmt] = []
        self.statics: dict[tuple[str, int, int], VarBinding] = {}
        self.counter = 0
        self.call_stack: list[str] = []
        self.cut_calls: dict[Coord, None] = {}  # recursive calls past the depth (`calls.RECURSION_DEPTH`)
        self.recursion_depth = RECURSION_DEPTH  # activations of one function inlined at once
        self.site: Coord | None = None
        self.size = 0
        self.gotos: GotoContext | None = None  # the labels of the function being lowered
        self.has_goto = False
        self.loop_entries: list[tuple[Coord | None, str]] = []  # `GotoPlan.entries` lowered
        self.memory = Memory(ct.pointer_bytes * 8)
        self.shapes: dict[str, tuple[int, ...]] = {}  # multi-dimensional array -> its dimensions
        self.zero_arrays: dict[ArrayType, Var] = {}
        self.deadline = math.inf  # `time.monotonic()` past it, lowering stops (`OutOfTime`)

    def coord(self, node: Any) -> Coord | None:
        return self.coords.coord(getattr(node, "coord", None))

    def fresh_name(self, c_name: str, plain: bool) -> str:
        """A new unique IR name: `c_name` itself when free (and `plain` or unreserved), else c_name_k."""
        if c_name not in self.taken and (plain or c_name not in self.reserved):
            return c_name
        k = 1
        while f"{c_name}_{k}" in self.taken or f"{c_name}_{k}" in self.reserved:
            k += 1
        return f"{c_name}_{k}"

    def reserve(self, c_name: str, plain: bool) -> str:
        """A new unique IR name (as `fresh_name`), taken now, for a variable declared later."""
        name = self.fresh_name(c_name, plain)
        self.taken.add(name)
        return name

    def declare(
        self,
        c_name: str,
        ty: Type,
        kind: str,
        coord: Coord | None,
        plain: bool = True,
        name: str | None = None,
    ) -> Var:
        """A new variable, named `name` when given (reserved with `reserve`), else a fresh name."""
        if name is None:
            name = self.reserve(c_name, plain)
        self.variables.append(VarDecl(name, ty, kind, c_name, coord))
        return Var(name, ty)

    def temp(self, ty: Type, hint: str = "tmp") -> Var:
        """A fresh temporary; the dot keeps it apart from every C identifier."""
        self.counter += 1
        name = f"{hint}.{self.counter}"
        self.taken.add(name)
        self.variables.append(VarDecl(name, ty, "temp", name, None))
        return Var(name, ty)

    def zero_array(self, ty: ArrayType) -> Var:
        """A temporary of type `ty` that no statement assigns: all zeros whenever it is read (every
        variable starts at 0), the value a large array is reset to (`int a[N] = {0}`, memset)."""
        var = self.zero_arrays.get(ty)
        if var is None:
            var = self.zero_arrays[ty] = self.temp(ty, "zero")
        return var

    def loop_id(self, coord: Coord | None) -> str:
        base = f"L{coord.line if coord else 0}"
        ids = {info.id for info in self.loops}
        if base not in ids:
            return base
        k = 2
        while f"{base}_{k}" in ids:
            k += 1
        return f"{base}_{k}"

    def record_overflow(self, coord: Coord | None) -> None:
        if coord is not None:
            self.overflow[coord] = None
