"""Result categories and SV-COMP scores (pure functions).

The numbers are the SV-COMP scoring schema for verification tasks: a correct `true` gets +2,
a correct `false` +1, a wrong `false` (an alarm on a correct program) -16, a wrong `true`
(a missed bug) -32, everything else (unknown, timeout, out of memory, error) 0. Sources:
the SV-COMP rules, section "Evaluation by Scores and Runtime"
(https://sv-comp.sosy-lab.org/2024/rules.php, table "Scoring schema"), and BenchExec's
`benchexec/result.py` (`_SCORE_CORRECT_TRUE = 2`, `_SCORE_CORRECT_FALSE = 1`,
`_SCORE_WRONG_FALSE = -16`, `_SCORE_WRONG_TRUE = -32`).

SV-COMP also requires a validated witness for the full score of a correct answer; Quokka does
not run witness validators, so these are the scores of unvalidated answers (every TRUE comes
with a re-checked certificate and every FALSE with a replayed counterexample instead).

The categories follow BenchExec's: correct, wrong, unknown, error (timeouts, out of memory,
crashes) and missing (the task states no expected verdict).
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass

SCORE_CORRECT_TRUE = 2
SCORE_CORRECT_FALSE = 1
SCORE_WRONG_FALSE = -16
SCORE_WRONG_TRUE = -32
SCORE_OTHER = 0

TIMEOUT = "timeout"
OUT_OF_MEMORY = "out of memory"
ERROR_PREFIX = "error"


class Category(enum.Enum):
    CORRECT = "correct"
    WRONG = "wrong"
    UNKNOWN = "unknown"
    ERROR = "error"  # timeout, out of memory, crash: no answer at all
    MISSING = "missing"  # an answer, but the task does not say what is expected


def verdict_of(status: str) -> str:
    """The verdict ("true", "false" or "unknown") that a result status stands for."""
    return status if status in ("true", "false") else "unknown"


def categorize(expected: bool | None, status: str) -> Category:
    """The category of `status` ("true", "false", "unknown", "timeout", "error: ...", ...)."""
    if status not in ("true", "false", "unknown"):
        return Category.ERROR
    if status == "unknown":
        return Category.UNKNOWN
    if expected is None:
        return Category.MISSING
    return Category.CORRECT if (status == "true") == expected else Category.WRONG


def score(expected: bool | None, status: str) -> int:
    """The SV-COMP score of answering `status` on a task whose expected verdict is `expected`."""
    category = categorize(expected, status)
    if category is Category.CORRECT:
        return SCORE_CORRECT_TRUE if status == "true" else SCORE_CORRECT_FALSE
    if category is Category.WRONG:
        return SCORE_WRONG_TRUE if status == "true" else SCORE_WRONG_FALSE
    return SCORE_OTHER


def is_error_status(status: str) -> bool:
    return status in (TIMEOUT, OUT_OF_MEMORY) or status.startswith(ERROR_PREFIX)


def error_status(message: str) -> str:
    """The status of a run that crashed: `error: <message>` on one line."""
    return f"{ERROR_PREFIX}: {' '.join(message.split())}"


@dataclass(frozen=True)
class Tally:
    """Counts and score over a set of results."""

    total: int = 0
    correct_true: int = 0
    correct_false: int = 0
    wrong_true: int = 0
    wrong_false: int = 0
    unknown: int = 0
    error: int = 0
    missing: int = 0
    score: int = 0

    @property
    def correct(self) -> int:
        return self.correct_true + self.correct_false

    @property
    def wrong(self) -> int:
        return self.wrong_true + self.wrong_false

    @property
    def unsolved(self) -> int:
        """Tasks without a conclusive answer (unknown or error)."""
        return self.unknown + self.error


def tally(results: Iterable[tuple[bool | None, str]]) -> Tally:
    """A `Tally` of (expected, status) pairs."""
    counts = dict.fromkeys(
        ("correct_true", "correct_false", "wrong_true", "wrong_false", "unknown", "error", "missing"), 0
    )
    total = points = 0
    for expected, status in results:
        total += 1
        points += score(expected, status)
        counts[_bucket(categorize(expected, status), status)] += 1
    return Tally(total=total, score=points, **counts)


def _bucket(category: Category, status: str) -> str:
    if category in (Category.CORRECT, Category.WRONG):
        return f"{category.value}_{status}"
    return str(category.value)
