"""The per-task table of `quokka report --html`, after BenchExec's table-generator.

One row per task, the runs side by side (status, verdict, score, times, memory, witness and log
per run); a row whose status differs between runs has the class `differs`. A small inline
script sorts by a clicked column header and filters by text, category and differing status;
without the script the table is still complete. Every text from the store goes through
`html.escape`: a task name or a reason is data, never markup.
"""

from __future__ import annotations

import html
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from quokka.verifier.infra.store import ResultRow, RunInfo

CATEGORIES = ("correct", "wrong", "unknown", "error", "missing")
NOT_WRITTEN = "not written"


@dataclass(frozen=True)
class TaskLine:
    """One task: its results in run order (None where a run has no result for it)."""

    task: str
    name: str
    expected: str
    results: tuple[ResultRow | None, ...]

    @property
    def differs(self) -> bool:
        """Whether the runs disagree on the status (a missing result counts as a status)."""
        return len(self.results) > 1 and len({r.status if r else "" for r in self.results}) > 1

    @property
    def categories(self) -> tuple[str, ...]:
        return tuple(sorted({r.category for r in self.results if r is not None}))


def task_lines(runs: Sequence[RunInfo], rows: Iterable[ResultRow]) -> list[TaskLine]:
    """The tasks of `rows`, by name, each with one result slot per run of `runs`."""
    order = {run.id: index for index, run in enumerate(runs)}
    by_task: dict[str, list[ResultRow | None]] = {}
    names: dict[str, str] = {}
    for row in rows:
        if row.run_id in order:
            slots = by_task.setdefault(row.task, [None] * len(runs))
            slots[order[row.run_id]] = row
            names.setdefault(row.task, row.name)
    lines = [TaskLine(task, names[task], _expected(slots), tuple(slots)) for task, slots in by_task.items()]
    return sorted(lines, key=lambda line: (natural_key(line.name), line.task))


def natural_key(text: str) -> tuple[tuple[int, int | str], ...]:
    """A sort key that orders the numbers in `text` by value (`set/2.yml` before `set/10.yml`)."""
    return tuple((0, int(part)) if part.isdigit() else (1, part) for part in re.split(r"(\d+)", text) if part)


def _expected(results: Sequence[ResultRow | None]) -> str:
    return next((r.expected for r in results if r is not None and r.expected), "")


# ----------------------------------------------------------------------------- HTML


@dataclass(frozen=True)
class _Column:
    label: str
    numeric: bool = False


def _run_columns(with_memory: bool) -> tuple[_Column, ...]:
    columns = [_Column("status"), _Column("verdict"), _Column("score", True), _Column("CPU s", True),
               _Column("wall s", True)]
    if with_memory:
        columns.append(_Column("memory MB", True))
    columns.append(_Column("files"))
    return tuple(columns)


def tasks_html(runs: Sequence[RunInfo], rows: Sequence[ResultRow], *, link_base: Path | None = None) -> str:
    """The controls and the per-task table (links relative to `link_base`, the page's folder)."""
    lines = task_lines(runs, rows)
    columns = _run_columns(any(r.memory_mb for r in rows))
    body = "".join(_task_row(line, columns, link_base) for line in lines)
    table = (f"<table id='tasks' class='tasks'><thead>{_head(runs, columns)}</thead>"
             f"<tbody>{body}</tbody></table>")
    return _controls(len(runs) > 1, len(lines)) + _legend(len(runs) > 1) + table


def _controls(several_runs: bool, count: int) -> str:
    options = "".join(f"<option value='{c}'>{c}</option>" for c in CATEGORIES)
    differs = ("<label><input type='checkbox' id='diff-filter'> only tasks whose status differs</label>"
               if several_runs else "")
    return ("<div class='controls'><input type='search' id='task-filter' placeholder='filter tasks' "
            "aria-label='filter tasks by text'> <select id='cat-filter' aria-label='category'>"
            f"<option value=''>all categories</option>{options}</select> {differs} "
            f"<span id='task-count'>{count} tasks</span></div>")


def _legend(several_runs: bool) -> str:
    text = "Click a column header to sort."
    if several_runs:
        text += " Highlighted rows: the status differs between runs."
    return f"<p class='legend'>{text}</p>"


def _head(runs: Sequence[RunInfo], columns: Sequence[_Column]) -> str:
    top = [f"<th rowspan='2' class='l' data-col='{index}'>{label}</th>"
           for index, label in enumerate(("task", "expected"))]
    top += [f"<th colspan='{len(columns)}' class='run'>{_e(f'#{run.id} {run.config}')}</th>" for run in runs]
    second = []
    for index in range(len(runs)):
        for offset, column in enumerate(columns):
            col = 2 + index * len(columns) + offset
            css = "" if column.numeric else " class='l'"
            second.append(f"<th data-col='{col}'{css}>{_e(column.label)}</th>")
    return f"<tr>{''.join(top)}</tr><tr>{''.join(second)}</tr>"


def _task_row(line: TaskLine, columns: Sequence[_Column], link_base: Path | None) -> str:
    css = " class='differs'" if line.differs else ""
    cells = [_name_cell(line, link_base), _td(line.expected or "-", css="l")]
    for result in line.results:
        cells += _missing_cells(columns) if result is None else _result_cells(result, columns, link_base)
    return f"<tr{css} data-cats='{_e(' '.join(line.categories))}'>{''.join(cells)}</tr>"


def _name_cell(line: TaskLine, link_base: Path | None) -> str:
    href = _href(line.task, link_base)
    inner = _e(line.name) if href is None else f"<a href='{_e(href)}'>{_e(line.name)}</a>"
    return f"<td class='l' data-v='{_e(line.name)}' title='{_e(line.task)}'>{inner}</td>"


