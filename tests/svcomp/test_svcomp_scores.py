"""Categories and SV-COMP scores."""

from __future__ import annotations

import itertools

import pytest
from benchexec import result as benchexec_result
from quokka.svcomp.scores import SVCOMP_PROPERTY, Category, categorize, error_status, score, tally, verdict_of

C, W, U, E, M = Category.CORRECT, Category.WRONG, Category.UNKNOWN, Category.ERROR, Category.MISSING
# status -> (category, score) for the expected verdicts true, false and none, as the hand-written
# scoring gave them before BenchExec's took over: every status the project writes, and BenchExec's
# own spellings, which must not pass for verdicts (ERRORS: an error whatever the expected verdict).
ERRORS = ("timeout", "out of memory", "error", "error: exit code 3", "", "done",
          "TIMEOUT", "ERROR", "TRUE", "false(unreach-call)", "false(no-overflow)")
TABLE = {
    "true": ((C, 2), (W, -32), (M, 0)),
    "false": ((W, -16), (C, 1), (M, 0)),
    "unknown": ((U, 0), (U, 0), (U, 0)),
    **dict.fromkeys(ERRORS, ((E, 0), (E, 0), (E, 0))),
}
PAIRS = [
    (expected, status, *TABLE[status][column])
    for status in TABLE
    for column, expected in enumerate((True, False, None))
]


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


@pytest.mark.parametrize(("expected", "status", "category", "points"), PAIRS)
def test_every_expected_and_status_pair_keeps_its_category_and_score(
    expected: bool | None, status: str, category: Category, points: int
) -> None:
    assert categorize(expected, status) is category
    assert score(expected, status) == points


def test_error_statuses_are_errors_whatever_their_message() -> None:
    for message in ("boom\n  at line 3", "no verdict in the JSON output: None", "x" * 500):
        assert [categorize(e, error_status(message)) for e in (True, False, None)] == [E, E, E]
        assert [score(e, error_status(message)) for e in (True, False, None)] == [0, 0, 0]


def test_the_categories_are_benchexecs() -> None:
    assert {c.value for c in Category} == {
        benchexec_result.CATEGORY_CORRECT, benchexec_result.CATEGORY_WRONG, benchexec_result.CATEGORY_UNKNOWN,
        benchexec_result.CATEGORY_ERROR, benchexec_result.CATEGORY_MISSING}


def test_no_overflow_scores_as_unreach_call() -> None:
    overflow = benchexec_result.Property("no-overflow.prp", True, "no-overflow")
    for category, result in itertools.product([c.value for c in Category], ["true", "false"]):
        assert overflow.compute_score(category, result) == SVCOMP_PROPERTY.compute_score(category, result)
    for category in (U, E, M):
        assert overflow.compute_score(category.value, "unknown") == 0


def test_tally_of_the_whole_table_sums_the_pinned_scores() -> None:
    t = tally((expected, status) for expected, status, _, _ in PAIRS)
    assert t.score == sum(points for *_, points in PAIRS) == 2 + 1 - 32 - 16
    assert (t.total, t.correct, t.wrong, t.unknown, t.missing) == (len(PAIRS), 2, 2, 3, 2)
    assert t.error == len(PAIRS) - 9


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
