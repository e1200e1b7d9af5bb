"""`quokka report`: tables, CSV, plots and a self-contained HTML page from a results store."""

from __future__ import annotations

import base64
import csv
import html
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from pathlib import Path

from quokka.verifier.infra.store import ResultRow, RunInfo, Store, StoreError

from .plots import ScatterPoint, cactus_plot, scatter_plot
from .report_tasks import TASKS_CSS, TASKS_SCRIPT, tasks_html
from .summary import Summary, solved_times, summarize

CSV_COLUMNS = (
    "run_id", "name", "family", "expected", "status", "category", "score", "cpu_s", "wall_s", "memory_mb",
    "reason", "decided_by", "started_at", "finished_at",
)


@dataclass(frozen=True)
class ReportData:
    runs: tuple[RunInfo, ...]
    rows: tuple[ResultRow, ...]
    per_run: tuple[Summary, ...]
    per_family: tuple[Summary, ...]

    def rows_of(self, run_id: int) -> list[ResultRow]:
        return [r for r in self.rows if r.run_id == run_id]

    def run(self, run_id: int) -> RunInfo:
        for run in self.runs:
            if run.id == run_id:
                return run
        raise StoreError(f"no run {run_id} in the store")


def load(store: Store, run_ids: Sequence[int] = ()) -> ReportData:
    """The runs `run_ids` (all runs when empty) with their results and summaries."""
    runs = store.runs(run_ids or None)
    missing = sorted(set(run_ids) - {r.id for r in runs})
    if missing:
        raise StoreError(f"{store.path}: no run(s) {', '.join(map(str, missing))}")
    rows = store.results([r.id for r in runs])
    return ReportData(
        runs=tuple(runs),
        rows=tuple(rows),
        per_run=tuple(summarize(rows, runs)),
        per_family=tuple(summarize(rows, runs, by_family=True)),
    )


