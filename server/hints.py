"""Inlay hints (proven invariants at loop heads) and hovers on loop keywords, from a `DocView`."""

from __future__ import annotations

from collections import Counter
from typing import Any

from lsprotocol import types as lsp
from quokka.verifier.ir.printer import join_conjuncts

from .model import STATUS_OK, LoopReport, proposer_label
from .text import keyword_at
from .view import DocView, hint_label, markdown_code, seconds, summary

MAX_REJECTED_GROUPS = 5


def inlay_hints(view: DocView, visible: lsp.Range | None = None) -> list[lsp.InlayHint]:
    """One hint per loop with a proven invariant, at the end of the loop keyword's line."""
    out = []
    for report in view.loops():
        if not report.conjuncts or not _visible(report.line, visible):
            continue
        text = view.source.line_text(report.line).rstrip()
        out.append(lsp.InlayHint(
            position=view.source.position(report.line, len(text) + 1),
            label=hint_label(report.conjuncts),
            padding_left=True,
            data={"uri": view.uri, "loop": report.loop, "line": report.line},
        ))
    return out


def _visible(line: int, visible: lsp.Range | None) -> bool:
    return visible is None or visible.start.line <= line - 1 <= visible.end.line


def resolve_inlay_hint(view: DocView, hint: lsp.InlayHint) -> lsp.InlayHint:
    """`hint` with the whole invariant and how it was proven as its tooltip."""
    data: Any = hint.data
    loop = data.get("loop") if isinstance(data, dict) else getattr(data, "loop", None)
    report = next((r for r in view.loops() if r.loop == loop), None)
    if report is None:
        return hint
    hint.tooltip = lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=_invariant_markdown(view, report))
    return hint


def _invariant_markdown(view: DocView, report: LoopReport) -> str:
    lines = [f"**Proven loop invariant** at loop `{report.loop}` (line {report.line})", "",
             "```c", join_conjuncts(report.conjuncts, " &&\n"), "```", ""]
    lines += [_conjunct_line(view, report, expr) for expr in report.conjuncts]
    if view.outcome is not None:
        lines += ["", summary(view.outcome)]
    return "\n".join(lines)


def _conjunct_line(view: DocView, report: LoopReport, expr: str) -> str:
    inv = next(i for i in report.invariants if i.expr == expr)
    engine = _engine_time(view, inv.proved_by)
    return f"- {markdown_code(expr)} — from {proposer_label(inv.source)}, proved by {inv.proved_by}{engine}"


def _engine_time(view: DocView, engine: str) -> str:
    if view.outcome is None:
        return ""
    run = next((e for e in view.outcome.result.engines if e.engine == engine), None)
    return f" ({seconds(run.time_s)})" if run is not None else ""


def hover(view: DocView, position: lsp.Position) -> lsp.Hover | None:
    """On a loop keyword: the proven conjuncts, where they came from, the time, the rejected candidates."""
    line, column = view.source.from_position(position)
    found = keyword_at(view.source, line, column)
    if found is None:
        return None
    keyword, span = found
    value = _loop_hover(view, view.loop_at(span.line, span.column), keyword)
    return lsp.Hover(contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=value),
                     range=view.source.range(span))


def _loop_hover(view: DocView, report: LoopReport | None, keyword: str) -> str:
    if view.outcome is None:
        return f"**Quokka** · `{keyword}` loop: {'verifying…' if view.running else 'not verified yet'}"
    head = f"**Quokka** · `{keyword}` loop" + (f" `{report.loop}`" if report else "")
    if view.outcome.status != STATUS_OK:
        return f"{head}\n\n{summary(view.outcome)}"
    lines = [head, ""]
    if report is None or not report.conjuncts:
        lines.append("No invariant proven for this loop.")
    else:
        lines.append(f"**Proven invariant** ({len(report.conjuncts)} conjunct"
                     f"{'s' if len(report.conjuncts) != 1 else ''}):")
        lines += [_conjunct_line(view, report, expr) for expr in report.conjuncts]
    lines += ["", f"Verdict: {summary(view.outcome)}"]
    if view.running:
        lines.append("_(a newer verification is running)_")
    if report is not None:
        lines += _candidate_lines(report)
    return "\n".join(lines)


def _candidate_lines(report: LoopReport) -> list[str]:
    if not report.candidates:
        return []
    by_status = Counter(c.status for c in report.candidates)
    unused = f", {by_status['unused']} unused" if by_status["unused"] else ""
    lines = ["", f"**Candidates**: {len(report.candidates)} tried, {by_status['proven']} proven, "
             f"{by_status['rejected']} rejected{unused}"]
    reasons = Counter(c.reason or "rejected" for c in report.rejected)
    for reason, count in reasons.most_common(MAX_REJECTED_GROUPS):
        example = next(c for c in report.rejected if (c.reason or "rejected") == reason)
        lines.append(f"- {count}x {reason} (e.g. {markdown_code(example.expr)} from "
                     f"{' and '.join(proposer_label(p) for p in example.proposers)})")
    if len(reasons) > MAX_REJECTED_GROUPS:
        lines.append(f"- … and {len(reasons) - MAX_REJECTED_GROUPS} other reasons")
    return lines
