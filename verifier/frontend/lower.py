"""The frontend's entry points: C source -> cpp -> pycparser -> `Program`."""

from __future__ import annotations

import contextlib
import math
import re
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from pycparser import c_ast, c_lexer, c_parser
from quokka.verifier.ir.cexpr import DATA_MODELS, CTypes
from quokka.verifier.ir.definedness import STRICT, UNINITIALISED_READINGS
from quokka.verifier.ir.nooverflow import with_overflow_checks

from ..cfg import build_cfg
from ..errors import Coord, FrontendError, InputError, OutOfTime, UnsupportedFeature
from ..ir import (
    INT,
    RECURSION_DEPTH,
    Assert,
    Assign,
    Assume,
    Havoc,
    If,
    IntType,
    Program,
    Scope,
    Stmt,
    Var,
    free_vars,
    walk_stmts,
)
from ..properties import ASSERT, NO_OVERFLOW, READINGS
from .coords import CoordMap, output_lines
from .ctype import VlaType
from .deadstores import drop_dead_pointer_stores
from .memory import BlockType
from .preprocess import Preprocessed, preprocess, standard_typedefs
from .state import LowerState, PoisonBinding, VarBinding
from .stmt import StmtLowerer

MAX_SOURCE_BYTES = 2 << 20  # pycparser needs ~15 s per MiB: larger inputs are refused, not parsed
MAX_PREPROCESSED_CHARS = 3 << 20
DEADLINE_TOKENS = 256  # the parser looks at the clock once per this many tokens
_PARSE_ERROR = re.compile(r"^(.*?):(\d+)(?::(\d+))?: (.*)$", re.S)
# GNU C's labels as values, which pycparser does not parse: `goto *p;` and `&&label`
_COMPUTED_GOTO = re.compile(r"\bgoto\s*(\*)|(?:^|[=(,?:{]|\breturn)\s*(&&)\s*[A-Za-z_]")


def lower(
    path: str | Path,
    data_model: str = "LP64",
    property_name: str = ASSERT,
    uninitialised: str = STRICT,
    *,
    recursion_depth: int = RECURSION_DEPTH,
    deadline: float = math.inf,
) -> Program:
    """Lower the C file at `path` (its `main`, calls inlined) to an IR `Program` whose Asserts are
    the errors of `property_name` (`properties.ASSERT`, `UNREACH_CALL` or `NO_OVERFLOW`) and whose
    uninitialised locals are read as `uninitialised` says (`definedness.STRICT` or `NONDET`).

    Raises InputError (unreadable, empty, not C), FrontendError (malformed for the frontend) or
    UnsupportedFeature (located, naming the feature); ToolMissing when no C preprocessor exists;
    OutOfTime (naming the stage) once `time.monotonic()` passes `deadline`.
    """
    p = Path(path)
    text = read_source(p)
    return _lower(
        text, str(path), data_model, p.parent, property_name, uninitialised, recursion_depth, deadline
    )


def lower_source(
    text: str,
    filename: str = "<input>",
    data_model: str = "LP64",
    property_name: str = ASSERT,
    uninitialised: str = STRICT,
    deadline: float = math.inf,
) -> Program:
    """Like `lower`, for program text; coordinates name `filename`."""
    return _lower(text, filename, data_model, None, property_name, uninitialised, RECURSION_DEPTH, deadline)


def read_source(path: Path) -> str:
    try:
        with path.open("rb") as f:
            data = f.read(MAX_SOURCE_BYTES + 1)
    except OSError as exc:
        raise InputError(None, f"{path}: cannot read the file: {exc.strerror or exc}") from None
    if len(data) > MAX_SOURCE_BYTES:
        raise InputError(None, f"{path}: file too large (over {MAX_SOURCE_BYTES} bytes)")
    if b"\0" in data:
        raise InputError(None, f"{path}: not a C source file (binary data)")
    return data.decode("utf-8", errors="replace")


