"""Bugs surface (issue 39): outside the boundaries named here, no `except` catches the exceptions of
programming errors (TypeError, AttributeError, AssertionError), nor KeyError and IndexError together;
a plain `except KeyError:` around a dict lookup is fine. Read off the source, like `test_layers`."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUGS = {"TypeError", "AttributeError", "AssertionError"}
BOUNDARIES = {
    # the one decoder of records read from outside (JSON, database rows): a wrong shape is data
    ("verifier/errors.py", "decoded"),
}
# Known handlers still to be narrowed, each with what it guards; the list only shrinks.
KNOWN = {
    ("verifier/frontend/lower.py", "_lower"),  # internal frontend errors reported located
    ("verifier/engines/inductive.py", "prove_with"),  # claims naming what the encoding lacks
    ("invariants/evaluate.py", "holds_on"),  # candidates over floats or arrays on integer states
    ("invariants/dynamic.py", "_unless_initial"),  # the same, in the trace proposer
    ("invariants/dynamic.py", "_relations"),
    ("svcomp/evalmodel.py", "_refuted"),
}


def _handlers() -> set[tuple[str, str]]:
    found = set()
    for folder in ("verifier", "invariants", "svcomp", "server"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            tree = ast.parse(path.read_text())
            for function in ast.walk(tree):
                if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    found |= {(str(path.relative_to(ROOT)), function.name) for h in _own_handlers(function)
                              if _hides_bugs(h)}  # fmt: skip
    return found


def _own_handlers(function: ast.AST) -> list[ast.ExceptHandler]:
    return [n for n in ast.walk(function) if isinstance(n, ast.ExceptHandler)]


def _hides_bugs(handler: ast.ExceptHandler) -> bool:
    if handler.type is None:
        return True  # a bare except
    caught = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    names = {ast.unparse(e).rsplit(".", 1)[-1] for e in caught}
    return bool(names & BUGS) or {"KeyError", "IndexError"} <= names


def test_no_handler_hides_a_programming_error() -> None:
    assert _handlers() - BOUNDARIES - KNOWN == set()


def test_the_known_list_only_shrinks() -> None:
    assert _handlers() >= KNOWN, "a known handler that no longer hides errors: remove it from KNOWN"


def test_the_walk_finds_what_it_looks_for() -> None:
    tree = ast.parse("def f():\n    try:\n        g()\n    except (KeyError, TypeError):\n        pass\n")
    handler = next(n for n in ast.walk(tree) if isinstance(n, ast.ExceptHandler))
    assert _hides_bugs(handler)
    plain = ast.parse("try:\n    d[k]\nexcept KeyError:\n    pass\n")
    assert not _hides_bugs(next(n for n in ast.walk(plain) if isinstance(n, ast.ExceptHandler)))
