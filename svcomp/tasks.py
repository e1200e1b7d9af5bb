"""SV-COMP verification tasks: task-definition YAML 2.0, directories, `tasks.csv`, bare C files.

A *task* is one program with the one property Quokka checks on it: `unreach-call`
(`reach_error()` is never called) or `no-overflow` (no signed integer overflow). Everything
`load_tasks` is given ends up in one of three lists: tasks to verify, tasks skipped and problems
(a task file that cannot be read, with its path and the reason). A problem never stops the
loading. Task files are read by `quokka.verifier.task`.

Which property a task file gives: by default the one `quokka verify` would check, chosen by
`quokka.verifier.properties.decide` (`unreach-call` when the file lists it, else `no-overflow`);
a file listing neither is skipped with `quokka verify`'s reason, "property not supported: NAME".
Given a property (`quokka batch --property`), every task file listing it gives a task checking
it, and the others are skipped ("does not list the NAME property"). The expected verdict is the
task file's for that property; the `expected_verdict` column of a `tasks.csv` is the
`unreach-call` verdict, used (and checked against the task file) only for `unreach-call`
tasks. Bare C files are checked for the given property, else `unreach-call`.

A task's `key` (its identity in the results store) is its resolved task file for `unreach-call`
and `FILE#PROPERTY` for any other property, so that the results of both properties of one task
file can live in one store.

Task-definition format: https://gitlab.com/sosy-lab/benchmarking/task-definition-format
(version 2.0: `format_version`, `input_files`, `properties` of `property_file` and
`expected_verdict`, `options` with `language` and `data_model`).
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from quokka.verifier import task as task_files
from quokka.verifier.properties import SUPPORTED, UNREACH_CALL, decide

TASK_SUFFIXES = (".yml", ".yaml")
PROGRAM_SUFFIXES = (".c", ".i")
_CSV_BASE_COLUMNS = frozenset({"task", "file", "family", "expected_verdict"})
_OLD_STYLE = re.compile(r"_(true|false)-unreach-call")  # an old-style name's unreach-call verdict


@dataclass(frozen=True)
class Published:
    """A verdict and time another tool reported for a task (measured elsewhere, other hardware)."""

    tool: str
    verdict: str
    time_s: float | None


@dataclass(frozen=True)
class Task:
    """One program to verify against one property (`unreach-call` or `no-overflow`).

    `key` identifies the task in the results store (the resolved task file, `FILE#PROPERTY` for
    a property other than `unreach-call`); `name` is the short display name (`set/file`, with
    ` (PROPERTY)` after it for a property other than `unreach-call`). `expected` is the expected
    verdict of `property`, None when the task does not say.
    """

    key: str
    name: str
    program: Path
    expected: bool | None
    data_model: str | None
    family: str
    set_name: str
    language: str = "C"
    task_file: Path | None = None
    published: tuple[Published, ...] = ()

    @property
    def expected_text(self) -> str:
        return "" if self.expected is None else str(self.expected).lower()

    # after the methods: in the class body, this name hides the built-in `property` from here on
    property: str = UNREACH_CALL


@dataclass(frozen=True)
class FileNote:
    """A task file that is not run, and why; `str()` is `path: reason`."""

    path: Path
    reason: str

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"


class Skipped(FileNote):
    """A task for another verifier (language, property)."""


class Problem(FileNote):
    """A task file that could not be read."""


@dataclass(frozen=True)
class TaskSet:
    tasks: tuple[Task, ...] = ()
    skipped: tuple[Skipped, ...] = ()
    problems: tuple[Problem, ...] = ()

    def __add__(self, other: TaskSet) -> TaskSet:
        return TaskSet(
            self.tasks + other.tasks, self.skipped + other.skipped, self.problems + other.problems
        )


class TaskFileError(Exception):
    """A task file is malformed (internal to this module: it becomes a `Problem`)."""


@dataclass(frozen=True)
class _Context:
    """Where a task file was found: the set it belongs to and what `tasks.csv` adds."""

    set_name: str
    root: Path
    family: str | None = None
    published: tuple[Published, ...] = ()
    expected_csv: bool | None = None
    extra: Mapping[str, str] = field(default_factory=dict)


def load_tasks(paths: Iterable[Path], property_name: str | None = None) -> TaskSet:
    """Tasks from task files, directories, `tasks.csv` files and bare `.c`/`.i` files.

    `property_name` (one of `properties.SUPPORTED`) is the property every task checks; task files
    that do not list it are skipped. None: each task file's own choice (`properties.decide`).
    Duplicates (the same task reached twice) are kept once, in first-seen order.
    """
    if property_name is not None and property_name not in SUPPORTED:
        raise ValueError(f"property {property_name!r} is not one of {', '.join(SUPPORTED)}")
    total = TaskSet()
    csv_rows: dict[Path, dict[str, dict[str, str]]] = {}
    for path in paths:
        total = total + _load_one(Path(path), csv_rows, property_name)
    return _dedup(total)


def _dedup(tasks: TaskSet) -> TaskSet:
    seen: dict[str, Task] = {}
    for task in tasks.tasks:
        seen.setdefault(task.key, task)
    return TaskSet(tuple(seen.values()), tasks.skipped, tasks.problems)


def _load_one(
    path: Path, csv_rows: dict[Path, dict[str, dict[str, str]]], property_name: str | None
) -> TaskSet:
    if path.is_dir():
        return _load_dir(path, property_name)
    if not path.exists():
        return TaskSet(problems=(Problem(path, "no such file or directory"),))
    if path.name.endswith(".csv"):
        return _load_csv(path, property_name)
    ctx = _sibling_context(path, csv_rows)
    if path.suffix in TASK_SUFFIXES:
        return _load_task_file(path, ctx, property_name)
    if path.suffix in PROGRAM_SUFFIXES:
        return TaskSet(tasks=(_bare_program(path, ctx, property_name),))
    return TaskSet(problems=(Problem(path, "not a task file (.yml), tasks.csv, C file or directory"),))


def _load_dir(folder: Path, property_name: str | None) -> TaskSet:
    """`tasks.csv` when the folder has one, else its task files, else its C files (sorted)."""
    if (folder / "tasks.csv").is_file():
        return _load_csv(folder / "tasks.csv", property_name)
    ctx = _Context(set_name=folder.resolve().name, root=folder.resolve())
    task_files = sorted(p for p in folder.iterdir() if p.suffix in TASK_SUFFIXES and p.is_file())
    if task_files:
        total = TaskSet()
        for path in task_files:
            total = total + _load_task_file(path, ctx, property_name)
        return total
    programs = sorted(p for p in folder.iterdir() if p.suffix in PROGRAM_SUFFIXES and p.is_file())
    if not programs:
        return TaskSet(problems=(Problem(folder, "no tasks.csv, task files or C files in this folder"),))
    return TaskSet(tasks=tuple(_bare_program(p, ctx, property_name) for p in programs))


# ----------------------------------------------------------------------------- tasks.csv


def _sibling_context(path: Path, cache: dict[Path, dict[str, dict[str, str]]]) -> _Context:
    """The context of a task named on its own: its row of a `tasks.csv` beside it, if any."""
    root = path.resolve().parent
    if root not in cache:
        try:
            rows = _csv_rows(root / "tasks.csv") if (root / "tasks.csv").is_file() else []
        except (OSError, UnicodeDecodeError, csv.Error, TaskFileError):
            rows = []
        cache[root] = {row.get("task") or row.get("file") or "": row for row in rows}
    row = cache[root].get(path.name)
    if row is None:
        return _Context(set_name=root.name, root=root)
    try:
        expected = _csv_expected(row.get("expected_verdict", ""))
    except TaskFileError:
        expected = None
    return _Context(set_name=root.name, root=root, family=row.get("family") or None,
                    published=published_from_row(row), expected_csv=expected)


def _load_csv(path: Path, property_name: str | None) -> TaskSet:
    try:
        rows = _csv_rows(path)
    except (OSError, UnicodeDecodeError, csv.Error, TaskFileError) as exc:
        return TaskSet(problems=(Problem(path, f"cannot read tasks.csv: {exc}"),))
    root = path.resolve().parent
    total = TaskSet()
    for number, row in enumerate(rows, start=2):
        total = total + _csv_task(path, number, row, root, property_name)
    return total


def _csv_rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        if not reader.fieldnames or not {"task", "file"} & set(reader.fieldnames):
            raise TaskFileError("needs a 'task' or 'file' column")
        return [{k: (v or "").strip() for k, v in row.items() if k is not None} for row in reader]


def _csv_task(
    path: Path, number: int, row: Mapping[str, str], root: Path, property_name: str | None
) -> TaskSet:
    target = row.get("task") or row.get("file") or ""
    if not target:
        return TaskSet(problems=(Problem(path, f"line {number}: no task or file given"),))
    try:
        expected = _csv_expected(row.get("expected_verdict", ""))
    except TaskFileError as exc:
        return TaskSet(problems=(Problem(path, f"line {number}: {exc}"),))
    ctx = _Context(
        set_name=root.name,
        root=root,
        family=row.get("family") or None,
        published=published_from_row(row),
        expected_csv=expected,
    )
    task_path = root / target
    if not task_path.exists():
        return TaskSet(problems=(Problem(task_path, f"listed in {path} line {number}, but missing"),))
    if task_path.suffix in TASK_SUFFIXES:
        return _load_task_file(task_path, ctx, property_name)
    return TaskSet(tasks=(_bare_program(task_path, ctx, property_name),))


def _csv_expected(text: str) -> bool | None:
    lowered = text.strip().lower()
    if lowered in ("", "unknown", "none"):
        return None
    if lowered in ("true", "false"):
        return lowered == "true"
    raise TaskFileError(f"expected_verdict must be true or false, got {text!r}")


def published_from_row(row: Mapping[str, str]) -> tuple[Published, ...]:
    """Other tools' results in a `tasks.csv` row: columns `<tool>_verdict` and `<tool>_s`."""
    tools = {k.removesuffix("_s") for k in row if k.endswith("_s")}
    tools |= {k.removesuffix("_verdict") for k in row if k.endswith("_verdict")}
    tools -= {"expected"} | _CSV_BASE_COLUMNS
    return tuple(
        Published(tool, row.get(f"{tool}_verdict", ""), _float_or_none(row.get(f"{tool}_s", "")))
        for tool in sorted(tools)
    )


