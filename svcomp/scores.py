"""Result categories and SV-COMP scores (pure functions), computed by BenchExec.

The category of an answer and its score come from BenchExec's `benchexec.result`
(`get_result_category` and `Property.compute_score`), which implements the SV-COMP scoring
schema (https://sv-comp.sosy-lab.org/2024/rules.php, "Evaluation by Scores and Runtime"): a
correct `true` gets +2, a correct `false` +1, a wrong `false` (an alarm on a correct program)
-16, a wrong `true` (a missed bug) -32, everything else (unknown, timeout, out of memory,
error) 0.

SV-COMP also requires a validated witness for the full score of a correct answer; Quokka does
not run witness validators, so these are the scores of unvalidated answers (every TRUE comes
with a re-checked certificate and every FALSE with a replayed counterexample instead).

The categories are BenchExec's: correct, wrong, unknown, error (timeouts, out of memory,
crashes) and missing (the task states no expected verdict).
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass

from benchexec import result as benchexec_result

# BenchExec scores every SV-COMP property alike, so unreach-call stands for no-overflow too.
SVCOMP_PROPERTY = benchexec_result.Property("unreach-call.prp", True, "unreach-call")

TIMEOUT = "timeout"
OUT_OF_MEMORY = "out of memory"
ERROR_PREFIX = "error"


class Category(enum.Enum):
    CORRECT = benchexec_result.CATEGORY_CORRECT
    WRONG = benchexec_result.CATEGORY_WRONG
    UNKNOWN = benchexec_result.CATEGORY_UNKNOWN
    ERROR = benchexec_result.CATEGORY_ERROR  # timeout, out of memory, crash: no answer at all
    MISSING = benchexec_result.CATEGORY_MISSING  # an answer, but the task does not say what is expected


def verdict_of(status: str) -> str:
    """The verdict ("true", "false" or "unknown") that a result status stands for."""
    return status if status in ("true", "false") else "unknown"


def _benchexec_result(status: str) -> str:
    """The BenchExec result for `status`: its verdict, else BenchExec's generic error result (so that
    no other status, such as `done` or `false(no-overflow)`, passes for a BenchExec verdict)."""
    verdicts = {
        "true": benchexec_result.RESULT_TRUE_PROP,
        "false": benchexec_result.RESULT_FALSE_PROP,
        "unknown": benchexec_result.RESULT_UNKNOWN,
    }
    return str(verdicts.get(status, benchexec_result.RESULT_ERROR))


def categorize(expected: bool | None, status: str) -> Category:
    """The category of `status` ("true", "false", "unknown", "timeout", "error: ...", ...)."""
    expected_results = {SVCOMP_PROPERTY.filename: benchexec_result.ExpectedResult(expected, None)}
    result = _benchexec_result(status)
    return Category(benchexec_result.get_result_category(expected_results, result, [SVCOMP_PROPERTY]))


def score(expected: bool | None, status: str) -> int:
    """The SV-COMP score of answering `status` on a task whose expected verdict is `expected`."""
    category = categorize(expected, status)
    return int(SVCOMP_PROPERTY.compute_score(category.value, _benchexec_result(status)))


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
