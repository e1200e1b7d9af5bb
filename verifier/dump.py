"""`--dump-dir`: the artefacts of every stage, for debugging a verification run by hand."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .encode import dump as dump_conditions
from .ir import Program
from .printer import format_program


def dump_program(program: Program, directory: Path) -> list[Path]:
    """Write the IR (`ir.c`), its loops (`loops.json`), the VCs and the CHC system (`smt/`)."""
    directory.mkdir(parents=True, exist_ok=True)
    ir_file = directory / "ir.c"
    ir_file.write_text(format_program(program), encoding="utf-8")
    loops_file = directory / "loops.json"
    loops = [
        {
            "id": info.id,
            "line": info.coord.line,
            "column": info.coord.column,
            "insert_after_line": info.insert_after_line,
            "scope": dict(info.scope),
        }
        for info in program.loops
    ]
    loops_file.write_text(json.dumps(loops, indent=2), encoding="utf-8")
    return [ir_file, loops_file, *dump_conditions(program, directory / "smt")]


def dump_json(directory: Path, name: str, payload: Any) -> Path:
    """Write one JSON artefact (the result, the proposals) into the dump folder."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(json.dumps(payload, indent=2, default=str), encoding="utf-8")
    return path
