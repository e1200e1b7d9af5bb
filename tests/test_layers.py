"""The house rules of `../shared/DESIGN.md` (issue 21), read off the source: imports point down
the layers (verifier < invariants < svcomp, server), the solver, parser, YAML and sqlite libraries
stay in the modules that own them (sqlite: only the results store, `verifier/infra/store.py`), and no
two modules import each other, directly or around a cycle (imports under `if TYPE_CHECKING:` are
for the type checker only and do not count)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = {"verifier": "quokka.verifier", "invariants": "quokka.invariants", "svcomp": "quokka.svcomp",
            "server": "quokka.server"}  # fmt: skip
LAYER = {"quokka.verifier": 1, "quokka.invariants": 2, "quokka.svcomp": 3, "quokka.server": 3}
OWNERS = {  # library -> the modules and packages that may import it
    "z3": ("quokka.verifier",),
    "cvc5": ("quokka.verifier.verdict.doublecheck",),
    "pycparser": ("quokka.verifier.frontend",),
    "yaml": ("quokka.verifier",),
    "torch": ("quokka.invariants.llm", "quokka.invariants.train"),
    "transformers": ("quokka.invariants.llm", "quokka.invariants.train"),
    "sqlite3": ("quokka.verifier.infra.store",),  # the one results store (DESIGN.md)
    "sqlite_utils": ("quokka.verifier.infra.store",),
}
# Known exceptions, each with its reason; the list only shrinks.
EXCEPTIONS: set[tuple[str, str]] = set()


def _modules() -> dict[str, Path]:
    out = {}
    for folder, package in PACKAGES.items():
        for path in (ROOT / folder).rglob("*.py"):
            parts = path.relative_to(ROOT / folder).with_suffix("").parts
            out[".".join((package, *parts)).removesuffix(".__init__")] = path
    return out


def _runtime_imports(tree: ast.Module) -> Iterator[ast.Import | ast.ImportFrom]:
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            stack.extend(node.orelse)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def _imported(module: str, path: Path) -> set[str]:
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    names: set[str] = set()
    for node in _runtime_imports(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
            continue
        base = node.module or ""
        if node.level:
            parent = package.split(".")[: len(package.split(".")) - node.level + 1]
            base = ".".join([*parent, base] if base else parent)
        names |= {base} | {f"{base}.{a.name}" for a in node.names}
    return names


MODULES = _modules()
IMPORTS = {m: _imported(m, p) for m, p in MODULES.items()}


def _package(module: str) -> str:
    return ".".join(module.split(".")[:2])


def test_imports_point_down_the_layers() -> None:
    upward = [
        (m, d) for m, names in IMPORTS.items() for d in names & MODULES.keys()
        if LAYER[_package(d)] > LAYER[_package(m)]
        or (LAYER[_package(d)] == LAYER[_package(m)] == 3 and _package(d) != _package(m))
    ]  # fmt: skip
    assert upward == []


# Inside the verifier: the packages in the order of the data flow (`verifier/__init__.py`), and what
# each may import besides itself. "base" is the top level's errors, properties, task files, lexer and
# option parsing; the commands at the top level (`cli`, `cli_parse`) may import everything.
BASE = {"errors", "properties", "task", "lexer", "cli_args", "options"}
COMMANDS = {"cli", "cli_parse"}
ALLOWED: dict[str, set[str]] = {
    "base": set(),
    "ir": {"base"},
    "infra": {"base"},
    "cfg": {"base", "ir"},
    "frontend": {"base", "ir", "cfg"},
    "encode": {"base", "ir", "cfg"},
    "exec": {"base", "ir", "cfg"},
    "engines": {"base", "ir", "cfg", "encode", "exec", "infra"},
    # the gates re-lower a program whose recursion was cut, deeper, to confirm a deeper bug
    "verdict": {"base", "ir", "cfg", "frontend", "encode", "exec", "infra", "engines"},
}


def _verifier_group(module: str) -> str | None:
    parts = module.split(".")
    if parts[:2] != ["quokka", "verifier"] or len(parts) < 3:
        return None
    if parts[2] in ALLOWED:
        return parts[2]
    assert parts[2] in BASE | COMMANDS, f"{module}: a top-level module the layer table does not know"
    return "commands" if parts[2] in COMMANDS else "base"


def test_the_verifier_packages_import_only_what_lies_before_them() -> None:
    crossing = {
        (m, d) for m, names in IMPORTS.items() for d in names & MODULES.keys()
        if _verifier_group(m) not in (None, "commands") and _verifier_group(d) is not None
        and _verifier_group(d) != _verifier_group(m)
    }  # fmt: skip
    upward = sorted(c for c in crossing if _verifier_group(c[1]) not in ALLOWED[_verifier_group(c[0]) or ""])
    assert upward == []


def test_the_verifier_top_level_stays_small() -> None:
    top = [p for p in (ROOT / "verifier").glob("*.py")]
    assert len(top) <= 10, sorted(p.name for p in top)


def test_libraries_stay_with_the_layers_that_own_them() -> None:
    misplaced = sorted(
        (m, lib) for m, names in IMPORTS.items() for lib, owners in OWNERS.items()
        if any(_within(n, (lib,)) for n in names) and not _within(m, owners)
    )  # fmt: skip
    assert [x for x in misplaced if x not in EXCEPTIONS] == []
    assert set(misplaced) >= EXCEPTIONS, "an exception that no longer applies: remove it"


def _within(module: str, prefixes: tuple[str, ...]) -> bool:
    """`module` is one of `prefixes` or inside one (`a.b` is within `a`, `a.bc` is not)."""
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def test_no_import_cycles() -> None:
    graph = {m: sorted(names & MODULES.keys() - {m}) for m, names in IMPORTS.items()}
    cycles = [c for c in _components(graph) if len(c) > 1]
    assert cycles == []


def _components(graph: dict[str, list[str]]) -> list[list[str]]:
    """Strongly connected components (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            v, i = work.pop()
            if i == 0:
                index[v] = low[v] = len(index)
                stack.append(v)
            if i < len(graph[v]):
                work.append((v, i + 1))
                w = graph[v][i]
                if w not in index:
                    work.append((w, 0))
                elif w in stack:
                    low[v] = min(low[v], index[w])
                continue
            for w in graph[v]:
                if w in stack:
                    low[v] = min(low[v], low[w])
            if low[v] == index[v]:
                component = []
                while True:
                    w = stack.pop()
                    component.append(w)
                    if w == v:
                        break
                out.append(sorted(component))
    return out


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _components({"a": ["b"], "b": ["c"], "c": ["a"], "d": ["a"]}) == [["a", "b", "c"], ["d"]]