def write_csv(rows: Sequence[ResultRow], path: Path) -> None:
    """One line per result (the columns of `CSV_COLUMNS`)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=CSV_COLUMNS, extrasaction="ignore")
        writer.writeheader()
        for row in rows:
            writer.writerow({f.name: getattr(row, f.name) for f in fields(row) if f.name in CSV_COLUMNS})


# ----------------------------------------------------------------------------- plots


def make_plots(data: ReportData, scatter: tuple[int, int] | None, measure: str = "cpu") -> dict[str, bytes]:
    """PNG plots by file name: always the cactus plot; the scatter when two runs are given."""
    label = "CPU" if measure == "cpu" else "wall"
    series = {_label(run): solved_times(data.rows_of(run.id), measure=measure) for run in data.runs}
    plots = {"cactus.png": cactus_plot(series, measure=label)}
    if scatter is not None:
        run_a, run_b = data.run(scatter[0]), data.run(scatter[1])
        points = scatter_points(data.rows_of(run_a.id), data.rows_of(run_b.id), measure)
        limit = max(_limit(run_a), _limit(run_b))
        plots["scatter.png"] = scatter_plot(points, label_a=_label(run_a), label_b=_label(run_b),
                                            limit=limit, measure=label)
    return plots


def scatter_points(
    rows_a: Sequence[ResultRow], rows_b: Sequence[ResultRow], measure: str
) -> list[ScatterPoint]:
    by_task = {r.task: r for r in rows_b}
    points = []
    for a in rows_a:
        b = by_task.get(a.task)
        if b is not None:
            points.append(ScatterPoint(_time(a, measure), _time(b, measure),
                                       a.category == "correct", b.category == "correct"))
    return points


def _time(row: ResultRow, measure: str) -> float:
    return row.wall_s if measure == "wall" else row.cpu_s


def _limit(run: RunInfo) -> float:
    value = run.limits.get("cpu_s") or run.limits.get("wall_s") or 1.0
    return float(value)


def _label(run: RunInfo) -> str:
    return f"#{run.id} {run.config}"


def write_plots(plots: Mapping[str, bytes], folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, png in plots.items():
        (folder / name).write_bytes(png)
        written.append(folder / name)
    return written


# ----------------------------------------------------------------------------- HTML


def render_html(data: ReportData, plots: Mapping[str, bytes], *, title: str = "Quokka results",
                link_base: Path | None = None) -> str:
    """A self-contained page (works offline): run table, family table, the per-task table (its
    links to task files and witnesses relative to `link_base`, the page's folder, when given),
    the plots embedded as data URIs."""
    parts = [
        f"<!doctype html><html><head><meta charset='utf-8'><title>{_e(title)}</title>",
        f"<style>{_CSS}{TASKS_CSS}</style></head><body><h1>{_e(title)}</h1>",
        "<h2>Runs</h2>", _runs_html(data.runs),
        "<h2>Results per run</h2>", _summary_html(data.per_run, group=False),
        "<h2>Results per family</h2>", _summary_html(data.per_family, group=True),
        "<h2>Results per task</h2>", tasks_html(data.runs, data.rows, link_base=link_base),
    ]
    for name, png in plots.items():
        encoded = base64.b64encode(png).decode("ascii")
        parts.append(f"<h2>{_e(name.removesuffix('.png'))}</h2><img alt='{_e(name)}' "
                     f"src='data:image/png;base64,{encoded}'>")
    parts.append(_score_note())
    parts.append(f"<script>{TASKS_SCRIPT}</script></body></html>")
    return "\n".join(parts)


_CSS = (
    "body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;margin-bottom:1.5em}"
    "td,th{border:1px solid #bbb;padding:3px 8px;text-align:right}td.l,th.l{text-align:left}"
    ".wrong{color:#b00;font-weight:bold}"
)

_SUMMARY_HEAD = (
    "run", "config", "tasks", "correct", "correct true", "correct false", "wrong", "wrong true",
    "wrong false", "unknown", "error", "timeout", "score", "CPU s", "CPU s correct",
)


def _summary_html(summaries: Sequence[Summary], *, group: bool) -> str:
    head = list(_SUMMARY_HEAD)
    if group:
        head.insert(2, "family")
    rows = []
    for s in summaries:
        t = s.tally
        cells = [s.run_id, s.config] + ([s.group] if group else []) + [
            t.total, t.correct, t.correct_true, t.correct_false, t.wrong, t.wrong_true, t.wrong_false,
            t.unknown, t.error, s.timeouts, t.score, f"{s.cpu_s:.1f}", f"{s.cpu_correct_s:.1f}"]
        css = " class='wrong'" if t.wrong else ""
        rows.append(f"<tr{css}>" + "".join(_td(c) for c in cells) + "</tr>")
    return _table(head, rows)


def _runs_html(runs: Sequence[RunInfo]) -> str:
    head = ["run", "config", "verify arguments", "limits", "tool", "machine", "started", "ended", "status"]
    rows = []
    for run in runs:
        machine = f"{run.machine.get('cpu', '')}, {run.machine.get('cores', '?')} cores"
        cells = [run.id, run.config, " ".join(run.verify_args), json.dumps(dict(run.limits)),
                 run.tool_version, machine, run.started_at, run.ended_at or "", run.status]
        rows.append("<tr>" + "".join(_td(c) for c in cells) + "</tr>")
    return _table(head, rows)


def _table(head: Sequence[str], rows: Sequence[str]) -> str:
    header = "".join(f"<th>{_e(h)}</th>" for h in head)
    return f"<table><tr>{header}</tr>{''.join(rows)}</table>"


def _td(value: object) -> str:
    text = str(value)
    numeric = text.replace(".", "", 1).lstrip("-").isdigit()
    return f"<td>{_e(text)}</td>" if numeric else f"<td class='l'>{_e(text)}</td>"


def _e(text: str) -> str:
    return html.escape(text, quote=True)


def _score_note() -> str:
    return ("<p>Scores: SV-COMP scoring schema (correct true +2, correct false +1, wrong false -16, "
            "wrong true -32, otherwise 0), unvalidated witnesses.</p>")
