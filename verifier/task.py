"""SV-COMP task-definition files (`.yml`, format 2.0): which C file, which data model, which verdict."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from .errors import InputError

UNREACH_CALL = "unreach-call"


@dataclass(frozen=True)
class TaskSpec:
    """One task: `file` (resolved next to the .yml), `data_model` ("ILP32" | "LP64"),
    `expected` ("true" | "false" | None) and `property` (the property file's stem, preferring
    "unreach-call"; None when the task lists no property)."""

    file: Path
    data_model: str
    expected: str | None
    property: str | None


def read_task(path: str | Path) -> TaskSpec:
    """Read an SV-COMP task `.yml`; raise InputError when it is unreadable or malformed."""
    p = Path(path)
    where = str(p)
    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(None, f"{where}: cannot read the task file: {exc}") from None
    except yaml.YAMLError as exc:
        raise InputError(None, f"{where}: not valid YAML: {' '.join(str(exc).split())}") from None
    if not isinstance(data, dict):
        raise InputError(None, f"{where}: a task file must be a YAML mapping")
    options = data.get("options") or {}
    data_model = str(options.get("data_model", "LP64")) if isinstance(options, dict) else "LP64"
    if data_model not in ("ILP32", "LP64"):
        raise InputError(None, f"{where}: unknown data model {data_model!r}")
    prop, expected = _property(data.get("properties"))
    return TaskSpec(p.parent / _input_file(data.get("input_files"), where), data_model, expected, prop)


def _input_file(value: Any, where: str) -> str:
    files = [value] if isinstance(value, str) else value
    if not isinstance(files, list) or not files or not all(isinstance(f, str) for f in files):
        raise InputError(None, f"{where}: input_files must name a C file")
    if len(files) > 1:
        raise InputError(None, f"{where}: tasks with several input files are not supported")
    return str(files[0])


def _property(value: Any) -> tuple[str | None, str | None]:
    """(property stem, expected verdict) of the unreach-call property, else of the first one."""
    if not isinstance(value, list):
        return None, None
    entries = [e for e in value if isinstance(e, dict) and "property_file" in e]
    if not entries:
        return None, None
    chosen = next((e for e in entries if Path(str(e["property_file"])).stem == UNREACH_CALL), entries[0])
    verdict = chosen.get("expected_verdict")
    expected = None if verdict is None else str(verdict).lower()
    return Path(str(chosen["property_file"])).stem, expected
