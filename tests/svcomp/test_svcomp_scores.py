"""Categories and SV-COMP scores."""

from __future__ import annotations

import pytest
from quokka.svcomp.scores import Category, categorize, error_status, score, tally, verdict_of


@pytest.mark.parametrize(
    ("expected", "status", "category", "points"),
    [
        (True, "true", Category.CORRECT, 2),
        (False, "false", Category.CORRECT, 1),
        (True, "false", Category.WRONG, -16),
        (False, "true", Category.WRONG, -32),
        (True, "unknown", Category.UNKNOWN, 0),
        (False, "timeout", Category.ERROR, 0),
        (True, "out of memory", Category.ERROR, 0),
        (True, "error: exit code 3", Category.ERROR, 0),
        (None, "true", Category.MISSING, 0),
        (None, "unknown", Category.UNKNOWN, 0),
    ],
)
def test_category_and_score(expected: bool | None, status: str, category: Category, points: int) -> None:
    assert categorize(expected, status) is category
    assert score(expected, status) == points


def test_verdict_of_error_statuses_is_unknown() -> None:
    assert [verdict_of(s) for s in ("true", "false", "timeout", "error: x")] == [
        "true", "false", "unknown", "unknown"]


def test_error_status_is_one_line() -> None:
    assert error_status("boom\n  at line 3") == "error: boom at line 3"


def test_tally_counts_and_sums() -> None:
    t = tally([(True, "true"), (False, "false"), (False, "true"), (True, "false"), (True, "unknown"),
               (True, "timeout"), (None, "false")])
    assert (t.total, t.correct, t.wrong, t.unknown, t.error, t.missing) == (7, 2, 2, 1, 1, 1)
    assert (t.wrong_true, t.wrong_false) == (1, 1)
    assert t.score == 2 + 1 - 32 - 16
