"""Diagnostics from an outcome: violated, unknown and proven assertions, frontend errors at their place."""

from __future__ import annotations

import re

from lsprotocol import types as lsp
from quokka.verifier.verdict.results import Counterexample, Diagnostic, Result, Verdict

from .model import STATUS_ERROR, STATUS_OK, STATUS_SKIPPED, Outcome, loop_line
from .text import Site, SourceText, Span, assertion_sites, main_function, mentioned_at, same_file
from .view import seconds

SOURCE = "quokka"
MAX_PATH_STEPS = 30
MAX_LOOP_STATES = 20


def diagnostics(uri: str, source: SourceText, outcome: Outcome,
                show_proven: bool = True) -> list[lsp.Diagnostic]:
    """The diagnostics of `outcome`, computed on `source` (the text that was verified)."""
    if outcome.status == STATUS_ERROR:
        return [_located(source, outcome, lsp.DiagnosticSeverity.Error, "quokka.input")]
    if outcome.status != STATUS_OK:
        return [_at(_first_line(source), f"Quokka: {outcome.result.reason}",
                    _severity_of_skip(outcome), "quokka." + outcome.status)]
    result = outcome.result
    sites = assertion_sites(source)
    claims = _claims(source, result, show_proven)
    if result.verdict is Verdict.FALSE:
        return [_violation(uri, source, sites, result), *claims]
    if result.verdict is Verdict.UNKNOWN:
        return [*_unknown(uri, source, sites, outcome), *claims]
    return [*(_proven(source, sites, result) if show_proven else []), *claims]


_CLAIM_SEVERITY = {
    "refuted": lsp.DiagnosticSeverity.Error,
    "unknown": lsp.DiagnosticSeverity.Warning,
    "valid": lsp.DiagnosticSeverity.Hint,
}


def _claims(source: SourceText, result: Result, show_valid: bool) -> list[lsp.Diagnostic]:
    """One diagnostic per annotation the user wrote: refuted, not proved, or (a hint) valid."""
    out = []
    for c in result.claims:
        if c.source != "annotation" or (c.status == "valid" and not show_valid):
            continue
        message = f"loop invariant {c.expr} is {c.status}: {c.detail()}"
        code = f"quokka.claim.{c.status}"
        out.append(_at(source.line_range(c.line), message, _CLAIM_SEVERITY[c.status], code))
    return out


def _severity_of_skip(outcome: Outcome) -> lsp.DiagnosticSeverity:
    if outcome.status == STATUS_SKIPPED:
        return lsp.DiagnosticSeverity.Information
    return lsp.DiagnosticSeverity.Warning


def _at(rng: lsp.Range, message: str, severity: lsp.DiagnosticSeverity, code: str,
        related: list[lsp.DiagnosticRelatedInformation] | None = None) -> lsp.Diagnostic:
    return lsp.Diagnostic(range=rng, message=message, severity=severity, code=code, source=SOURCE,
                          related_information=related or None)


def _first_line(source: SourceText) -> lsp.Range:
    main = main_function(source)
    return source.range(main.header) if main is not None else source.line_range(1)


def _point(source: SourceText, line: int, column: int) -> lsp.Range:
    """The token at (line, column), or the line's content when the column is unknown."""
    if column <= 0:
        return source.line_range(line)
    text = source.line_text(line)
    end = column
    while end <= len(text) and (text[end - 1].isalnum() or text[end - 1] == "_"):
        end += 1
    return source.range(Span(line, column, line, max(end, column + 1)))


def _located(source: SourceText, outcome: Outcome, severity: lsp.DiagnosticSeverity,
             code: str) -> lsp.Diagnostic:
    where = _in_document(outcome.cause, outcome.input_path)
    if where is None:
        return _at(_first_line(source), outcome.result.reason, severity, code)
    return _at(_point(source, where.line, where.column), where.message, severity, code)


def _in_document(cause: Diagnostic | None, input_path: str) -> Diagnostic | None:
    """`cause` if it has a place in the verified file (not in a header it includes)."""
    return cause if cause is not None and cause.line > 0 and same_file(cause.file, input_path) else None


def _proven(source: SourceText, sites: tuple[Site, ...], result: Result) -> list[lsp.Diagnostic]:
    by = f" by {result.decided_by}" if result.decided_by else ""
    message = f"proven: this assertion always holds (verified{by} in {seconds(result.time_s)})"
    return [_at(source.range(s.span), message, lsp.DiagnosticSeverity.Hint, "quokka.proven") for s in sites]


