"""Compiled fuzzing of a C text (`engines.fuzz` builds the program's own file with gcc)."""

from __future__ import annotations

from pathlib import Path

from quokka.verifier.engines import fuzz
from quokka.verifier.engines.base import Budget, EngineResult, Status
from quokka.verifier.frontend.lower import lower
from quokka.verifier.ir import Program


def fuzz_text(path: Path, text: str, prop: str, seconds: float = 20) -> tuple[Program, EngineResult]:
    """`text` written to `path`, lowered (LP64) for the property `prop`, and fuzzed for `seconds`."""
    path.write_text(text)
    program = lower(path, "LP64", prop)
    return program, fuzz.check(program, Budget.of(seconds))


def fuzzed_error(path: Path, text: str, prop: str) -> tuple[Program, tuple[int, ...]]:
    """`fuzz_text`, which must find the error: the program and the inputs that reach it."""
    program, found = fuzz_text(path, text, prop)
    assert found.status is Status.UNSAFE, found.reason
    assert found.inputs is not None
    return program, found.inputs