def _lower(
    text: str,
    filename: str,
    data_model: str,
    directory: Path | None,
    property_name: str,
    uninitialised: str,
    recursion_depth: int = RECURSION_DEPTH,
    deadline: float = math.inf,
) -> Program:
    if property_name not in READINGS:
        raise InputError(None, f"unknown property {property_name!r} (expected {' or '.join(READINGS)})")
    if uninitialised not in UNINITIALISED_READINGS:
        expected = " or ".join(UNINITIALISED_READINGS)
        raise InputError(None, f"uninitialised must be {expected}, got {uninitialised!r}")
    ast, coords = parse_source(text, filename, data_model, directory, deadline)
    try:
        program = Frontend(ast, coords, data_model, property_name, recursion_depth, deadline).program()
        return replace(program, uninitialised=uninitialised)
    except RecursionError:
        raise InputError(None, f"{filename}: program nested too deeply for the frontend") from None
    except (UnsupportedFeature, InputError):
        raise
    except (KeyError, ValueError, TypeError, AttributeError, AssertionError, IndexError) as exc:
        raise FrontendError(
            None, f"{filename}: internal frontend error: {type(exc).__name__}: {exc}"
        ) from None


def parse_source(
    text: str, filename: str, data_model: str, directory: Path | None, deadline: float = math.inf
) -> tuple[c_ast.FileAST, CoordMap]:
    """pycparser's AST of `text` after cpp, and the map back to its coordinates; the input checks
    of `lower` (data model, empty or too large input, parse errors as located InputErrors)."""
    if data_model not in DATA_MODELS:
        raise InputError(None, f"unknown data model {data_model!r} (expected ILP32 or LP64)")
    if not text.strip():
        raise InputError(None, f"{filename}: empty input")
    if len(text) > MAX_SOURCE_BYTES:
        raise InputError(None, f"{filename}: input too large")
    pre = preprocess(text, filename, data_model, directory, deadline)
    if len(pre.text) > MAX_PREPROCESSED_CHARS:
        raise InputError(None, f"{filename}: too large after preprocessing ({len(pre.text)} characters)")
    coords = CoordMap(pre)
    return parse(pre, coords, data_model, deadline), coords


def parse(
    pre: Preprocessed, coords: CoordMap, data_model: str = "LP64", deadline: float = math.inf
) -> c_ast.FileAST:
    """pycparser's AST of the preprocessed text; parse errors become located InputErrors.

    A text that does not parse is parsed again with typedefs of the standard names it uses but
    never typedefs (`size_t` in a preprocessed file without its headers: gcc's types for the data
    model); when that fails too, the later of the two errors is raised (the first, unless the
    typedefs got the parser past it). A text that parses is never changed.
    """
    try:
        return _parse(pre.text, pre, coords, deadline)
    except InputError as first:
        prelude = standard_typedefs(pre.text, data_model)
        if not prelude:
            raise
        try:
            return _parse(prelude + pre.text, pre, coords, deadline)
        except InputError as second:
            raise (second if _after(second.coord, first.coord) else first) from None


def _after(second: Coord | None, first: Coord | None) -> bool:
    """`second` is a later position of the same file: the typedefs fixed the first error."""
    if second is None or first is None or second.file != first.file:
        return False
    return (second.line, second.column) > (first.line, first.column)


def _parse(text: str, pre: Preprocessed, coords: CoordMap, deadline: float) -> c_ast.FileAST:
    parser = c_parser.CParser(lexer=_lexer_until(deadline))
    try:
        ast: c_ast.FileAST = parser.parse(text, pre.marker_name)
        return ast
    except RecursionError:
        raise InputError(None, f"{pre.filename}: program nested too deeply to parse") from None
    except OutOfTime:
        raise
    except Exception as exc:  # pycparser signals bad input with assorted exception types
        raw, detail = _error_location(str(exc), coords, _next_token(parser))
        if raw is not None:
            _reject_computed_goto(text, raw, coords)
        where = coords.coord(raw)
        raise InputError(where, f"{'' if where else f'{coords.filename}: '}parse error: {detail}") from None


def _lexer_until(deadline: float) -> type[c_lexer.CLexer]:
    """pycparser's lexer, raising OutOfTime("parsing") once `deadline` has passed (checked every
    `DEADLINE_TOKENS` tokens: the parser asks it for each one)."""

    class Lexer(c_lexer.CLexer):  # type: ignore[misc]  # pycparser is untyped for mypy here
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.count = 0

        def token(self) -> Any:
            self.count += 1
            if self.count % DEADLINE_TOKENS == 0:
                OutOfTime.check(deadline, "parsing")
            return super().token()

    return Lexer


def _next_token(parser: c_parser.CParser) -> Any:
    """The token pycparser stopped at (private API: None if it is not available)."""
    try:
        return parser._tokens.peek()
    except Exception:  # the error itself may have come from the token stream
        return None


