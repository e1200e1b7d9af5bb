"""What `quokka batch`, `bench` and `report` show on the terminal: progress and tables (rich)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from quokka.verifier.infra.store import ResultRow, RunInfo
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from .summary import Paired, PublishedSummary, Summary

_STYLE = {"correct": "green", "wrong": "bold red", "unknown": "yellow", "error": "magenta", "missing": "cyan"}


class ProgressSink:
    """A progress bar with correct/wrong/unknown/error counts; a plain line per result when the
    console is not a terminal (logs, CI)."""

    def __init__(self, console: Console, *, enabled: bool = True) -> None:
        self.console = console
        self.enabled = enabled
        self.counts: Counter[str] = Counter()
        self._progress: Progress | None = None
        self._task_id = TaskID(0)
        self._done = 0
        self._total = 0
        self._configs: dict[int, str] = {}

    def start(self, runs: Sequence[RunInfo], total: int, done: Sequence[ResultRow]) -> None:
        self.counts.update(r.category for r in done)
        self._done, self._total = len(done), total
        self._configs = {run.id: run.config for run in runs} if len(runs) > 1 else {}
        if done and self.enabled:
            self.console.print(f"resuming: {len(done)} of {total} results already in the store")
        if self.enabled and self.console.is_terminal:
            self._progress = Progress(
                TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                TextColumn("{task.fields[counts]}"), TimeElapsedColumn(),
                console=self.console, auto_refresh=False, transient=False,
            )
            label = ", ".join(run.config for run in runs)
            self._task_id = self._progress.add_task(label, total=total, completed=len(done),
                                                    counts=self._counts_text())
            self._progress.start()

    def add(self, row: ResultRow) -> None:
        self.counts[row.category] += 1
        self._done += 1
        if self._progress is not None:
            self._progress.update(self._task_id, advance=1, counts=self._counts_text())
            self._progress.refresh()
        elif self.enabled:
            config = f" [{self._configs[row.run_id]}]" if row.run_id in self._configs else ""
            self.console.print(
                f"[{self._done}/{self._total}]{config} {row.name}: {row.status} ({row.category}, "
                f"{row.cpu_s:.1f} s CPU)", markup=False, highlight=False, soft_wrap=True,
            )

    def tick(self) -> None:
        if self._progress is not None:
            self._progress.refresh()

    def stop(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None

    def _counts_text(self) -> str:
        names = ("correct", "wrong", "unknown", "error")
        parts = [f"[{_STYLE[c]}]{c} {self.counts.get(c, 0)}[/]" for c in names]
        if self.counts.get("missing"):
            parts.append(f"[cyan]no expected verdict {self.counts['missing']}[/]")
        return "  ".join(parts)


def print_error(console: Console, message: str) -> None:
    """`error: MESSAGE` on one line (not wrapped at the console's width; MESSAGE is not markup)."""
    console.print(Text.assemble(("error:", "red"), " ", message), soft_wrap=True, highlight=False)


def print_table(console: Console, table: Table) -> None:
    """`table` as rich draws it on a terminal; elsewhere (a pipe, a file) as plain columns, each as
    wide as its widest cell, so that nothing is truncated to the 80 columns rich assumes."""
    if console.is_terminal:
        console.print(table)
    else:
        console.out(plain_table(table), highlight=False)


def plain_table(table: Table) -> str:
    """The title, header and rows of `table` as text: markup dropped, columns separated by two
    spaces, numbers right-aligned as in the table."""
    columns = [[_plain(column.header), *(_plain(cell) for cell in column.cells)] for column in table.columns]
    widths = [max(len(text) for text in column) for column in columns]
    lines = [_plain(table.title)] if table.title else []
    for index in range(len(columns[0]) if columns else 0):
        cells = [_pad(column[index], width, column_info.justify)
                 for column, width, column_info in zip(columns, widths, table.columns, strict=True)]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


def _plain(value: object) -> str:
    text = value.plain if isinstance(value, Text) else Text.from_markup(str(value)).plain
    return " ".join(text.split())


def _pad(text: str, width: int, justify: str) -> str:
    return text.rjust(width) if justify == "right" else text.ljust(width)


def summary_table(summaries: Iterable[Summary], *, title: str, group_label: str = "") -> Table:
    """Solved, wrong, unknown, errors, score and CPU time per run (or per run and family)."""
    table = Table(title=title)
    table.add_column("run", justify="right")
    table.add_column("config")
    if group_label:
        table.add_column(group_label)
    for name in ("tasks", "correct", "(true/false)", "wrong", "(true/false)", "unknown", "error", "score",
                 "CPU s", "CPU s correct"):
        table.add_column(name, justify="right")
    for s in summaries:
        t = s.tally
        cells = [str(s.run_id), s.config] + ([s.group] if group_label else [])
        cells += [str(t.total), f"[green]{t.correct}[/]", f"{t.correct_true}/{t.correct_false}",
                  _wrong(t.wrong), f"{t.wrong_true}/{t.wrong_false}", str(t.unknown),
                  _errors(s), str(t.score), f"{s.cpu_s:.1f}", f"{s.cpu_correct_s:.1f}"]
        table.add_row(*cells)
    return table


def _wrong(count: int) -> str:
    return f"[bold red]{count}[/]" if count else "0"


def _errors(s: Summary) -> str:
    details = []
    if s.timeouts:
        details.append(f"{s.timeouts} timeout")
    if s.out_of_memory:
        details.append(f"{s.out_of_memory} OOM")
    return f"{s.tally.error}" + (f" ({', '.join(details)})" if details else "")


def paired_table(pair: Paired, published: Sequence[PublishedSummary]) -> Table:
    """Solved and wrong per configuration, with other tools' published results beside them."""
    table = Table(title=f"{pair.b.config} against {pair.a.config} ({pair.common} tasks)")
    table.add_column("")
    table.add_column(pair.a.config, justify="right")
    table.add_column(pair.b.config, justify="right")
    for tool in published:
        table.add_column(f"{tool.tool}\n(published, measured elsewhere)", justify="right", style="dim")
    rows: list[tuple[str, list[object], list[object]]] = [
        ("solved", [pair.a.tally.correct, pair.b.tally.correct], [p.solved for p in published]),
        ("wrong", [pair.a.tally.wrong, pair.b.tally.wrong], [p.wrong for p in published]),
        ("unknown / error", [pair.a.tally.unsolved, pair.b.tally.unsolved], ["" for _ in published]),
        ("score", [pair.a.tally.score, pair.b.tally.score], ["" for _ in published]),
        ("CPU time of solved (s)", [f"{pair.a.cpu_correct_s:.1f}", f"{pair.b.cpu_correct_s:.1f}"],
         [f"{p.time_solved_s:.1f}" for p in published]),
    ]
    for label, ours, theirs in rows:
        table.add_row(label, *(str(v) for v in ours), *(str(v) for v in theirs))
    return table


def speedup_table(pair: Paired) -> Table:
    """The paired speed-up of B over A on the tasks both solved."""
    table = Table(title=f"speed-up of {pair.b.config} over {pair.a.config} ({pair.measure} time)")
    table.add_column("tasks solved by both", justify="right")
    table.add_column("only " + pair.a.config, justify="right")
    table.add_column("only " + pair.b.config, justify="right")
    table.add_column("geometric mean", justify="right")
    for step, _ in pair.at_least:
        table.add_column(f">= {step:g}x", justify="right")
    mean = "-" if pair.geomean_speedup is None else f"{pair.geomean_speedup:.2f}x"
    table.add_row(str(pair.both_solved), str(pair.only_a), str(pair.only_b), mean,
                  *(str(count) for _, count in pair.at_least))
    return table


def problems_table(problems: Sequence[str], skipped: Sequence[str]) -> Table | None:
    if not problems and not skipped:
        return None
    table = Table(title="tasks not run")
    table.add_column("what")
    table.add_column("path: reason")
    for text in problems:
        table.add_row("[red]malformed[/]", text)
    for text in skipped:
        table.add_row("skipped", text)
    return table
