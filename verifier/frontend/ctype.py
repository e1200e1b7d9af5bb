"""C declarators (pycparser type nodes) as IR types: integers, `float` and `double`, integer
arrays (1-D; multi-dimensional ones with constant dimensions, `MultiArrayType`, stored flattened;
variable-length ones, `VlaType`, lowered as blocks), void, pointers.

Pointers and structs follow the heap model of `memory`: a pointer to a struct (or `void *`) is an
integer of a pointer type, a pointer to an integer type is a block (`BlockType`), and a struct
value is a `StructType` (its size is known; variables of it are unsupported). Everything else
(pointers to pointers, unions, `long double`, arrays of floats, ...) raises `UnsupportedFeature`
naming the feature.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pycparser import c_ast

from ..errors import FrontendError, UnsupportedFeature
from ..ir import DOUBLE, FLOAT, ArrayType, FloatType, IntType
from .memory import BlockType, StructInfo
from .state import ConstBinding, LowerState, PoisonBinding, TypedefBinding

MAX_ARRAY = 1 << 24
STDINT_TYPES = {  # <stdint.h>'s exact-width types, as C types of that width (LP64 and ILP32)
    "int8_t": "signed char",
    "uint8_t": "unsigned char",
    "int16_t": "short",
    "uint16_t": "unsigned short",
    "int32_t": "int",
    "uint32_t": "unsigned int",
    "int64_t": "long long",
    "uint64_t": "unsigned long long",
}


@dataclass(frozen=True)
class VoidType:
    name: str = "void"


@dataclass(frozen=True)
class StructType:
    """A struct used as a value type (`sizeof(struct S)`, a declaration of a struct variable)."""

    info: StructInfo

    @property
    def name(self) -> str:
        return f"struct {self.info.tag}"


@dataclass(frozen=True)
class VlaType:
    """A variable-length array `T a[n]` (C99): `dim` is the size expression (a pycparser node),
    evaluated each time the declaration runs; the variable is lowered as a block (`memory`)."""

    elem: IntType
    dim: Any = field(compare=False)

    @property
    def name(self) -> str:
        return f"{self.elem.name}[*]"


@dataclass(frozen=True)
class MultiArrayType:
    """A multi-dimensional integer array with constant dimensions (`int a[3][4]`), stored as the
    flat array `flat` in row-major order: `a[i][j]` is element `i*4 + j`. The first dimension is
    None until an initializer sizes it (`int a[][2] = {...}`)."""

    elem: IntType
    dims: tuple[int | None, ...]

    @property
    def name(self) -> str:
        return self.elem.name + "".join(f"[{'' if d is None else d}]" for d in self.dims)

    @property
    def flat(self) -> ArrayType:
        sizes = [d for d in self.dims if d is not None]
        return ArrayType(self.elem, math.prod(sizes) if len(sizes) == len(self.dims) else None)


VOID = VoidType()
CType = IntType | FloatType | ArrayType | VoidType | BlockType | StructType | VlaType | MultiArrayType


@dataclass(frozen=True)
class Signature:
    """A function type: return type and parameters (None: declared without a prototype)."""

    ret: CType
    params: tuple[tuple[str | None, CType], ...] | None
    variadic: bool = False


_UNSUPPORTED_TYPES = {c_ast.Union: "union", c_ast.TypeOf: "typeof", c_ast.BitIntType: "_BitInt"}
_UNSUPPORTED_POINTEES = {
    c_ast.PtrDecl: "pointer to a pointer",
    c_ast.FuncDecl: "function pointer",
    c_ast.ArrayDecl: "pointer to an array",
}
_FLOATS = {"float", "double", "_Complex", "_Imaginary", "_Decimal32", "_Decimal64", "_Decimal128"}
_WORDS = {"signed", "unsigned", "char", "short", "int", "long", "_Bool", "void"}


def canonical_int_name(names: list[str]) -> str | None:
    """The canonical C name of a list of type specifiers, 'void', or None when not an int type."""
    words = [n for n in names if n in _WORDS]
    if len(words) != len(names) or not words:
        return None
    if "void" in words:
        return "void"
    if "_Bool" in words:
        return "_Bool"
    prefix = "unsigned " if "unsigned" in words else ""
    if "char" in words:
        return prefix + "char" if prefix or "signed" not in words else "signed char"
    if "short" in words:
        base = "short"
    else:
        base = ["int", "long", "long long"][min(words.count("long"), 2)]
    return prefix + base


ConstEval = Callable[[Any], int]


class TypeResolver:
    """Resolves declarators in the current scopes of `st`; `const_eval` evaluates array sizes."""

    def __init__(self, st: LowerState, const_eval: ConstEval) -> None:
        self.st = st
        self.const_eval = const_eval

    def unsupported(self, node: Any, feature: str, detail: str = "") -> UnsupportedFeature:
        return UnsupportedFeature(self.st.coord(node), feature, detail)

    def resolve(self, node: Any) -> CType:
        """The type a declarator (TypeDecl, ArrayDecl, PtrDecl, Typename, ...) denotes."""
        if isinstance(node, (c_ast.Typename, c_ast.Decl)):
            return self.resolve(node.type)
        if isinstance(node, c_ast.TypeDecl):
            return self.base(node.type)
        if isinstance(node, c_ast.ArrayDecl):
            return self.array(node)
        if isinstance(node, c_ast.PtrDecl):
            return self.pointer(node)
        if isinstance(node, c_ast.FuncDecl):
            raise self.unsupported(node, "function pointer")
        if isinstance(node, c_ast.AttributedType):
            return self.resolve(node.type)
        return self.base(node)

    def integer(self, node: Any, what: str) -> IntType:
        ty = self.resolve(node)
        if not isinstance(ty, IntType):
            raise self.unsupported(node, f"{what} of type {ty.name}")
        return ty

    def base(self, node: Any) -> CType:
        if isinstance(node, c_ast.IdentifierType):
            return self.identifier_type(node)
        if isinstance(node, c_ast.Enum):
            return self.enum(node)
        if isinstance(node, c_ast.Struct):
            return StructType(self.struct(node))
        raise self.unsupported(node, _UNSUPPORTED_TYPES.get(type(node), f"type {type(node).__name__}"))

    def identifier_type(self, node: c_ast.IdentifierType) -> CType:
        names = list(node.names)
        canon = canonical_int_name(names)
        if canon == "void":
            return VOID
        if canon is not None:
            return self.st.ct.named(canon)
        if any(n in _FLOATS for n in names):
            return self.floating(node, names)
        if len(names) == 1:
            return self.typedef(node, names[0])
        raise self.unsupported(node, f"type {' '.join(names)}")

    def floating(self, node: Any, names: list[str]) -> FloatType:
        """`float` or `double`; `long double`, complex and decimal types are unsupported."""
        if names == ["float"]:
            return FLOAT
        if names == ["double"]:
            return DOUBLE
        if sorted(names) == ["double", "long"]:
            raise self.unsupported(node, "long double")
        exotic = next((n for n in names if n in _FLOATS and n not in ("float", "double")), None)
        raise self.unsupported(node, f"floating type {exotic or ' '.join(names)}")

    def typedef(self, node: Any, name: str) -> CType:
        binding = self.st.scopes.lookup(name)
        if isinstance(binding, TypedefBinding):
            try:
                ty = self.resolve(binding.node)
            except UnsupportedFeature as exc:
                raise UnsupportedFeature(
                    self.st.coord(node), exc.feature, f"through typedef {name}"
                ) from None
            if isinstance(ty, VlaType):  # its size is evaluated at the typedef, not at each use
                raise self.unsupported(node, "variable-length array type", f"typedef {name}")
            return ty
        if isinstance(binding, PoisonBinding):
            raise binding.error
        raise self.unsupported(node, f"type {name}")

    def pointer(self, node: c_ast.PtrDecl) -> IntType | BlockType:
        """`T *`: a pointer type of the heap model (a struct or void target), or a block."""
        target = node.type
        if type(target) in _UNSUPPORTED_POINTEES:
            raise self.unsupported(node, _UNSUPPORTED_POINTEES[type(target)])
        pointee = self.resolve(target)
        memory = self.st.memory
        if isinstance(pointee, StructType):
            return memory.pointer_type(pointee.info)
        if pointee == VOID:
            return memory.pointer_type(None)
        if isinstance(pointee, IntType) and not memory.is_pointer(pointee):
            return BlockType(pointee)
        raise self.unsupported(node, f"pointer to {pointee.name}")

    def struct(self, node: c_ast.Struct) -> StructInfo:
        """The struct `node` names, its fields defined when `node` has them."""
        info = self.st.memory.struct(node.name, id(node))
        if node.decls is None or info.fields is not None:
            return info
        info.fields = {}
        for decl in node.decls:
            if not isinstance(decl, c_ast.Decl) or decl.name is None:
                raise self.unsupported(decl, "anonymous struct member")
            try:
                ty = self.resolve(decl.type)
            except UnsupportedFeature as exc:
                info.unsupported[decl.name] = exc.feature
                continue
            if isinstance(ty, IntType) and decl.bitsize is None:
                info.fields[decl.name] = ty
            else:
                info.unsupported[decl.name] = (
                    "bit-field" if decl.bitsize is not None else f"field of type {ty.name}"
                )
        return info

    def array(self, node: c_ast.ArrayDecl) -> ArrayType | VlaType | MultiArrayType:
        """`T a[N]`; `T a[n]` for a non-constant n is a `VlaType`, an array of arrays a
        `MultiArrayType` (constant dimensions only)."""
        elem = self.resolve(node.type)
        if isinstance(elem, (ArrayType, MultiArrayType)):
            return self.multi_array(node, elem)
        if isinstance(elem, VlaType):
            raise self.unsupported(node, "multi-dimensional variable-length array")
        if not isinstance(elem, IntType):
            raise self.unsupported(node, f"array of {elem.name}")
        if node.dim is None:
            return ArrayType(elem, None)
        try:
            size = self.const_eval(node.dim)
        except FrontendError:
            return VlaType(elem, node.dim)
        return ArrayType(elem, self.checked_size(node, size))

    def multi_array(self, node: c_ast.ArrayDecl, inner: ArrayType | MultiArrayType) -> MultiArrayType:
        inner_dims = (inner.size,) if isinstance(inner, ArrayType) else inner.dims
        if None in inner_dims:
            raise FrontendError(self.st.coord(node), "array of arrays of unknown size")
        size = None
        if node.dim is not None:
            try:
                size = self.const_eval(node.dim)
            except FrontendError:
                raise self.unsupported(node, "multi-dimensional variable-length array") from None
        ty = MultiArrayType(inner.elem, (size, *inner_dims))
        if size is not None:
            self.checked_size(node, size)
            self.checked_size(node, ty.flat.size or 0)
        return ty

    def checked_size(self, node: Any, size: int) -> int:
        if size < 0 or size > MAX_ARRAY:
            raise FrontendError(self.st.coord(node), f"array size {size} out of range")
        return size

    def enum(self, node: c_ast.Enum) -> IntType:
        """An enum type (GCC: unsigned int unless a value is negative); defines its constants."""
        if node.values is None:
            known = self.st.scopes.tag(f"enum {node.name}") if node.name else None
            return known if isinstance(known, IntType) else self.st.ct.named("unsigned int")
        values = self.enumerators(node.values)
        lo, hi = min(values, default=0), max(values, default=0)
        ct = self.st.ct
        ty = ct.named("unsigned int") if lo >= 0 and hi <= 0xFFFFFFFF else ct.named("int")
        if not ty.min <= lo <= hi <= ty.max:
            ty = ct.named("long long")
        if node.name:
            self.st.scopes.frames[-1].tags[f"enum {node.name}"] = ty
        return ty

    def enumerators(self, values: c_ast.EnumeratorList) -> list[int]:
        out: list[int] = []
        nxt = 0
        for item in values.enumerators:
            value = self.const_eval(item.value) if item.value is not None else nxt
            self.st.scopes.define(item.name, ConstBinding(value))
            out.append(value)
            nxt = value + 1
        return out

    def signature(self, node: c_ast.FuncDecl, pointers: bool = False) -> Signature:
        """The function type of `node`; with `pointers`, a `T *` or `T []` parameter for an integer
        type T is a `BlockType` (a defined function binds it: `calls`), else unsupported."""
        ret = self.resolve(node.type)
        if isinstance(ret, (BlockType, StructType)):
            raise self.unsupported(node, f"function returning {ret.name}")
        if node.args is None:
            return Signature(ret, None)
        params: list[tuple[str | None, CType]] = []
        variadic = False
        for p in node.args.params:
            if isinstance(p, c_ast.EllipsisParam):
                variadic = True
                continue
            if isinstance(p, c_ast.ID):
                return Signature(ret, None)
            ty = self.resolve(p.type)
            if ty == VOID and getattr(p, "name", None) is None:
                continue
            if pointers and isinstance(ty, (ArrayType, VlaType)):
                ty = BlockType(ty.elem)  # C adjusts an array parameter to a pointer
            if isinstance(ty, MultiArrayType):
                raise self.unsupported(p, "pointer to an array", "multi-dimensional array parameter")
            if isinstance(ty, VlaType):
                raise self.unsupported(p, "array parameter (a pointer)")
            if isinstance(ty, ArrayType) or (isinstance(ty, BlockType) and not pointers):
                raise self.unsupported(p, "array parameter (a pointer)")
            if isinstance(ty, StructType):
                raise self.unsupported(p, "struct parameter")
            params.append((getattr(p, "name", None), ty))
        return Signature(ret, tuple(params), variadic)

    def size_of(self, ty: CType, node: Any) -> int:
        if isinstance(ty, IntType):
            return 1 if ty.is_bool else ty.bits // 8
        if isinstance(ty, FloatType):
            return ty.bits // 8
        if isinstance(ty, ArrayType):
            if ty.size is None:
                raise FrontendError(self.st.coord(node), "sizeof of an array of unknown size")
            return ty.size * self.size_of(ty.elem, node)
        if isinstance(ty, MultiArrayType):
            return self.size_of(ty.flat, node)
        if isinstance(ty, VlaType):
            raise self.unsupported(node, "sizeof of a variable-length array type")
        if isinstance(ty, BlockType):
            return self.st.ct.pointer_bytes
        if isinstance(ty, StructType):
            return self.struct_size(ty.info, node)
        raise FrontendError(self.st.coord(node), "sizeof(void)")

    def struct_size(self, info: StructInfo, node: Any) -> int:
        """gcc's size of a struct of integer and pointer fields (natural alignment; i386 aligns
        8-byte members to 4)."""
        if info.fields is None:
            raise FrontendError(self.st.coord(node), f"sizeof of incomplete struct {info.tag}")
        if info.unsupported:
            field, feature = next(iter(info.unsupported.items()))
            raise self.unsupported(node, feature, f"sizeof(struct {info.tag}), field {field}")
        offset, widest = 0, 1
        for ty in info.fields.values():
            size = max(1, ty.bits // 8)
            align = min(size, self.st.ct.pointer_bytes if size == 8 else size)
            widest = max(widest, align)
            offset = -(-offset // align) * align + size
        return -(-offset // widest) * widest
