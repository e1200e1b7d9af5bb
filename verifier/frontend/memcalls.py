"""`memset` and `memcpy` on whole arrays, without a loop (when the file does not define them).

The destination (and `memcpy`'s source) must name an integer array: a fixed-size one (a
multi-dimensional one is its flat array), or a variable-length array (`memory`). The length must
be a constant number of whole elements for a fixed-size array, and `sizeof a` for a
variable-length one (the whole array). Every element the call covers gets the value that C's
bytes give it:

* `memset(a, c, n)` sets each byte to `(unsigned char)c`, so each element is that byte repeated
  (for an `int`, 0 gives 0 and 0xff gives -1); a non-constant `c` is supported for 1-byte
  elements only, and a `_Bool` only takes the bytes 0 and 1.
* The whole of a large array (over `MAX_ELEMENT_STORES` elements) set to 0 is assigned the all-zero
  array (`LowerState.zero_array`); a small one, or a prefix of at most `MAX_ELEMENT_STORES` elements,
  is stored element by element. `memcpy` of a whole array onto another of the same type is one
  assignment; of a prefix of at most `MAX_ELEMENT_STORES` elements, one store per element.

Everything else (a length past the end, which C leaves undefined, part of a large array, a
non-zero fill of a large array, a block from `malloc`, a pointer that is not an array's name, an
array copied onto itself) is an `UnsupportedFeature` located at the call.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pycparser import c_ast
from quokka.verifier import ir
from quokka.verifier.ir import cexpr, semantics

from ..errors import UnsupportedFeature
from .expr import ExprLowerer
from .state import VarBinding

MEMSET_FUNCTIONS = frozenset({"memset", "__builtin_memset"})
MEMCPY_FUNCTIONS = frozenset({"memcpy", "__builtin_memcpy"})
MEMORY_FUNCTIONS = MEMSET_FUNCTIONS | MEMCPY_FUNCTIONS
MAX_ELEMENT_STORES = 4096  # explicit element stores one statement may make (a call, an initializer)
WHOLE = -1  # an element count: the whole array


class MemoryCalls(ExprLowerer):
    """`memset`/`memcpy` calls (see the module's docstring)."""

    def memory_call(self, name: str, node: c_ast.FuncCall, args: list[Any], out: list[ir.Stmt]) -> None:
        base = "memset" if name in MEMSET_FUNCTIONS else "memcpy"
        target = self._array_argument(args[0], node, base)
        if base == "memset":
            self._memset(target, args, node, out)
        else:
            self._memcpy(target, args, node, out)

    def _refuse(self, node: Any, name: str, detail: str) -> UnsupportedFeature:
        return UnsupportedFeature(self.st.coord(node), name, detail)

    def _array_argument(self, arg: Any, node: Any, name: str) -> ir.Var:
        """The array variable `arg` names (a fixed-size array, or a variable-length one)."""
        binding = self.st.scopes.lookup(arg.name) if isinstance(arg, c_ast.ID) else None
        if not isinstance(binding, VarBinding) or not isinstance(binding.type, ir.ArrayType):
            raise self._refuse(node, name, "an argument that is not the name of an array")
        blocks = self.st.memory
        if binding.type.size is None and (type(binding) is not VarBinding or binding.name not in blocks.vlas):
            raise self._refuse(node, name, "a pointer to an integer: only arrays are supported")
        return ir.Var(binding.name, binding.type)

    def _count(self, target: ir.Var, arg: Any, length: ir.Expr, node: Any, name: str) -> int:
        """How many elements of `target` (named by `arg`) `length` bytes cover (`WHOLE`: all)."""
        ty = target.type
        assert isinstance(ty, ir.ArrayType)
        if ty.size is None:
            if length == self.vla_size(arg):
                return WHOLE
            raise self._refuse(node, name, f"length not sizeof({target.name}), the whole array")
        n = cexpr.const_value(length)
        if n is None:
            raise self._refuse(node, name, "a length that is not a constant")
        elem = self.types.size_of(ty.elem, node)
        if n % elem != 0 or n < 0:
            raise self._refuse(node, name, f"a length of {n} bytes: not a number of whole elements")
        if n // elem > ty.size:
            raise self._refuse(node, name, f"a length of {n} bytes, past the end of the array")
        return WHOLE if n // elem == ty.size else n // elem

    # ------------------------------------------------------------------ memset

    def _memset(self, target: ir.Var, args: list[Any], node: Any, out: list[ir.Stmt]) -> None:
        ty = target.type
        assert isinstance(ty, ir.ArrayType)
        pos = len(out)
        value = self.value(args[1], out)
        length = self.value(args[2], out)
        fill = self._fill_value(self.protect(value, out, pos), ty.elem, node)
        count = self._count(target, args[0], length, node, "memset")
        coord = self.st.coord(node)
        large = ty.size is None or ty.size > MAX_ELEMENT_STORES
        if count == WHOLE and large and cexpr.const_value(fill) == 0:
            out.append(ir.Assign(target.name, self.st.zero_array(ty), coord))
            return
        n = ty.size if count == WHOLE else count
        if n is None or n > MAX_ELEMENT_STORES:
            raise self._refuse(node, "memset", "a non-zero value or part of a large array")
        if n > 0:
            out.append(ir.Assign(target.name, _stored(target, dict.fromkeys(range(n), fill)), coord))

    def _fill_value(self, value: ir.Expr, elem: ir.IntType, node: Any) -> ir.Expr:
        """The element whose every byte is `(unsigned char)value`."""
        if not isinstance(value.type, ir.IntType) or self.st.memory.is_pointer(value.type):
            raise self._refuse(node, "memset", "a value that is not an integer")
        byte = cexpr.convert(value, self.st.ct.named("unsigned char"))
        b = cexpr.const_value(byte)
        width = self.types.size_of(elem, node)
        if elem.is_bool and b not in (0, 1):
            raise self._refuse(node, "memset", "a _Bool array set to a byte other than 0 or 1")
        if b is None and width == 1:
            return cexpr.convert(byte, elem)
        if b is None:
            raise self._refuse(node, "memset", f"a non-constant value for elements of {width} bytes")
        pattern = sum(b << (8 * k) for k in range(width))
        return ir.Const(semantics.wrap(pattern, elem), elem)

    # ------------------------------------------------------------------ memcpy

    def _memcpy(self, target: ir.Var, args: list[Any], node: Any, out: list[ir.Stmt]) -> None:
        source = self._array_argument(args[1], node, "memcpy")
        ty, sty = target.type, source.type
        assert isinstance(ty, ir.ArrayType) and isinstance(sty, ir.ArrayType)
        if ty.elem != sty.elem:
            raise self._refuse(node, "memcpy", f"between arrays of {ty.elem} and {sty.elem}")
        if ty.size is None or sty.size is None:
            raise self._refuse(node, "memcpy", "a variable-length array")
        length = self.value(args[2], out)
        count = self._count(target, args[0], length, node, "memcpy")
        count = ty.size if count == WHOLE else count
        if count > sty.size:
            raise self._refuse(node, "memcpy", "a length past the end of the source")
        if count > 0 and source.name == target.name:
            raise self._refuse(node, "memcpy", "an array copied onto itself (undefined)")
        coord = self.st.coord(node)
        if count == ty.size == sty.size:
            out.append(ir.Assign(target.name, source, coord))
            return
        if count > MAX_ELEMENT_STORES:
            detail = f"over {MAX_ELEMENT_STORES} elements, not a whole array onto one of its type"
            raise self._refuse(node, "memcpy", detail)
        stores = {k: cexpr.select(source, ir.Const(k, ir.INT)) for k in range(count)}
        if stores:
            out.append(ir.Assign(target.name, _stored(target, stores), coord))


def _stored(array: ir.Expr, values: Mapping[int, ir.Expr]) -> ir.Expr:
    for k in sorted(values):
        array = cexpr.store(array, ir.Const(k, ir.INT), values[k])
    return array