def _unknown(uri: str, source: SourceText, sites: tuple[Site, ...], outcome: Outcome) -> list[lsp.Diagnostic]:
    reason = outcome.result.reason or "no engine decided"
    cause = _unknown_cause(reason, outcome)
    related = None
    out = []
    if cause is not None:
        line, column, text = cause
        rng = _point(source, line, column)
        out.append(_at(rng, text, lsp.DiagnosticSeverity.Warning, "quokka.unsupported"))
        related = [lsp.DiagnosticRelatedInformation(lsp.Location(uri, rng), text)]
    message = f"not proven: {_relative(reason, outcome.input_path)}"
    targets = [source.range(s.span) for s in sites] or [_first_line(source)]
    out += [_at(rng, message, lsp.DiagnosticSeverity.Warning, "quokka.unknown", related) for rng in targets]
    return out


def _unknown_cause(reason: str, outcome: Outcome) -> tuple[int, int, str] | None:
    """(line, column, message) of what kept the run from deciding, when it is in the document: the
    typed cause, else a place an engine's reason names (`mentioned_at`), with that whole reason."""
    if outcome.cause is not None:
        where = _in_document(outcome.cause, outcome.input_path)
        return None if where is None else (where.line, where.column, where.message)
    mention = mentioned_at(reason, outcome.input_path)
    return None if mention is None else (*mention, reason)


def _relative(reason: str, input_path: str) -> str:
    """`reason` with the verifier's input path shortened to the file name."""
    return reason.replace(input_path, input_path.rsplit("/", 1)[-1]) if input_path else reason


def _violation(uri: str, source: SourceText, sites: tuple[Site, ...], result: Result) -> lsp.Diagnostic:
    cex = result.counterexample
    if cex is None:
        return _at(_first_line(source), f"assertion violated: {result.reason}", lsp.DiagnosticSeverity.Error,
                   "quokka.violated")
    rng = _violated_range(source, sites, cex)
    related = _cex_related(uri, source, result, cex)
    return _at(rng, _cex_message(cex), lsp.DiagnosticSeverity.Error, "quokka.violated", related)


def _violated_range(source: SourceText, sites: tuple[Site, ...], cex: Counterexample) -> lsp.Range:
    on_line = [s for s in sites if s.span.line <= cex.error_line <= s.span.end_line]
    if on_line:
        return source.range(on_line[0].span)
    site_lines = {s.span.line: s for s in sites}
    for line in reversed(cex.path_lines):
        if line in site_lines:
            return source.range(site_lines[line].span)
    return _point(source, cex.error_line, cex.error_column)


def _cex_message(cex: Counterexample) -> str:
    inputs = ", ".join(f"{i.origin}() = {i.text} (line {i.line})" for i in cex.inputs) or "no inputs"
    confirmed = f"; confirmed by {', '.join(cex.confirmed_by)}" if cex.confirmed_by else ""
    message = f"assertion violated — counterexample: {inputs}{confirmed}"
    if cex.loop_heads:
        loop, iteration, state = cex.loop_heads[-1]
        message += f"\nlast loop head: {loop}, iteration {iteration}: {_state(state)}"
    return message


def _state(state: tuple[tuple[str, int], ...]) -> str:
    """`name = value` for the program's own variables (not the frontend's temporaries like `nd.1`)."""
    return ", ".join(f"{name} = {value}" for name, value in state if re.fullmatch(r"[A-Za-z_]\w*", name))


def _cex_related(uri: str, source: SourceText, result: Result,
                 cex: Counterexample) -> list[lsp.DiagnosticRelatedInformation]:
    def info(line: int, message: str) -> lsp.DiagnosticRelatedInformation:
        return lsp.DiagnosticRelatedInformation(lsp.Location(uri, source.line_range(line)), message)

    out = [info(i.line, f"input: {i.origin}() returns {i.text}") for i in cex.inputs]
    for loop, iteration, state in cex.loop_heads[-MAX_LOOP_STATES:]:
        out.append(info(loop_line(result, loop) or cex.error_line,
                        f"loop {loop}, iteration {iteration}: {_state(state)}"))
    steps = _dedupe(cex.path_lines)
    shown = steps[-MAX_PATH_STEPS:]
    for index, line in enumerate(shown, start=len(steps) - len(shown) + 1):
        out.append(info(line, f"path step {index}/{len(steps)}"))
    return out


def _dedupe(lines: tuple[int, ...]) -> list[int]:
    out: list[int] = []
    for line in lines:
        if not out or out[-1] != line:
            out.append(line)
    return out
