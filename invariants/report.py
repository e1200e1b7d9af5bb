"""The human-readable summary of a `Result` (rich), for `quokka verify`."""

from __future__ import annotations

from quokka.verifier.verdict.results import Counterexample, Result, Verdict
from rich.console import Console
from rich.table import Table
from rich.text import Text  # program text, never markup: `a[k]` would read as a style tag

_STYLE = {Verdict.TRUE: "bold green", Verdict.FALSE: "bold red", Verdict.UNKNOWN: "bold yellow"}


def print_result(result: Result, console: Console | None = None) -> None:
    console = console or Console()
    verdict = result.verdict.value.upper()
    console.print(f"[{_STYLE[result.verdict]}]{verdict}[/] {result.file} ({result.time_s:.2f} s)")
    console.print(f"  {result.reason}", markup=False, highlight=False)
    if result.invariants:
        console.print(_invariant_table(result))
    if result.counterexample:
        _print_counterexample(result, console)
    if result.claims:
        console.print(_claims_table(result))
    if result.overflow_sites:
        console.print(
            f"  signed arithmetic that could overflow: {len(result.overflow_sites)} site(s), "
            f"e.g. {result.overflow_sites[0]}",
            markup=False,
            highlight=False,
            soft_wrap=True,  # one line: a location is not to be broken after "e.g."
        )


def print_profile(result: Result, console: Console | None = None) -> None:
    """Where the time went: each engine's run time, then its calls by kind (`profile.Timing`)."""
    console = console or Console()
    table = Table(title="Profile: where the time went", title_justify="left")
    for column in ("who", "what", "calls", "total s", "slowest s", "answers"):
        table.add_column(column, justify="right" if column.endswith(("s", "calls")) else "left")
    runs = {run.engine: run for run in result.engines}
    for who in dict.fromkeys([*runs, *(t.who for t in result.profile)]):
        run = runs.get(who)
        if run is not None:
            table.add_row(who, f"[bold]run: {run.status}[/]", "", f"{run.time_s:.2f}", "", "")
        for t in (t for t in result.profile if t.who == who):
            answers = ", ".join(f"{answer} {n}" for answer, n in t.answers)
            times = f"{t.total_s:.3f}", f"{t.max_s:.3f}"
            table.add_row("" if run else who, t.what, str(t.count), *times, answers)
    console.print(table)
    if result.peak_rss_mb:
        peaks = ", ".join(f"{who} {mb:.0f}" for who, mb in result.peak_rss_mb)
        console.print(f"Peak resident memory of each strategy process (MB): {peaks}", highlight=False)


def _invariant_table(result: Result) -> Table:
    table = Table(title="Loop invariants (certificate, checked inductive)", title_justify="left")
    for column in ("loop", "line", "invariant", "proposed by", "proved by"):
        table.add_column(column)
    for inv in result.invariants:
        table.add_row(inv.loop, str(inv.line), Text(inv.expr), inv.source, inv.proved_by)
    return table


_CLAIM_STYLE = {"valid": "green", "refuted": "red", "unknown": "yellow"}


def _claims_table(result: Result) -> Table:
    table = Table(title="Your loop invariants, checked", title_justify="left")
    for column in ("line", "claim", "status", "why"):
        table.add_column(column)
    for c in result.claims:
        status = f"[{_CLAIM_STYLE.get(c.status, '')}]{c.status}[/]"
        table.add_row(str(c.line), Text(c.expr), status, Text(c.detail()))
    return table


def _print_counterexample(result: Result, console: Console) -> None:
    cex = result.counterexample
    assert cex is not None
    console.print(f"  error reached at line {cex.error_line}, confirmed by {', '.join(cex.confirmed_by)}")
    for note in cex.replay_notes:
        console.print(f"  {note}", markup=False, highlight=False)
    table = Table(title="Inputs", title_justify="left")
    for column in ("#", "line", "source", "value"):
        table.add_column(column)
    for i, value in enumerate(cex.inputs, 1):
        table.add_row(str(i), str(value.line), value.origin, Text(value.text))
    console.print(table)
    if cex.loop_heads or cex.error_state:
        console.print(_trace_table(cex))


TRACE_ENDS = 6  # loop-head states shown at each end of a long trace


def _trace_table(cex: Counterexample) -> Table:
    """The loop-head states in order (the middle of a long run elided), then the failing state."""
    table = Table(title="Trace", title_justify="left")
    for column in ("where", "state"):
        table.add_column(column)
    heads = list(cex.loop_heads)
    shown = heads if len(heads) <= 2 * TRACE_ENDS else [*heads[:TRACE_ENDS], None, *heads[-TRACE_ENDS:]]
    for head in shown:
        if head is None:
            table.add_row("...", f"{len(heads) - 2 * TRACE_ENDS} loop-head states elided")
            continue
        loop, iteration, state = head
        table.add_row(f"loop {loop}, iteration {iteration}", Text(_state(state)))
    table.add_row(f"assertion, line {cex.error_line}", Text(_state(cex.error_state)))
    return table


def _state(state: tuple[tuple[str, int], ...]) -> str:
    return ", ".join(f"{name} = {value}" for name, value in state) or "-"
