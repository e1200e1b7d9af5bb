"""Where training invariants come from; each SOURCE is recognised by its form.

- `*.jsonl`: one object per line, `file` (relative to the JSONL's folder), `after_line` (the loop
  keyword's line, `LoopInfo.insert_after_line`), `invariant` (a C expression), and optionally
  `context`: `[after_line, invariant]` pairs of the program's other loops (`Target.context`).
- `*.sqlite` / `*.db`: a results database of `quokka batch`, read through `quokka.verifier.infra.store`:
  of each result with verdict "true", `program` (path of the C file) and `invariants` (a list of
  objects with `line` = the loop keyword's line and `expr`).
- `*.yml` / `*.yaml` / `*.graphml` holding a correctness witness: its `loop_invariant`s, for the C
  file named in the witness (relative to the witness' folder when not absolute).
- `*.c` / `*.i`: ACSL `loop invariant` annotations of the program itself.
- a directory: every source of these kinds inside it (not recursive).

`assertion_targets` adds, for the programs the sources name, each program's own assertions at
each of its loops (`dataset build --assertions`).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from quokka.verifier.errors import InputError, MalformedRecord, QuokkaError, decoded
from quokka.verifier.frontend import find_acsl_invariants, find_assertions, lower
from quokka.verifier.infra.store import StoreError, reading
from quokka.verifier.task import read_task
from quokka.verifier.verdict.witnesses import WitnessError, witness_invariants

ASSERTION_ORIGIN = "assertion"
SOURCE_SUFFIXES = (".jsonl", ".sqlite", ".db", ".yml", ".yaml", ".c", ".i")


@dataclass(frozen=True)
class Target:
    """A candidate training target: invariant `invariant` inserted after line `after_line` of `file`.

    `line_kind` says how `after_line` locates the loop: "insert" (after this line) or "below" (the
    first loop below an ACSL annotation ending on this line). `context` holds the invariants of the
    program's other loops, `(after_line, invariant)`, that the target is checked together with: the
    parts of one certificate at nested loops are often inductive only together.
    """

    file: Path
    after_line: int
    invariant: str
    origin: str
    line_kind: str = "insert"
    context: tuple[tuple[int, str], ...] = ()


def data_model_of(c_file: Path) -> str:
    """The `options.data_model` of the SV-COMP task .yml beside `c_file` (same stem), else LP64."""
    for yml in (c_file.with_suffix(".yml"), c_file.with_suffix(".yaml")):
        if yml.is_file():
            try:
                return str(read_task(yml).data_model)
            except InputError:
                break
    return "LP64"


def assertion_targets(files: Iterable[Path]) -> Iterator[Target]:
    """Each distinct assertion condition of each file, at each of its loops: the re-check keeps
    those inductive there (an assertion inside a loop is often that loop's invariant). A file the
    frontend refuses gives none; its other targets are dropped with the reason by the re-check."""
    for file in dict.fromkeys(files):
        model = data_model_of(file)
        try:
            loops = lower(file, model).loops
            conditions = dict.fromkeys(a.condition for a in find_assertions(file, model))
        except QuokkaError:
            continue
        for cond in conditions:
            yield from (Target(file, info.insert_after_line, cond, ASSERTION_ORIGIN) for info in loops)


def read_source(path: Path) -> Iterator[Target]:
    """The targets of one SOURCE (see the module docstring); InputError for an unknown form."""
    if path.is_dir():
        for child in sorted(path.iterdir()):
            if child.suffix in SOURCE_SUFFIXES and not _is_task_yml(child):
                yield from read_source(child)
        return
    if not path.is_file():
        raise InputError(None, f"dataset source not found: {path}")
    reader = _READERS.get(path.suffix)
    if reader is None:
        raise InputError(None, f"{path}: unknown source kind (expected {', '.join(SOURCE_SUFFIXES)})")
    yield from reader(path)


def _is_task_yml(path: Path) -> bool:
    has_program = path.with_suffix(".c").exists() or path.with_suffix(".i").exists()
    return path.suffix in (".yml", ".yaml") and has_program


def read_jsonl(path: Path) -> Iterator[Target]:
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            target = functools.partial(_target, line, path, f"{path.name}:{n}")
            yield decoded(target, "not an invariant record")
        except MalformedRecord as exc:
            raise InputError(None, f"{path}:{n}: {exc}") from exc


def _target(line: str, path: Path, origin: str) -> Target:
    obj = json.loads(line)
    return Target(
        (path.parent / obj["file"]).resolve(),
        int(obj["after_line"]),
        str(obj["invariant"]),
        origin,
        context=tuple((int(line), str(inv)) for line, inv in obj.get("context", ())),
    )


def read_results_db(path: Path) -> Iterator[Target]:
    try:
        with reading(path) as store:
            rows = store.results()
    except StoreError as exc:
        raise InputError(None, f"{path}: not a results database of `quokka batch`: {exc}") from exc
    for row in rows:
        if row.verdict == "true" and row.invariants is not None:
            yield from targets_of_row(row.program, row.invariants, path.name)


def targets_of_row(program: str, invariants: Any, origin: str) -> Iterator[Target]:
    """The targets of one `results` row (its `invariants` column as JSON text or a parsed list):
    per loop, the conjunction of the certificate's invariants there (its parts are often
    inductive only together), then each of several parts on its own (kept if inductive alone);
    each with the certificate's other loops as its `context`."""
    items = json.loads(invariants) if isinstance(invariants, str) else invariants
    by_line: dict[int, list[str]] = {}
    for item in items or ():
        if isinstance(item, dict) and isinstance(item.get("line"), int) and item.get("expr"):
            by_line.setdefault(item["line"], []).append(str(item["expr"]))
    whole = {line: " && ".join(_conjunct(e) for e in exprs) for line, exprs in by_line.items()}
    for line, exprs in by_line.items():
        context = tuple((other, inv) for other, inv in whole.items() if other != line)
        yield Target(Path(program), line, whole[line], origin, context=context)
        if len(exprs) > 1:
            yield from (Target(Path(program), line, e, origin, context=context) for e in exprs)


def _conjunct(expr: str) -> str:
    """`expr` as an operand of `&&` (parenthesised unless it has no operator of lower precedence)."""
    return f"({expr})" if "||" in expr or "?" in expr else expr


def read_witness_file(path: Path) -> Iterator[Target]:
    try:
        found = witness_invariants(path)
    except WitnessError as exc:
        raise InputError(None, str(exc)) from exc
    for inv in found:
        c_file = Path(inv.file_name)
        if not c_file.is_absolute():
            c_file = (path.parent / c_file).resolve()
        if not c_file.is_file():  # SV-COMP names the program relative to its task, not the witness
            raise InputError(None, f"{path}: the witness's program {inv.file_name} is not beside it; "
                             "build from the results database of the run instead")  # fmt: skip
        yield Target(c_file, inv.line, inv.expr, path.name)


def read_acsl(path: Path) -> Iterator[Target]:
    text = path.read_text(encoding="utf-8", errors="replace")
    for line, expr in find_acsl_invariants(text):
        yield Target(path.resolve(), line, expr, path.name, line_kind="below")


_READERS = {
    ".jsonl": read_jsonl,
    ".sqlite": read_results_db,
    ".db": read_results_db,
    ".yml": read_witness_file,
    ".yaml": read_witness_file,
    ".graphml": read_witness_file,
    ".c": read_acsl,
    ".i": read_acsl,
}
