"""PNG plots of stored results (matplotlib, Agg backend, no global pyplot state).

* quantile (cactus) plot: per configuration, the n-th fastest correct answer's time against n;
* log-log scatter: per task, the time of configuration A against configuration B (unsolved
  tasks drawn at the time limit), with the diagonal and the 2x / 10x lines.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

_DPI = 120


def cactus_plot(series: Mapping[str, Sequence[float]], *, measure: str = "CPU", title: str = "") -> bytes:
    """The quantile plot of `series` (label -> times of the correct answers) as PNG bytes."""
    figure = Figure(figsize=(6.4, 4.4), dpi=_DPI, layout="constrained")
    axes = figure.add_subplot()
    for label, times in series.items():
        ordered = sorted(max(t, 0.01) for t in times)
        axes.plot(range(1, len(ordered) + 1), ordered, marker="o", markersize=3,
                  label=f"{label} ({len(ordered)})")
    axes.set_yscale("log")
    axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    axes.set_xlabel("number of correct answers")
    axes.set_ylabel(f"{measure} time per task (s)")
    axes.set_title(title or "quantile plot (correct answers)")
    axes.grid(True, which="both", alpha=0.3)
    if series:
        axes.legend(loc="upper left")
    return _png(figure)


@dataclass(frozen=True)
class ScatterPoint:
    time_a: float
    time_b: float
    solved_a: bool
    solved_b: bool


def scatter_plot(
    points: Sequence[ScatterPoint], *, label_a: str, label_b: str, limit: float, measure: str = "CPU"
) -> bytes:
    """The log-log scatter of per-task times of A (x) against B (y) as PNG bytes."""
    figure = Figure(figsize=(5.6, 5.6), dpi=_DPI, layout="constrained")
    axes = figure.add_subplot()
    low = 0.01
    high = max([limit, low * 10] + [max(p.time_a, p.time_b) for p in points])

    def clamp(value: float, solved: bool) -> float:
        return max(value, low) if solved else high

    groups = {
        "both solved": ("tab:blue", "o", (True, True)),
        f"only {label_a} solved": ("tab:orange", "^", (True, False)),
        f"only {label_b} solved": ("tab:green", "v", (False, True)),
        "neither": ("tab:gray", "x", (False, False)),
    }
    for name, (color, marker, solved) in groups.items():
        picked = [p for p in points if (p.solved_a, p.solved_b) == solved]
        if picked:
            axes.scatter([clamp(p.time_a, p.solved_a) for p in picked],
                         [clamp(p.time_b, p.solved_b) for p in picked],
                         s=14, c=color, marker=marker, label=f"{name} ({len(picked)})")
    for factor, style in ((1.0, "-"), (2.0, "--"), (10.0, ":")):
        axes.plot([low, high], [low / factor, high / factor], style, color="black", linewidth=0.7)
    _decorate_scatter(axes, low, high, label_a, label_b, measure)
    return _png(figure)


def _decorate_scatter(
    axes: Axes, low: float, high: float, label_a: str, label_b: str, measure: str
) -> None:
    axes.set_xscale("log")
    axes.set_yscale("log")
    axes.set_xlim(low, high * 1.5)
    axes.set_ylim(low, high * 1.5)
    axes.set_xlabel(f"{label_a}: {measure} time (s)")
    axes.set_ylabel(f"{label_b}: {measure} time (s)")
    axes.set_title("per-task time (below a line: B faster by 1x, 2x, 10x)", fontsize="medium")
    axes.grid(True, which="both", alpha=0.3)
    axes.legend(loc="lower right", fontsize="small")


def _png(figure: Figure) -> bytes:
    FigureCanvasAgg(figure)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    return buffer.getvalue()