def _error_location(message: str, coords: CoordMap, token: Any) -> tuple[Any, str]:
    """Where pycparser's error is (its raw coordinate, None if unknown) and what it says."""
    m = _PARSE_ERROR.match(message)
    if m is not None:
        raw = SimpleNamespace(file=m.group(1), line=int(m.group(2)), column=int(m.group(3) or 0))
        detail = m.group(4)
        return raw, f"syntax error {detail}" if detail.startswith("before:") else detail
    detail = message.removeprefix(f"{coords.marker_name}: ")
    if token is not None and getattr(token, "lineno", None):
        raw = SimpleNamespace(file=token.filename, line=token.lineno, column=token.column)
        return raw, f"{detail} before: {token.value}"
    return None, detail


def _reject_computed_goto(text: str, raw: Any, coords: CoordMap) -> None:
    """A parse error at or after a GNU computed goto (`goto *p`, `&&label`) is that feature."""
    for file, line, content in output_lines(text):
        if file != raw.file or line > raw.line:
            continue
        for m in _COMPUTED_GOTO.finditer(content):
            column = m.start(1) + 1 if m.group(1) else m.start(2) + 1
            if (line, column) <= (raw.line, raw.column):
                where = coords.coord(SimpleNamespace(file=file, line=line, column=column))
                raise UnsupportedFeature(where, "computed goto", "GNU labels as values")


def walk_ast(root: Any) -> Iterator[Any]:
    """`root` and every node below it, in source order (a stack: deep nesting is no recursion)."""
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(child for _, child in reversed(node.children()))


def _declared_names(node: Any) -> set[str]:
    """Names of the variables declared anywhere inside `node`."""
    return {
        n.name
        for n in walk_ast(node)
        if isinstance(n, c_ast.Decl) and n.name and not isinstance(n.type, c_ast.FuncDecl)
    }


def _used_names(block: list[Stmt]) -> set[str]:
    """Every variable the statements read or write."""
    used: set[str] = set()
    for s in walk_stmts(tuple(block)):
        if isinstance(s, (Assign, Havoc)):
            used.add(s.target)
        if isinstance(s, Assign):
            used |= free_vars(s.value)
        elif isinstance(s, (Assume, Assert, If)):
            used |= free_vars(s.cond)
    return used


def _check_control_flow(program: Program, entries: list[tuple[Coord | None, str]]) -> None:
    """Reject the gotos `cfg.build_cfg` cannot make a graph of (located at a goto into a loop
    where the graph does not say where)."""
    try:
        build_cfg(program)
    except UnsupportedFeature as exc:
        if exc.coord is not None or not entries:
            raise
        coord, detail = entries[0]
        raise UnsupportedFeature(coord, "goto into a loop", detail) from None