def _float_or_none(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


# ----------------------------------------------------------------------------- task files


def _load_task_file(path: Path, ctx: _Context, property_name: str | None) -> TaskSet:
    try:
        data = read_task_yaml(path)
        return _task_from_yaml(path, data, ctx, property_name)
    except TaskFileError as exc:
        return TaskSet(problems=(Problem(path, str(exc)),))
    except task_files.TaskFileError as exc:
        return TaskSet(problems=(Problem(path, exc.reason),))


def read_task_yaml(path: Path) -> dict[str, Any]:
    """The mapping of a task-definition file (format 2.0); raises `task_files.TaskFileError`
    when it cannot be read, `TaskFileError` when it is not a task definition."""
    data: dict[str, Any] = task_files.load_task_yaml(path)
    version = str(data.get("format_version", ""))
    if version != "2.0":
        raise TaskFileError(f"format_version must be '2.0', got {version or 'nothing'!r}")
    return data


def _task_from_yaml(
    path: Path, data: Mapping[str, Any], ctx: _Context, property_name: str | None
) -> TaskSet:
    program = _input_file(path, data.get("input_files"))
    options = data.get("options") or {}
    if not isinstance(options, dict):
        raise TaskFileError("options must be a mapping")
    language = str(options.get("language", "C"))
    if language != "C":
        return TaskSet(skipped=(Skipped(path, f"language {language} (only C is verified)"),))
    data_model = _data_model(options.get("data_model"))
    properties = task_files.task_properties(data, path)
    listed = [p.name for p in properties]
    if property_name is None:
        choice = decide(listed)
        if choice.checked is None:
            return TaskSet(skipped=(Skipped(path, choice.reason),))
        checked = choice.checked
    elif property_name in listed:
        checked = property_name
    else:
        return TaskSet(skipped=(Skipped(path, f"does not list the {property_name} property"),))
    expected = next(p.expected for p in properties if p.name == checked)
    if checked == UNREACH_CALL:  # the tasks.csv verdict is the unreach-call one
        if expected is None:
            expected = ctx.expected_csv
        if ctx.expected_csv is not None and expected != ctx.expected_csv:
            raise TaskFileError(f"expected verdict {expected} disagrees with tasks.csv ({ctx.expected_csv})")
    return TaskSet(tasks=(_make_task(path, program, expected, data_model, ctx, checked),))


def _make_task(
    task_file: Path, program: Path, expected: Any, data_model: str | None, ctx: _Context, checked: str
) -> Task:
    resolved = task_file.resolve()
    other = checked != UNREACH_CALL  # today's key and name for unreach-call, marked for the others
    return Task(
        key=f"{resolved}#{checked}" if other else str(resolved),
        name=f"{ctx.set_name}/{_relative(resolved, ctx.root)}" + (f" ({checked})" if other else ""),
        program=program,
        expected=expected if isinstance(expected, bool) else None,
        data_model=data_model,
        family=ctx.family or task_files.family_of(program),
        set_name=ctx.set_name,
        task_file=resolved if resolved.suffix in TASK_SUFFIXES else None,
        published=ctx.published,
        property=checked,
    )


def _relative(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return path.name


def _input_file(path: Path, value: Any) -> Path:
    files = [value] if isinstance(value, str) else value
    if not isinstance(files, list) or not files or not all(isinstance(f, str) for f in files):
        raise TaskFileError("input_files must be a file name or a non-empty list of them")
    if len(files) != 1:
        raise TaskFileError(f"{len(files)} input files (Quokka verifies single-file tasks)")
    name = str(files[0])
    if any(ch in name for ch in "*?["):
        raise TaskFileError(f"input file pattern {name!r} (patterns are not supported)")
    program = (path.parent / name).resolve()
    if not program.is_file():
        raise TaskFileError(f"input file {name} not found")
    return program


def _data_model(value: Any) -> str | None:
    if value is None:
        return None
    if value not in ("ILP32", "LP64"):
        raise TaskFileError(f"options.data_model must be ILP32 or LP64, got {value!r}")
    return str(value)


# ----------------------------------------------------------------------------- bare programs


def _bare_program(path: Path, ctx: _Context, property_name: str | None) -> Task:
    """A `.c`/`.i` file without a task file, checked for `property_name` (default `unreach-call`):
    the expected `unreach-call` verdict from tasks.csv or an old-style name, none for another."""
    checked = property_name or UNREACH_CALL
    expected = None
    if checked == UNREACH_CALL:
        expected = ctx.expected_csv
        match = _OLD_STYLE.search(path.name)
        if expected is None and match:
            expected = match.group(1) == "true"
    return _make_task(path, path.resolve(), expected, None, ctx, checked)

