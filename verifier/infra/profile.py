"""Where a run's time goes: solver calls and checks, timed by kind, per strategy.

Every engine's `Budget` carries a `Recorder`; a solver call is timed with
`budget.recorder.timed("what")`. A strategy runs in a child process that may be killed in the
middle of a call (the slow ones are what a profile is for), so the child's recorder is sent to
the portfolio while it runs (`Recorder.snapshot`, with the call in progress) and once at the end.
The portfolio keeps the last snapshot of each strategy and times its own checks the same way;
`Result.profile` holds the rows, `quokka verify --profile` prints them (`report.print_profile`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass


@dataclass(frozen=True)
class Timing:
    """`count` calls of one kind (`what`) by `who`: `total_s` in all, the slowest `max_s`;
    `answers`: how often each answer came (sat, unsat, unknown, valid, ...). A call still running
    when the snapshot was taken is counted with the time it had run, answer "running"."""

    who: str
    what: str
    count: int
    total_s: float
    max_s: float
    answers: tuple[tuple[str, int], ...] = ()


class _Row:
    def __init__(self) -> None:
        self.count = 0
        self.total_s = 0.0
        self.max_s = 0.0
        self.answers: dict[str, int] = {}

    def add(self, seconds: float, answer: str) -> None:
        self.count += 1
        self.total_s += seconds
        self.max_s = max(self.max_s, seconds)
        self.answers[answer] = self.answers.get(answer, 0) + 1


class Call:
    """A call being timed; set `answer` before it ends."""

    def __init__(self, what: str) -> None:
        self.what = what
        self.started = time.monotonic()
        self.answer = "done"


class Recorder:
    """Accumulates the timings of one process's calls, by kind (thread-safe: a sender thread
    takes snapshots while a call runs)."""

    def __init__(self) -> None:
        self._rows: dict[str, _Row] = {}
        self._current: Call | None = None
        self._lock = threading.Lock()

    @contextmanager
    def timed(self, what: str) -> Iterator[Call]:
        call = Call(what)
        with self._lock:
            outer, self._current = self._current, call
        try:
            yield call
        finally:
            with self._lock:
                self._current = outer
                self._rows.setdefault(what, _Row()).add(time.monotonic() - call.started, call.answer)

    def snapshot(self, who: str) -> tuple[Timing, ...]:
        """The rows so far, the call in progress included, slowest kind first."""
        with self._lock:
            rows = {what: _copy(row) for what, row in self._rows.items()}
            current = self._current
        if current is not None:
            rows.setdefault(current.what, _Row()).add(time.monotonic() - current.started, "running")
        timings = [_timing(who, what, row) for what, row in rows.items()]
        return tuple(sorted(timings, key=lambda t: -t.total_s))


def _timing(who: str, what: str, row: _Row) -> Timing:
    answers = tuple(sorted(row.answers.items()))
    return Timing(who, what, row.count, round(row.total_s, 4), round(row.max_s, 4), answers)


def _copy(row: _Row) -> _Row:
    out = _Row()
    out.count, out.total_s, out.max_s, out.answers = row.count, row.total_s, row.max_s, dict(row.answers)
    return out