class Frontend:
    """One lowering run over a parsed translation unit."""

    def __init__(
        self,
        ast: c_ast.FileAST,
        coords: CoordMap,
        data_model: str,
        property_name: str = ASSERT,
        recursion_depth: int = RECURSION_DEPTH,
        deadline: float = math.inf,
    ) -> None:
        self.ast = ast
        self.st = LowerState(CTypes(data_model), coords, property_name=property_name)
        self.st.recursion_depth = recursion_depth
        self.st.deadline = deadline
        self.functions: dict[str, c_ast.FuncDef] = {}
        self.prototypes: dict[str, Any] = {}
        self.lw = StmtLowerer(self.st, self.functions, self.prototypes)
        self.globals: list[tuple[Var, list[c_ast.Decl]]] = []
        self.externs: set[str] = set()  # globals only declared `extern` (e.g. from system headers)

    def program(self) -> Program:
        for node in self.ast.ext:
            self.external(node)
        main = self.functions.get("main")
        if main is None:
            raise FrontendError(None, f"{self.st.coords.filename}: no main function")
        file_scope = {n.name for n in self.ast.ext if isinstance(n, c_ast.Decl) and n.name}
        for function in self.functions.values():
            OutOfTime.check(self.st.deadline, "lowering")
            drop_dead_pointer_stores(function, file_scope)
        init = self.global_inits()
        body = self.lower_main(main)
        st = self.st
        OutOfTime.check(st.deadline, "lowering")
        unused = self.externs - _used_names(body)
        init = [s for s in init if not (isinstance(s, Havoc) and s.target in unused)]
        scope = Scope("main", (*init, *st.init, *body), st.coord(main))
        loops = [replace(i, scope=tuple(p for p in i.scope if p[1] not in unused)) for i in st.loops]
        program = Program(
            file=st.coords.filename,
            data_model=st.ct.data_model,
            variables=tuple(v for v in st.variables if v.name not in unused),
            body=(scope,),
            loops=tuple(loops),
            overflow_sites=tuple(st.overflow),
            property_name=st.property_name,
            cut_calls=tuple(st.cut_calls),
        )
        if st.has_goto:
            _check_control_flow(program, st.loop_entries)
            OutOfTime.check(st.deadline, "lowering")
        return with_overflow_checks(program) if st.property_name == NO_OVERFLOW else program

    def external(self, node: Any) -> None:
        if isinstance(node, c_ast.FuncDef):
            name = node.decl.name
            if name in self.functions:
                raise FrontendError(self.st.coord(node), f"function '{name}' defined twice")
            self.functions[name] = node
            self.prototypes.pop(name, None)
        elif isinstance(node, c_ast.Decl) and isinstance(node.type, c_ast.FuncDecl):
            if node.name not in self.functions:
                old = self.prototypes.get(node.name)
                if old is None or node.type.args is not None or old.args is None:
                    self.prototypes[node.name] = node.type
        elif isinstance(node, c_ast.Decl):
            self.global_decl(node)
        elif isinstance(node, c_ast.Typedef):
            self.lw.typedef(node)

    def global_decl(self, node: c_ast.Decl) -> None:
        st = self.st
        if node.name is None:
            with contextlib.suppress(UnsupportedFeature):
                self.lw.types.resolve(node.type)  # defines enumeration constants
            return
        existing = st.scopes.frames[0].names.get(node.name)
        if isinstance(existing, VarBinding):
            for var, decls in self.globals:
                if var.name == existing.name:
                    decls.append(node)
            return
        try:
            ty = self.lw.complete(self.lw.types.resolve(node.type), node.init, node)
        except UnsupportedFeature as exc:
            st.scopes.define(node.name, PoisonBinding(exc))
            return
        if isinstance(ty, VlaType):
            raise FrontendError(st.coord(node), f"variable-length array '{node.name}' at file scope")
        if isinstance(ty, BlockType):
            var = self.lw.declare_block(node.name, ty, "global", st.coord(node))
        else:
            var = self.lw.declare_var(node.name, ty, "global", st.coord(node))
        self.globals.append((var, [node]))

    def global_inits(self) -> list[Stmt]:
        out: list[Stmt] = []
        for var, decls in self.globals:
            with_init = [d for d in decls if d.init is not None]
            first = decls[0]
            coord = self.st.coord(with_init[-1] if with_init else first)
            if not with_init and all("extern" in (d.storage or []) for d in decls):
                out.append(Havoc(var.name, coord, "extern"))
                self.externs.add(var.name)
                continue
            try:
                out += self.lw.static_init(var, with_init[-1].init if with_init else None, coord)
            except UnsupportedFeature as exc:
                self.st.scopes.frames[0].names[first.name] = PoisonBinding(exc)
                self.st.variables = [v for v in self.st.variables if v.name != var.name]
        return out

    def lower_main(self, main: c_ast.FuncDef) -> list[Stmt]:
        st, lw = self.st, self.lw
        st.reserved = _declared_names(main.body)
        st.call_stack = ["main"]
        st.scopes = st.scopes.function_scope()
        st.site = st.coord(main)
        st.gotos = lw.goto_context(main)
        body: list[Stmt] = []
        args = main.decl.type.args
        for p in args.params if args else []:
            self.main_param(p, body)
        lw.ret_stack.append((None, INT))
        body += lw.stmts(list(main.body.block_items or []))
        return body

    def main_param(self, p: Any, body: list[Stmt]) -> None:
        if not isinstance(p, c_ast.Decl) or p.name is None:
            return
        try:
            ty = self.lw.types.resolve(p.type)
        except UnsupportedFeature as exc:
            self.st.scopes.define(p.name, PoisonBinding(exc))
            return
        if isinstance(ty, IntType):
            var = self.st.declare(p.name, ty, "param", self.st.coord(p))
            self.st.scopes.define(p.name, VarBinding(var.name, ty))
            body.append(Havoc(var.name, self.st.coord(p), "main parameter"))