def _missing_cells(columns: Sequence[_Column]) -> list[str]:
    return [_td("", css="missing-result", value="") for _ in columns]


def _result_cells(row: ResultRow, columns: Sequence[_Column], link_base: Path | None) -> list[str]:
    category = f"cat-{row.category}"
    values = {
        "status": _td(row.status, css=f"l {category}", title=row.reason or row.stderr_tail),
        "verdict": _td(row.verdict, css=f"l {category}"),
        "score": _td(str(row.score), value=str(row.score)),
        "CPU s": _td(f"{row.cpu_s:.2f}", value=repr(row.cpu_s)),
        "wall s": _td(f"{row.wall_s:.2f}", value=repr(row.wall_s)),
        "memory MB": _td(f"{row.memory_mb:.1f}" if row.memory_mb else "", value=repr(row.memory_mb)),
    }
    return [values[c.label] if c.label in values else _files_cell(row, link_base) for c in columns]


def _files_cell(row: ResultRow, link_base: Path | None) -> str:
    parts = []
    if row.witness.startswith(NOT_WRITTEN):
        parts.append(f"<span class='note' title='{_e(row.witness)}'>no witness</span>")
    elif row.witness:
        href = _href(row.witness, link_base)
        parts.append(f"<a href='{_e(href or row.witness)}'>witness</a>")
    if row.stderr_tail:
        parts.append(f"<details><summary>log</summary><pre>{_e(row.stderr_tail)}</pre></details>")
    return f"<td class='l files'>{' '.join(parts)}</td>"


def _href(path: str, link_base: Path | None) -> str | None:
    """A link to the file `path`: relative to `link_base` when given (the page moves with its
    files), else a file: URI; None for what is not an absolute or relative file path."""
    if not path:
        return None
    target = Path(path)
    if link_base is not None:
        return quote(Path(os.path.relpath(target.absolute(), link_base.absolute())).as_posix())
    return target.absolute().as_uri()


def _td(text: str, *, css: str = "", value: str | None = None, title: str = "") -> str:
    attrs = ""
    if css:
        attrs += f" class='{_e(css)}'"
    if value is not None:
        attrs += f" data-v='{_e(value)}'"
    if title:
        attrs += f" title='{_e(title)}'"
    return f"<td{attrs}>{_e(text)}</td>"


def _e(text: str) -> str:
    return html.escape(text, quote=True)


TASKS_CSS = (
    ".controls{margin:.5em 0}.controls>*{margin-right:1em}.controls input[type=search]{width:20em}"
    ".legend{color:#555;font-size:90%}"
    "table.tasks th[data-col]{cursor:pointer;user-select:none}table.tasks th.run{text-align:center}"
    "table.tasks th[aria-sort=ascending]::after{content:' \\25B2'}"
    "table.tasks th[aria-sort=descending]::after{content:' \\25BC'}"
    "table.tasks tr.differs td{background:#fff1c1}table.tasks td.cat-correct{color:#070}"
    "table.tasks td.cat-wrong{color:#b00;font-weight:bold}table.tasks td.cat-unknown{color:#a15c00}"
    "table.tasks td.cat-error{color:#909}table.tasks td.cat-missing{color:#06c}"
    "table.tasks td.missing-result{background:#eee}table.tasks td.files details{display:inline}"
    "table.tasks pre{white-space:pre-wrap;max-width:60em;text-align:left}.note{color:#777}"
)

# Sorting (click a header; again to reverse) and filtering (text, category, differing rows).
TASKS_SCRIPT = """
(function () {
  var table = document.getElementById('tasks');
  if (!table) { return; }
  var body = table.tBodies[0];
  var rows = Array.prototype.slice.call(body.rows);
  var text = document.getElementById('task-filter');
  var category = document.getElementById('cat-filter');
  var differs = document.getElementById('diff-filter');
  var count = document.getElementById('task-count');
  function apply() {
    var query = text.value.toLowerCase(), wanted = category.value, only = differs && differs.checked;
    var shown = 0;
    rows.forEach(function (row) {
      var ok = (!query || row.textContent.toLowerCase().indexOf(query) >= 0)
        && (!wanted || (' ' + row.getAttribute('data-cats') + ' ').indexOf(' ' + wanted + ' ') >= 0)
        && (!only || row.classList.contains('differs'));
      row.style.display = ok ? '' : 'none';
      if (ok) { shown += 1; }
    });
    count.textContent = shown + ' of ' + rows.length + ' tasks';
  }
  function key(row, index) {
    var cell = row.cells[index];
    var value = cell.getAttribute('data-v');
    return value === null ? cell.textContent : value;
  }
  function compare(a, b) {
    var x = Number(a), y = Number(b);
    if (a !== '' && b !== '' && !isNaN(x) && !isNaN(y)) { return x - y; }
    if (a === '' || b === '') { return a === b ? 0 : (a === '' ? 1 : -1); }
    return a.localeCompare(b, undefined, {numeric: true});
  }
  function sortBy(header) {
    var index = Number(header.getAttribute('data-col'));
    var ascending = header.getAttribute('aria-sort') !== 'ascending';
    table.querySelectorAll('th[data-col]').forEach(function (h) { h.removeAttribute('aria-sort'); });
    header.setAttribute('aria-sort', ascending ? 'ascending' : 'descending');
    rows.sort(function (r, s) {
      var order = compare(key(r, index), key(s, index));
      return ascending ? order : -order;
    });
    rows.forEach(function (row) { body.appendChild(row); });
  }
  table.querySelectorAll('th[data-col]').forEach(function (header) {
    header.addEventListener('click', function () { sortBy(header); });
  });
  [text, category, differs].forEach(function (control) {
    if (control) {
      control.addEventListener('input', apply);
      control.addEventListener('change', apply);
    }
  });
  apply();
})();
"""
