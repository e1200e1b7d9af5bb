"""Aggregates over stored results (pure): per run, per family, and paired comparisons."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from quokka.verifier.infra.store import ResultRow, RunInfo

from . import scores

SPEEDUP_STEPS = (1.2, 2.0, 10.0)


@dataclass(frozen=True)
class Summary:
    """Counts, score and times of a group of results (a run, or one family of a run)."""

    run_id: int
    config: str
    group: str  # "" for the whole run, else the family
    tally: scores.Tally
    timeouts: int
    out_of_memory: int
    cpu_s: float  # all results
    cpu_correct_s: float  # correct results only
    wall_s: float


def summarize(
    rows: Iterable[ResultRow], runs: Sequence[RunInfo], *, by_family: bool = False
) -> list[Summary]:
    """One summary per run (and family, with `by_family`), in run order then family order."""
    groups: dict[tuple[int, str], list[ResultRow]] = {}
    for row in rows:
        groups.setdefault((row.run_id, row.family if by_family else ""), []).append(row)
    configs = {run.id: run.config for run in runs}
    return [
        _summary(run_id, configs.get(run_id, "?"), group, items)
        for (run_id, group), items in sorted(groups.items())
    ]


def _summary(run_id: int, config: str, group: str, rows: Sequence[ResultRow]) -> Summary:
    return Summary(
        run_id=run_id,
        config=config,
        group=group,
        tally=scores.tally((r.expected_bool, r.status) for r in rows),
        timeouts=sum(r.status == scores.TIMEOUT for r in rows),
        out_of_memory=sum(r.status == scores.OUT_OF_MEMORY for r in rows),
        cpu_s=round(sum(r.cpu_s for r in rows), 3),
        cpu_correct_s=round(sum(r.cpu_s for r in rows if r.category == "correct"), 3),
        wall_s=round(sum(r.wall_s for r in rows), 3),
    )


def solved_times(rows: Iterable[ResultRow], *, measure: str = "cpu") -> list[float]:
    """Sorted times of the correct results (the quantile/cactus plot of one configuration)."""
    return sorted(_time(r, measure) for r in rows if r.category == "correct")


def _time(row: ResultRow, measure: str) -> float:
    return row.wall_s if measure == "wall" else row.cpu_s


# ----------------------------------------------------------------------------- paired comparison


@dataclass(frozen=True)
class Paired:
    """Configuration B against configuration A on the tasks both ran."""

    a: Summary
    b: Summary
    common: int  # tasks with a result from both
    both_solved: int
    only_a: int
    only_b: int
    geomean_speedup: float | None  # time(A) / time(B) over tasks both solved
    at_least: tuple[tuple[float, int], ...]  # (step, tasks with speedup >= step)
    measure: str


def paired(rows_a: Sequence[ResultRow], rows_b: Sequence[ResultRow], a: Summary, b: Summary,
           *, measure: str = "cpu") -> Paired:
    by_task_a = {r.task: r for r in rows_a}
    by_task_b = {r.task: r for r in rows_b}
    common = sorted(set(by_task_a) & set(by_task_b))
    solved_a = {t for t in common if by_task_a[t].category == "correct"}
    solved_b = {t for t in common if by_task_b[t].category == "correct"}
    both = sorted(solved_a & solved_b)
    ratios = [_ratio(_time(by_task_a[t], measure), _time(by_task_b[t], measure)) for t in both]
    return Paired(
        a=a, b=b, common=len(common), both_solved=len(both), only_a=len(solved_a - solved_b),
        only_b=len(solved_b - solved_a), geomean_speedup=geometric_mean(ratios),
        at_least=tuple((step, sum(r >= step for r in ratios)) for step in SPEEDUP_STEPS), measure=measure,
    )


_FLOOR_S = 0.01  # times below the clock's resolution count as this much


def _ratio(time_a: float, time_b: float) -> float:
    return max(time_a, _FLOOR_S) / max(time_b, _FLOOR_S)


def geometric_mean(values: Sequence[float]) -> float | None:
    if not values:
        return None
    return math.exp(sum(math.log(v) for v in values) / len(values))


# ----------------------------------------------------------------------------- published results


@dataclass(frozen=True)
class PublishedSummary:
    """Another tool's published results on the same tasks (measured elsewhere)."""

    tool: str
    tasks: int
    solved: int
    wrong: int
    time_solved_s: float


def published(rows: Iterable[ResultRow]) -> list[PublishedSummary]:
    """Per tool in the rows' `published` data: verdicts against the expected ones, and time."""
    per_tool: dict[str, list[tuple[str, Mapping[str, object]]]] = {}
    for row in rows:
        for item in row.published or []:
            per_tool.setdefault(str(item.get("tool")), []).append((row.expected, item))
    return [_published(tool, items) for tool, items in sorted(per_tool.items())]


def _published(tool: str, items: Sequence[tuple[str, Mapping[str, object]]]) -> PublishedSummary:
    solved = wrong = 0
    time_solved = 0.0
    for expected, item in items:
        verdict = str(item.get("verdict", "")).lower()
        if verdict not in ("true", "false") or not expected:
            continue
        if verdict == expected:
            solved += 1
            seconds = item.get("time_s")
            time_solved += float(seconds) if isinstance(seconds, int | float) else 0.0
        else:
            wrong += 1
    return PublishedSummary(tool, len(items), solved, wrong, round(time_solved, 2))
