"""What a run checks: SV-COMP property files by name, and the two readings of "an error" Quokka checks.

* `unreach-call` (SV-COMP's `CHECK( init(main()), LTL(G ! call(reach_error())) )`): the error is a
  call of `reach_error()`, whatever its body; a failing C `assert()` (glibc's `__assert_fail`)
  aborts the program, and the path ends there as at `abort()`.
* `unreach-call:__VERIFIER_error` (older SV-COMP tasks, `LTL(G ! call(__VERIFIER_error()))`): the
  same with `__VERIFIER_error()` as the error function (and `reach_error` an ordinary function).
* `assert` (the reading for a plain C file): `reach_error()` and a failing `assert()` are both
  errors (and `__VERIFIER_error()`, `__VERIFIER_assert(0)`).
* `no-overflow` (SV-COMP's `CHECK( init(main()), LTL(G ! overflow) )`): the error is a signed
  integer operation whose result its type cannot represent (`+ - * / %`, negation, `<<`). Calls
  of `reach_error()` and failing assertions are no errors: they run what they do (a failing
  `assert()` aborts). `nooverflow` turns each such operation into an assertion before it.

A task file names its properties; `decide` chooses what is checked: `unreach-call` when the task
lists it, else `no-overflow` when it lists that (the others are reported as not checked), else
nothing (UNKNOWN, "property not supported: NAME"). `--property` chooses another one the task
lists. This is the one place where that is decided (verify, batch, BenchExec).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

UNREACH_CALL = "unreach-call"
UNREACH_VERIFIER_ERROR = "unreach-call:__VERIFIER_error"  # older tasks: `G ! call(__VERIFIER_error())`
ASSERT = "assert"
NO_OVERFLOW = "no-overflow"
# the values of `Options.property` and `--property`
READINGS = (UNREACH_CALL, ASSERT, NO_OVERFLOW, UNREACH_VERIFIER_ERROR)
# the SV-COMP properties Quokka verifies, preferred first
SUPPORTED = (UNREACH_CALL, UNREACH_VERIFIER_ERROR, NO_OVERFLOW)

# The formulas of SV-COMP's property files (sv-benchmarks `c/properties/`), without whitespace.
_FORMULAS = {
    "CHECK(init(main()),LTL(G!call(reach_error())))": UNREACH_CALL,
    "CHECK(init(main()),LTL(G!call(__VERIFIER_error())))": UNREACH_VERIFIER_ERROR,
    "CHECK(init(main()),LTL(G!overflow))": NO_OVERFLOW,
    "CHECK(init(main()),LTL(Fend))": "termination",
    "CHECK(init(main()),LTL(Gvalid-free))CHECK(init(main()),LTL(Gvalid-deref))"
    "CHECK(init(main()),LTL(Gvalid-memtrack))": "valid-memsafety",
    "CHECK(init(main()),LTL(Gvalid-memcleanup))": "valid-memcleanup",
    "CHECK(init(main()),LTL(G!data-race))": "no-data-race",
    "CHECK(init(main()),LTL(Gdef-behavior))": "def-behavior",
    "COVER(init(main()),FQL(COVEREDGES(@DECISIONEDGE)))": "coverage-branches",
    "COVER(init(main()),FQL(COVEREDGES(@CONDITIONEDGE)))": "coverage-conditions",
    "COVER(init(main()),FQL(COVEREDGES(@CALL(reach_error))))": "coverage-error-call",
    "COVER(init(main()),FQL(COVEREDGES(@BASICBLOCKENTRY)))": "coverage-statements",
}


def identify(property_file: Path) -> str:
    """The property in `property_file`, as SV-COMP identifies it: by its formula; by the file's
    name when it cannot be read; `NAME (unrecognised formula)` for any other content."""
    try:
        text = property_file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return property_file.stem
    name = _FORMULAS.get("".join(text.split()))
    return name if name is not None else f"{property_file.stem} (unrecognised formula)"


def is_unreach_call(property_file: Path) -> bool:
    return identify(property_file) == UNREACH_CALL


@dataclass(frozen=True)
class PropertyChoice:
    """What a run checks (`checked`: a reading, or None when none of the task's properties is
    supported), the properties the task lists, and whether `--property` chose."""

    checked: str | None
    listed: tuple[str, ...] = ()
    overridden: bool = False

    @property
    def not_checked(self) -> tuple[str, ...]:
        return tuple(name for name in self.listed if name != self.checked)

    @property
    def reason(self) -> str:
        """Why nothing is checked ('' when something is)."""
        if self.checked is not None:
            return ""
        if not self.listed:
            return "the task names no property"
        return f"property not supported: {', '.join(self.listed)}"

    @property
    def note(self) -> str:
        """What the verdict is about, when the task lists more than that ('' otherwise)."""
        if self.checked is None or not self.not_checked:
            return ""
        given = " (--property)" if self.overridden else ""
        return f"checked {self.checked}{given} only; not checked: {', '.join(self.not_checked)}"

    def to_json(self) -> dict[str, object]:
        return {"property": self.checked, "not_checked": list(self.not_checked)}


def decide(listed: Sequence[str] | None, override: str | None = None) -> PropertyChoice:
    """What is checked: `override` (`--property`) when given, else for a task (`listed`: its
    properties) the first of `SUPPORTED` among them, else nothing; `assert` for a plain C file
    (`listed` None)."""
    names = tuple(listed or ())
    if override is not None:
        return PropertyChoice(override, names, overridden=True)
    if listed is None:
        return PropertyChoice(ASSERT)
    return PropertyChoice(next((p for p in SUPPORTED if p in names), None), names)
