"""A document as the presentation functions see it: its current text and the last outcome for it."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from quokka.verifier.verdict.results import Verdict

from .model import STATUS_OK, LoopReport, Outcome, loop_reports
from .text import SourceText, keyword_at

HINT_LIMIT = 40  # characters of an inlay hint label


@dataclass(frozen=True)
class DocView:
    """`outcome` was computed on `outcome_text`, which may be older than `source`."""

    uri: str
    source: SourceText
    outcome: Outcome | None = None
    outcome_text: str | None = None
    running: bool = False

    @property
    def fresh(self) -> bool:
        return self.outcome is not None and self.outcome_text == self.source.text

    def loops(self) -> tuple[LoopReport, ...]:
        """The outcome's loops whose keyword is still where the outcome saw it."""
        if self.outcome is None or self.outcome.status != STATUS_OK:
            return ()
        return tuple(r for r in loop_reports(self.outcome.result) if self.fresh or self._still_there(r))

    @cached_property
    def _old_source(self) -> SourceText:
        return SourceText(self.outcome_text or "")

    def _still_there(self, report: LoopReport) -> bool:
        return self._old_source.line_text(report.line) == self.source.line_text(report.line) and (
            report.column == 0 or keyword_at(self.source, report.line, report.column) is not None
        )

    def loop_at(self, line: int, column: int) -> LoopReport | None:
        candidates = [r for r in self.loops() if r.line == line]
        exact = [r for r in candidates if r.column == column]
        found = exact or candidates
        return found[0] if found else None


def hint_label(conjuncts: tuple[str, ...], limit: int = HINT_LIMIT) -> str:
    """`⊢ a ∧ b ∧ …`: as many whole conjuncts as fit in `limit` characters."""
    full = "⊢ " + " ∧ ".join(conjuncts)
    if len(full) <= limit:
        return full
    label = "⊢ " + conjuncts[0]
    if len(label) + len(" ∧ …") > limit:
        return label[: limit - 1] + "…"
    for conjunct in conjuncts[1:]:
        if len(label) + len(" ∧ ") + len(conjunct) + len(" ∧ …") > limit:
            break
        label += " ∧ " + conjunct
    return label + " ∧ …"


def seconds(value: float) -> str:
    return f"{value:.1f} s" if value >= 0.1 else f"{value * 1000:.0f} ms"


def summary(outcome: Outcome) -> str:
    """One line: the verdict and what backs it."""
    result = outcome.result
    cached = " (cached)" if outcome.from_cache else ""
    if outcome.status != STATUS_OK:
        return f"not verified: {result.reason}"
    if result.verdict is Verdict.TRUE:
        by = f" by {result.decided_by}" if result.decided_by else ""
        return f"verified{by} in {seconds(result.time_s)}{cached}"
    if result.verdict is Verdict.FALSE:
        return f"assertion violated: {result.reason}{cached}"
    return f"unknown: {result.reason}{cached}"


def markdown_code(expr: str) -> str:
    fence = "``" if "`" in expr else "`"
    return f"{fence}{expr}{fence}"
