"""The one exception hierarchy of Quokka: every error Quokka raises derives from QuokkaError."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class Coord:
    """A position in the original source file (1-based line and column; 0 = unknown)."""

    file: str
    line: int
    column: int = 0

    def __str__(self) -> str:
        if self.column:
            return f"{self.file}:{self.line}:{self.column}"
        return f"{self.file}:{self.line}"


class QuokkaError(Exception):
    """Root of every error Quokka raises on purpose."""


class LocatedError(QuokkaError):
    """An error at a source position, rendered as `file:line:col: message`."""

    def __init__(self, coord: Coord | None, message: str) -> None:
        self.coord = coord
        self.message = message
        super().__init__(f"{coord}: {message}" if coord else message)


class InputError(LocatedError):
    """The input could not be read or is not a C program (parse error, bad bytes, missing file)."""


class FrontendError(InputError):
    """The C program is malformed for the frontend (type errors, undeclared names)."""


class UnsupportedFeature(LocatedError):
    """The program uses a C feature the IR cannot represent soundly (pointers, floats, ...)."""

    def __init__(self, coord: Coord | None, feature: str, detail: str = "") -> None:
        self.feature = feature
        super().__init__(coord, f"unsupported feature: {feature}" + (f" ({detail})" if detail else ""))


class OutOfTime(QuokkaError):
    """The budget ran out during `stage` ("preprocessing", "parsing", "lowering", ...), before
    any verdict: the run is UNKNOWN with the reason "timeout while <stage>"."""

    def __init__(self, stage: str) -> None:
        self.stage = stage
        super().__init__(f"timeout while {stage}")

    @staticmethod
    def check(deadline: float, stage: str) -> None:
        """Raise OutOfTime(`stage`) once `time.monotonic()` is past `deadline`."""
        if time.monotonic() > deadline:
            raise OutOfTime(stage)


class IRTypeError(LocatedError):
    """The IR violates its own typing rules (a bug in whoever built it)."""


class EngineError(QuokkaError):
    """A verification engine failed in a way that is not a verdict."""


class UnsupportedByEngine(EngineError):
    """The program has something this engine must not handle (floating point: only BMC may)."""


class ToolMissing(QuokkaError):
    """An external program Quokka needs (C preprocessor, compiler) is not installed."""


class MalformedRecord(QuokkaError):
    """Data read from outside (a JSON record, a database row) does not have the shape its reader wants."""


def decoded(build: Callable[[], T], what: str) -> T:
    """`build()`, which decodes a record read from outside.

    The one place where a KeyError, TypeError or ValueError is read as data of the wrong shape (a
    missing field, a string for a number, an unknown enum value) rather than as a bug: everything
    `build` calls must be a plain decoder of that record. Raises MalformedRecord naming `what`."""
    try:
        return build()
    except (KeyError, TypeError, ValueError) as exc:
        raise MalformedRecord(f"{what}: {type(exc).__name__} {exc}") from exc
