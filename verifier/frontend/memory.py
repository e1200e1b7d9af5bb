"""The heap model: pointers to structs as object numbers, one array per struct field.

A region-typed (Burstall-Bornat) model that the IR expresses with what it already has:

* A pointer to a struct, or a `void *`, is an IR integer of a pointer type (`pointer_type`:
  signed, the data model's pointer width, named as C writes it, e.g. `struct TSLL *`). 0 is
  NULL; an allocation returns the next object number (`heap.top` counts them from 0; the model
  assumes fewer than 2**(bits-1) - 1 allocations). Pointer values are only copied, compared
  with `==`/`!=` and tested for truth: no arithmetic, ordering or conversion to an integer, so
  any injective placement of objects (the compiled program's) behaves the same.
* Field `f` of struct `S` is the array variable `S.f` ("heap" kind, C name `->f`, which the
  printer shows as `p->f`) indexed by object number:
  `p->f` reads `S.f[p]`, a write stores into it. Every access first assumes that p is an
  allocated object, `0 < p <= heap.top` (a null dereference ends a compiled run, so no error is
  reached along it; any other pointer is undefined behaviour, which reach-safety excludes).
* Fields start arbitrary (each field array is havocked once at the start, and object numbers
  are never reused); `calloc` zeroes every field at the new object. `free` is not modelled: a
  use after free is undefined behaviour, which reach-safety tasks exclude (gcc replay stays the
  judge of a counterexample).
* A pointer to an integer type is a *block*: the variable is the array it points to
  (`int *a = malloc(n * sizeof(int))`) with its length in elements (`a.len`); accesses `a[i]`,
  `*(a + i)`, `*a` assume `0 <= i < a.len`. Each allocation havocs the array. A block is never
  copied or compared (unsupported); a local one passed to a function's `T *` parameter is bound to
  it, the same variable under the parameter's name, which the callee may not assign (`calls`).
* A variable-length array `T a[n]` is a block too (`Memory.vlas`): each time its declaration
  runs, `n` is evaluated, assumed positive (C leaves `n <= 0` undefined), the array havocked and
  `a.len = n`. It is never assigned, and `sizeof a` is `a.len * sizeof(T)`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .. import ir
from ..errors import Coord
from ..ir import HEAP

if TYPE_CHECKING:
    from .state import LowerState

ALLOCATED = "malloc"  # the Havoc origin of a block's contents at allocation
FRESH = "heap contents"  # the Havoc origin of the field arrays at the start


@dataclass
class StructInfo:
    """A struct tag: its integer and pointer fields (None until defined), and the fields whose
    type the model does not cover, with the feature to report when one is used."""

    tag: str
    fields: dict[str, ir.IntType] | None = None
    unsupported: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class BlockType:
    """The C type `T *` for an integer type T: a pointer the model treats as its block."""

    elem: ir.IntType

    @property
    def name(self) -> str:
        return f"{self.elem.name} *"


class Memory:
    """The structs, pointer types and heap variables of one lowering run."""

    def __init__(self, pointer_bits: int) -> None:
        self.pointer_bits = pointer_bits
        self.structs: dict[str, StructInfo] = {}
        self.pointees: dict[str, StructInfo | None] = {}  # pointer type name -> struct (None: void)
        self.field_arrays: dict[tuple[str, str], ir.Var] = {}
        self.blocks: dict[str, ir.Var] = {}  # block variable -> its length variable
        self.vlas: set[str] = set()  # the blocks that are variable-length arrays
        self.top: ir.Var | None = None
        self.anonymous = 0
        self.untagged: dict[int, StructInfo] = {}

    def struct(self, tag: str | None, node_id: int) -> StructInfo:
        """The struct of `tag`; an untagged one is known by its declaration's node."""
        if tag is None:
            known = self.untagged.get(node_id)
            if known is not None:
                return known
            self.anonymous += 1
            tag = f"anonymous.{self.anonymous}"
            self.untagged[node_id] = StructInfo(tag)
            self.structs[tag] = self.untagged[node_id]
        return self.structs.setdefault(tag, StructInfo(tag))

    def pointer_type(self, target: StructInfo | None) -> ir.IntType:
        name = "void *" if target is None else f"struct {target.tag} *"
        self.pointees[name] = target
        return ir.IntType(name, self.pointer_bits, True)

    @staticmethod
    def is_pointer(ty: object) -> bool:
        return isinstance(ty, ir.IntType) and ty.is_pointer

    def target(self, ty: ir.IntType) -> StructInfo | None:
        return self.pointees.get(ty.name)

    def declared_type(self, name: str, ty: ir.Type) -> ir.Type | BlockType:
        """The C type of variable `name` whose IR type is `ty` (a block's is `T *`)."""
        if name in self.blocks and isinstance(ty, ir.ArrayType):
            return BlockType(ty.elem)
        return ty

    def null(self) -> ir.Const:
        return ir.Const(0, self.pointer_type(None))

    # ------------------------------------------------------------------ heap variables

    def field_array(self, st: LowerState, info: StructInfo, name: str) -> ir.Var:
        """The array of field `name` of `info`, declared (and havocked at the start) on first use."""
        key = (info.tag, name)
        var = self.field_arrays.get(key)
        if var is None:
            assert info.fields is not None
            ty = ir.ArrayType(info.fields[name], None)
            var = st.declare(f"->{name}", ty, HEAP, None, name=st.reserve(f"{info.tag}.{name}", True))
            st.init.append(ir.Havoc(var.name, None, FRESH))
            self.field_arrays[key] = var
        return var

    def allocation_counter(self, st: LowerState) -> ir.Var:
        if self.top is None:
            self.top = st.declare("heap.top", self.null().type, HEAP, None, name=st.reserve("heap.top", True))
            st.init.append(ir.Assign(self.top.name, self.null()))
        return self.top

    def allocated(self, st: LowerState, pointer: ir.Expr) -> ir.Expr:
        """`pointer` names an allocated object: 0 < pointer <= heap.top (what a dereference assumes)."""
        top = self.allocation_counter(st)
        ty = self.null().type
        p = pointer if pointer.type == ty else ir.Cast(pointer, ty)
        above_null = ir.Binary(">", p, ir.Const(0, ty), ir.INT)
        return ir.Binary("&&", above_null, ir.Binary("<=", p, top, ir.INT), ir.INT)

    def allocate(self, st: LowerState, coord: Coord | None, zero: bool) -> tuple[list[ir.Stmt], ir.Expr]:
        """The statements of one allocation (`calloc`: `zero`), and the new object's number."""
        top = self.allocation_counter(st)
        ty = self.null().type
        low = ir.Binary(">=", top, ir.Const(0, ty), ir.INT)
        fits = ir.Binary("&&", low, ir.Binary("<", top, ir.Const(ty.max, ty), ir.INT), ir.INT)
        bump = ir.Assign(top.name, ir.Binary("+", top, ir.Const(1, ty), ty), coord)
        out: list[ir.Stmt] = [ir.Assume(fits, coord), bump]
        if zero:
            for info in list(self.structs.values()):
                for name, fty in (info.fields or {}).items():
                    array = self.field_array(st, info, name)
                    zeroed = ir.Store(array, top, ir.Const(0, fty), ir.ArrayType(fty, None))
                    out.append(ir.Assign(array.name, zeroed, coord))
        return out, top
