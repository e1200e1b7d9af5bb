"""SV-COMP witnesses, format 2.0 (YAML): write them from a verify `Result`, read invariants back.

A correctness witness is one `invariant_set` entry whose `loop_invariant`s are the proven
conjuncts at each loop head (location: file name and SHA-256, line and column of the loop
keyword, the enclosing function; the invariant as a C expression). A violation witness is one
`violation_sequence` entry: a `function_return` waypoint (`\\result == v`) per nondet value of
the counterexample whose call can be located in the source, then the `target` waypoint at the
call of `reach_error()`.

Format: https://gitlab.com/sosy-lab/benchmarking/sv-witnesses (witness format 2.0).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import re
import uuid as uuidlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import yaml
from quokka.verifier.errors import QuokkaError
from quokka.verifier.ir.printer import join_conjuncts
from quokka.verifier.lexer import blank_comments, function_header
from quokka.verifier.properties import NO_OVERFLOW, UNREACH_VERIFIER_ERROR
from quokka.verifier.verdict.results import (
    FLOAT_INPUTS,
    Counterexample,
    InputValue,
    ProvenInvariant,
    Result,
    Verdict,
)

FORMAT_VERSION = "2.0"
SPECIFICATION = "CHECK( init(main()), LTL(G ! call(reach_error())) )"
OVERFLOW_SPECIFICATION = "CHECK( init(main()), LTL(G ! overflow) )"
VERIFIER_ERROR_SPECIFICATION = "CHECK( init(main()), LTL(G ! call(__VERIFIER_error())) )"
_LOOP_KEYWORD = re.compile(r"\b(while|for|do)\b")


class WitnessError(QuokkaError):  # type: ignore[misc]  # mypy cannot follow the editable install
    """A witness cannot be written or read."""


@dataclass(frozen=True)
class WitnessInvariant:
    """A loop invariant read from a correctness witness."""

    file_name: str
    line: int
    column: int
    function: str
    expr: str

    def argument(self) -> str:
        """The `quokka verify --invariant` value: `LINE:EXPR` (LINE: the loop keyword's line)."""
        return f"{self.line}:{self.expr}"


# ----------------------------------------------------------------------------- writing


def input_file_name(program: Path, task_file: Path | None = None) -> str:
    """The name a witness gives its program (`input_files`, each location's `file_name`), as
    SV-COMP's witnesses do: with a task file, the program relative to the task file's folder
    (the task's own `input_files` name); else the program as given (a relative path stays relative).
    """
    if task_file is None:
        return program.as_posix()
    return Path(os.path.relpath(program.absolute(), task_file.absolute().parent)).as_posix()


def correctness_witness(result: Result, program: Path, *, data_model: str, file_name: str | None = None,
                        configuration: str = "", creation_time: dt.datetime | None = None) -> dict[str, Any]:
    """The `invariant_set` entry for a TRUE result (its proven invariants, by loop head)."""
    if result.verdict is not Verdict.TRUE:
        raise WitnessError(f"a correctness witness needs a TRUE result, got {result.verdict.value}")

    def content(location: _Locator, source: bytes) -> list[dict[str, Any]]:
        found = _loop_invariants(result.invariants, source)
        return [_invariant_item(location, line, column, expr) for line, column, expr in found]

    meta = _Meta(program, file_name, data_model, configuration, creation_time, _specification(result))
    return _entry("invariant_set", meta, content)


def violation_witness(result: Result, program: Path, *, data_model: str, file_name: str | None = None,
                      configuration: str = "", creation_time: dt.datetime | None = None) -> dict[str, Any]:
    """The `violation_sequence` entry for a FALSE result (nondet values, then the target)."""
    cex = result.counterexample
    if result.verdict is not Verdict.FALSE or cex is None:
        raise WitnessError("a violation witness needs a FALSE result with a counterexample")

    def content(location: _Locator, source: bytes) -> list[dict[str, Any]]:
        segments = [_segment(w) for w in _input_waypoints(location, cex.inputs)]
        return [*segments, _segment(_target_waypoint(location, cex))]

    meta = _Meta(program, file_name, data_model, configuration, creation_time, _specification(result))
    return _entry("violation_sequence", meta, content)


def _specification(result: Result) -> str:
    """The property `result` is about, as SV-COMP's property files state it."""
    others = {NO_OVERFLOW: OVERFLOW_SPECIFICATION, UNREACH_VERIFIER_ERROR: VERIFIER_ERROR_SPECIFICATION}
    return others.get(str(result.extra.get("property")), SPECIFICATION)


@dataclass(frozen=True)
class _Meta:
    """What a witness entry says about its program and producer."""

    program: Path
    file_name: str | None
    data_model: str
    configuration: str
    creation_time: dt.datetime | None
    specification: str = SPECIFICATION


def _entry(
    kind: str, meta: _Meta, content_of: Callable[[_Locator, bytes], list[dict[str, Any]]]
) -> dict[str, Any]:
    """The entry of type `kind`, its content made by `content_of` from the program's source."""
    source = _read_source(meta.program)
    name = meta.file_name or input_file_name(meta.program)
    content = content_of(_Locator(name, source), source)
    metadata = _metadata(name, source, meta, content)
    return {"entry_type": kind, "metadata": metadata, "content": content}


def witness_for(result: Result, program: Path, *, data_model: str, **kwargs: Any) -> dict[str, Any] | None:
    """The witness entry that `result` backs, or None for an UNKNOWN result."""
    if result.verdict is Verdict.TRUE:
        return correctness_witness(result, program, data_model=data_model, **kwargs)
    if result.verdict is Verdict.FALSE and result.counterexample is not None:
        return violation_witness(result, program, data_model=data_model, **kwargs)
    return None


def write_witness(entries: Mapping[str, Any] | Sequence[Mapping[str, Any]], path: Path) -> None:
    """Write a witness file: a YAML list of entries (one entry is wrapped in a list)."""
    items = [dict(entries)] if isinstance(entries, Mapping) else [dict(e) for e in entries]
    text = yaml.safe_dump(items, sort_keys=False, allow_unicode=True, width=1000)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise WitnessError(f"{path}: cannot write the witness: {exc}") from exc


def _metadata(name: str, source: bytes, meta: _Meta, content: Any) -> dict[str, Any]:
    data_model, configuration = meta.data_model, meta.configuration
    if data_model not in ("ILP32", "LP64"):
        raise WitnessError(f"data model must be ILP32 or LP64, got {data_model!r}")
    digest = sha256_hex(source)
    producer: dict[str, str] = {"name": "Quokka", "version": _version()}
    if configuration:
        producer["configuration"] = configuration
    stamp = (meta.creation_time or dt.datetime.now(dt.UTC)).replace(microsecond=0)
    seed = f"{name}\0{digest}\0{data_model}\0{content!r}"
    return {
        "format_version": FORMAT_VERSION,
        "uuid": str(uuidlib.uuid5(uuidlib.NAMESPACE_URL, seed)),
        "creation_time": stamp.isoformat(),
        "producer": producer,
        "task": {
            "input_files": [name],
            "input_file_hashes": {name: digest},
            "specification": meta.specification,
            "data_model": data_model,
            "language": "C",
        },
    }


def _loop_invariants(
    invariants: Iterable[ProvenInvariant], source: bytes
) -> list[tuple[int, int, str]]:
    """(line, column, expr) per invariant. Loops sharing a location (copies of one loop inlined
    at several calls) get one invariant: the disjunction of their conjunctions."""
    by_loop: dict[str, list[str]] = {}
    where: dict[str, tuple[int, int]] = {}
    for inv in (i for i in invariants if not i.model_only and _is_c_expression(i.expr)):
        by_loop.setdefault(inv.loop, []).append(inv.expr)
        where[inv.loop] = (inv.line, inv.column or _loop_column(source, inv.line))
    by_place: dict[tuple[int, int], list[str]] = {}
    for loop, place in where.items():
        by_place.setdefault(place, []).append(loop)
    out: list[tuple[int, int, str]] = []
    for (line, column), loops in sorted(by_place.items()):
        if len(loops) == 1:
            out.extend((line, column, expr) for expr in by_loop[loops[0]])
        else:
            disjuncts = [join_conjuncts(by_loop[loop]) for loop in sorted(loops)]
            out.append((line, column, " || ".join(f"({d})" for d in disjuncts)))
    return out


def _is_c_expression(text: str) -> bool:
    """Whether a printed invariant is C (format 2.0 has no other): ACSL's quantifiers start with a
    backslash (`\\forall`), which no C expression without string literals contains."""
    return "\\" not in text


def _invariant_item(locator: _Locator, line: int, column: int, expr: str) -> dict[str, Any]:
    return {
        "invariant": {
            "type": "loop_invariant",
            "location": locator.at(line, column),
            "value": expr,
            "format": "c_expression",
        }
    }


def _input_waypoints(locator: _Locator, inputs: Sequence[InputValue]) -> list[dict[str, Any]]:
    """`function_return` waypoints for the nondet values, up to the first one we cannot place."""
    waypoints = []
    for value in inputs:
        if not value.origin.startswith("__VERIFIER_nondet_"):
            continue  # an uninitialised variable: no call to point at; the witness stays valid
        column = locator.call_end(value.line, value.origin)
        if column is None or value.origin in FLOAT_INPUTS:
            # a waypoint at a wrong call would make the witness wrong; fewer are fine (a float's
            # input is its IEEE encoding, which `\result == N` does not state)
            break
        waypoints.append({
            "type": "function_return",
            "action": "follow",
            "constraint": {"value": f"\\result == {value.value}", "format": "acsl_expression"},
            "location": locator.at(value.line, column),
        })
    return waypoints


def _target_waypoint(locator: _Locator, cex: Counterexample) -> dict[str, Any]:
    """The target: the call of `reach_error()` (on the error line, else the program's only call;
    else the error position the verifier reported, e.g. the call of an inlined assert helper)."""
    line, column = cex.error_line, cex.error_column
    on_line = locator.call_start(line, "reach_error")
    calls = locator.calls("reach_error")
    if on_line is not None:
        column = on_line
    elif len(calls) == 1:
        line, column = calls[0]
    return {"type": "target", "action": "follow", "location": locator.at(line, column or 1)}


def _segment(waypoint: dict[str, Any]) -> dict[str, Any]:
    return {"segment": [{"waypoint": waypoint}]}


# ----------------------------------------------------------------------------- source positions


class _Locator:
    """Locations in one source file: columns of calls, enclosing functions."""

    def __init__(self, name: str, source: bytes) -> None:
        self.name = name
        text = source.decode("utf-8", errors="replace")
        self.lines = text.splitlines()
        self.code_lines = blank_comments(text, literals=True, directives=True).splitlines()
        self.functions = function_ranges(text)

    def at(self, line: int, column: int) -> dict[str, Any]:
        return {"file_name": self.name, "line": line, "column": max(1, column),
                "function": self.function_at(line)}

    def function_at(self, line: int) -> str:
        for start, end, name in self.functions:
            if start <= line <= end:
                return name
        return "main"

    def call_end(self, line: int, function: str) -> int | None:
        """1-based column of the `)` closing the only call of `function` on `line`, else None."""
        calls = list(re.finditer(rf"\b{re.escape(function)}\s*\(\s*(void\s*)?\)", self._line(line)))
        return calls[0].end() if len(calls) == 1 else None

    def call_start(self, line: int, function: str) -> int | None:
        calls = list(re.finditer(rf"\b{re.escape(function)}\s*\(", self._line(line)))
        return calls[0].start() + 1 if len(calls) == 1 else None

    def calls(self, function: str) -> list[tuple[int, int]]:
        """(line, 1-based column) of every call of `function` (not its declarations)."""
        pattern = re.compile(rf"(?<![\w.>])(\w+\s+)?\b{re.escape(function)}\s*\(")
        found = []
        for number, text in enumerate(self.code_lines, start=1):
            for match in pattern.finditer(text):
                if match.group(1) is None or match.group(1).strip() == "return":
                    found.append((number, match.start(0) + 1 + len(match.group(1) or "")))
        return found

    def _line(self, line: int) -> str:
        return self.lines[line - 1] if 0 < line <= len(self.lines) else ""


def _loop_column(source: bytes, line: int) -> int:
    lines = source.decode("utf-8", errors="replace").splitlines()
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    found = list(_LOOP_KEYWORD.finditer(text))
    return found[0].start() + 1 if len(found) == 1 else 0


def function_ranges(text: str) -> list[tuple[int, int, str]]:
    """(first line, last line, name) of each function definition in C source `text`."""
    code = blank_comments(text, literals=True, directives=True)
    ranges: list[tuple[int, int, str]] = []
    depth, header_start, open_at, name = 0, 0, 0, ""
    for index, char in enumerate(code):
        if char == "{":
            if depth == 0:
                header = function_header(code, index, header_start)
                name = header.group(1) if header else ""
                open_at = index
            depth += 1
        elif char == "}" and depth > 0:
            depth -= 1
            if depth == 0:
                if name:
                    ranges.append((_line_of(code, open_at), _line_of(code, index), name))
                header_start = index + 1
        elif char == ";" and depth == 0:
            header_start = index + 1
    return ranges


def _line_of(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


# ----------------------------------------------------------------------------- reading


def read_witness(path: Path) -> list[dict[str, Any]]:
    """The entries of a witness file."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise WitnessError(f"{path}: cannot read the witness: {exc}") from exc
    if not isinstance(data, list) or not all(isinstance(e, dict) for e in data):
        raise WitnessError(f"{path}: a witness is a YAML list of entries")
    return data


def witness_invariants(path: Path, program: Path | None = None) -> tuple[WitnessInvariant, ...]:
    """The C-expression loop invariants of a correctness witness.

    With `program`, the witness must be for that file (its SHA-256 hash must match).
    """
    found: list[WitnessInvariant] = []
    for entry in read_witness(path):
        if entry.get("entry_type") != "invariant_set":
            continue
        if program is not None:
            _check_hash(path, entry, program)
        found.extend(_entry_invariants(path, entry))
    return tuple(found)


def _entry_invariants(path: Path, entry: Mapping[str, Any]) -> list[WitnessInvariant]:
    out = []
    for item in entry.get("content") or []:
        inv = item.get("invariant") if isinstance(item, dict) else None
        if not isinstance(inv, dict) or inv.get("type") != "loop_invariant":
            continue
        if inv.get("format") != "c_expression":
            continue
        loc = inv.get("location")
        if not isinstance(loc, dict) or not isinstance(loc.get("line"), int):
            raise WitnessError(f"{path}: a loop invariant without a location line")
        out.append(WitnessInvariant(
            str(loc.get("file_name", "")), loc["line"], int(loc.get("column", 0)),
            str(loc.get("function", "")), str(inv.get("value", "")),
        ))
    return out


def _check_hash(path: Path, entry: Mapping[str, Any], program: Path) -> None:
    hashes = ((entry.get("metadata") or {}).get("task") or {}).get("input_file_hashes") or {}
    digest = sha256_hex(_read_source(program))
    if hashes and digest not in hashes.values():
        raise WitnessError(f"{path}: the witness is for another version of {program} (SHA-256 differs)")


@dataclass(frozen=True)
class WitnessValue:
    """A `function_return` waypoint of a violation witness: the call at `line` returns `value`."""

    line: int
    value: int


_RESULT_IS = re.compile(r"\s*\\result\s*==\s*\(?\s*(-?(?:0[xX][0-9a-fA-F]+|\d+))[uUlL]*\s*\)?\s*")


def violation_waypoints(path: Path, program: Path | None = None) -> tuple[WitnessValue, ...] | None:
    """The nondet values a violation witness follows, in order (None: it has no violation
    sequence). A `function_return` constraint other than `\\result == N` is refused."""
    entries = [e for e in read_witness(path) if e.get("entry_type") == "violation_sequence"]
    if not entries:
        return None
    values: list[WitnessValue] = []
    for entry in entries[:1]:
        if program is not None:
            _check_hash(path, entry, program)
        for waypoint in _waypoints(entry):
            if waypoint.get("type") == "function_return":
                values.append(_return_value(path, waypoint))
    return tuple(values)


def _waypoints(entry: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    out: list[Mapping[str, Any]] = []
    for item in entry.get("content") or []:
        segment = item.get("segment") if isinstance(item, dict) else None
        for element in segment or []:
            waypoint = element.get("waypoint") if isinstance(element, dict) else None
            if isinstance(waypoint, dict):
                out.append(waypoint)
    return out


def _return_value(path: Path, waypoint: Mapping[str, Any]) -> WitnessValue:
    location = waypoint.get("location") or {}
    constraint = str((waypoint.get("constraint") or {}).get("value", ""))
    found = _RESULT_IS.fullmatch(constraint)
    if not isinstance(location, dict) or not isinstance(location.get("line"), int) or found is None:
        raise WitnessError(
            f"{path}: a function_return waypoint needs a line and '\\result == N', got {constraint!r}"
        )
    digits = found.group(1)
    return WitnessValue(location["line"], int(digits, 16 if "x" in digits.lower() else 10))


def invariant_arguments(invariants: Iterable[WitnessInvariant]) -> tuple[str, ...]:
    """`quokka verify` arguments that check `invariants`: `--invariant LINE:EXPR` each."""
    args: list[str] = []
    for inv in invariants:
        args += ["--invariant", inv.argument()]
    return tuple(args)


# ----------------------------------------------------------------------------- helpers


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _read_source(program: Path) -> bytes:
    try:
        return program.read_bytes()
    except OSError as exc:
        raise WitnessError(f"{program}: cannot read the program: {exc}") from exc


def _version() -> str:
    try:
        return version("quokka-verifier")
    except PackageNotFoundError:
        return "unknown"


def witness_file_name(task_name: str, verdict: str) -> str:
    """A file name for the witness of a task (`set/x.yml` -> `set__x.yml.correctness.yml`)."""
    kind = "correctness" if verdict == "true" else "violation"
    return re.sub(r"[^\w.-]", "_", task_name.replace("/", "__")) + f".{kind}.yml"
