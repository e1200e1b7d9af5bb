"""SV-COMP task-definition files (`.yml`, format 2.0): the one reader of them.

`load_task_yaml` reads the mapping and `task_properties` its properties (identified by their
property files, `properties.identify`); `read_task` gives what `quokka verify`/`parse` need, and
`quokka.svcomp.tasks` builds its tasks from the same two functions.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from .errors import InputError
from .properties import PropertyChoice, decide, identify

DATA_MODELS = ("ILP32", "LP64")


class TaskFileError(InputError):
    """A task file that cannot be read or is malformed; `reason` is the message without the path."""

    def __init__(self, path: Path, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(None, f"{path}: {reason}")


@dataclass(frozen=True)
class TaskProperty:
    """One property of a task: its name (`properties.identify`) and expected verdict, if given."""

    name: str
    expected: bool | None


@dataclass(frozen=True)
class TaskSpec:
    """One task: `file` (resolved next to the .yml), `data_model` ("ILP32" | "LP64", LP64 when
    the task does not say), `properties` (every one it lists), `property` (the one Quokka checks:
    "unreach-call", or None when none is supported) and `expected` (its verdict, "true" |
    "false" | None)."""

    file: Path
    data_model: str
    expected: str | None
    property: str | None
    properties: tuple[TaskProperty, ...] = ()

    def choice(self, override: str | None = None) -> PropertyChoice:
        """What a run of this task checks (`override`: `--property`)."""
        return decide([p.name for p in self.properties], override)


def read_task(path: str | Path) -> TaskSpec:
    """Read an SV-COMP task `.yml`; raise InputError (`TaskFileError`) when it is unreadable or malformed."""
    p = Path(path)
    data = load_task_yaml(p)
    options = data.get("options") or {}
    data_model = str(options.get("data_model", "LP64")) if isinstance(options, dict) else "LP64"
    if data_model not in DATA_MODELS:
        raise TaskFileError(p, f"unknown data model {data_model!r}")
    properties = task_properties(data, p)
    checked = decide([t.name for t in properties]).checked
    verdict = next((t.expected for t in properties if t.name == checked), None)
    expected = None if verdict is None else str(verdict).lower()
    file = p.parent / _input_file(data.get("input_files"), p)
    return TaskSpec(file, data_model, expected, checked, properties)


def load_task_yaml(path: Path) -> dict[str, Any]:
    """The mapping of a task file (nothing checked beyond that: `read_task` and the batch loader do)."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise TaskFileError(path, f"cannot read the task file: {exc}") from None
    except yaml.YAMLError as exc:
        raise TaskFileError(path, f"not valid YAML: {' '.join(str(exc).split())}") from None
    if not isinstance(data, dict):
        raise TaskFileError(path, "a task definition must be a YAML mapping")
    return data


def task_properties(data: Mapping[str, Any], path: Path) -> tuple[TaskProperty, ...]:
    """The properties `data` (the task file at `path`) lists, each identified by its file."""
    value = data.get("properties")
    if value is None:
        return ()
    if not isinstance(value, list):
        raise TaskFileError(path, "properties must be a list")
    return tuple(_task_property(item, path) for item in value)


def _task_property(item: Any, path: Path) -> TaskProperty:
    if not isinstance(item, dict) or "property_file" not in item:
        raise TaskFileError(path, "each property needs a property_file")
    verdict = item.get("expected_verdict")
    if verdict is not None and not isinstance(verdict, bool):
        raise TaskFileError(path, f"expected_verdict must be true or false, got {verdict!r}")
    return TaskProperty(identify(path.parent / str(item["property_file"])), verdict)


def _input_file(value: Any, path: Path) -> str:
    files = [value] if isinstance(value, str) else value
    if not isinstance(files, list) or not files or not all(isinstance(f, str) for f in files):
        raise TaskFileError(path, "input_files must name a C file")
    if len(files) > 1:
        raise TaskFileError(path, "tasks with several input files are not supported")
    return str(files[0])


_VARIANT = re.compile(r"(_unwindbound\d+|_valuebound\d+|_(true|false)-unreach-call|-ll|_ll|_\d+)$")


def family_of(name: str | Path) -> str:
    """A program's family: its file-name stem without SV-COMP variant suffixes, as long as one is
    left to strip (`benchmark09_conjunctive_1.c` -> `benchmark09_conjunctive`,
    `cohencu-ll_valuebound5` -> `cohencu`, `loop_false-unreach-call.c` -> `loop`). A tasks.csv may
    name families more finely (`hard-ll`); where a set has one, its column wins."""
    stem = Path(name).name.split(".")[0]
    while True:
        shorter = _VARIANT.sub("", stem)
        if shorter == stem or not shorter:
            return stem
        stem = shorter
