"""Code actions (insert a proven invariant as ACSL, copy it) and the code lens on `main`."""

from __future__ import annotations

import re

from lsprotocol import types as lsp
from quokka.verifier.ir.printer import join_conjuncts
from quokka.verifier.verdict.results import Verdict

from .model import STATUS_OK, LoopReport, Outcome
from .text import main_function
from .view import DocView, seconds

CMD_VERIFY = "quokka.verify"
CMD_VERIFY_WITH_MODEL = "quokka.verifyWithModel"
CMD_COPY_INVARIANT = "quokka.copyInvariant"
CMD_SHOW_RESULT = "quokka.showResult"
COMMANDS = (CMD_VERIFY, CMD_VERIFY_WITH_MODEL, CMD_COPY_INVARIANT, CMD_SHOW_RESULT)
_NOT_RUN = {"error": "✗ not a valid program", "failed": "? verifier failed"}
ANNOTATION_LOOKBACK = 12  # lines above a loop searched for annotations it already has


def acsl_annotation(conjuncts: tuple[str, ...], indent: str) -> str:
    """`/*@ loop invariant a; ... */` lines (ending in a newline), indented like the loop."""
    clauses = [f"loop invariant {c};" for c in conjuncts]
    if len(clauses) == 1:
        return f"{indent}/*@ {clauses[0]} */\n"
    body = f"\n{indent}  @ ".join(clauses)
    return f"{indent}/*@ {body} */\n"


def code_actions(view: DocView, rng: lsp.Range) -> list[lsp.CodeAction | lsp.Command]:
    """For each loop on a line of `rng` with a proven invariant: insert it as ACSL, or copy it."""
    out: list[lsp.CodeAction | lsp.Command] = []
    for report in view.loops():
        if report.conjuncts and rng.start.line <= report.line - 1 <= rng.end.line:
            out += _loop_actions(view, report)
    return out


def _loop_actions(view: DocView, report: LoopReport) -> list[lsp.CodeAction | lsp.Command]:
    out: list[lsp.CodeAction | lsp.Command] = []
    missing = _not_yet_annotated(view, report)
    if missing:
        line_text = view.source.line_text(report.line)
        indent = line_text[: len(line_text) - len(line_text.lstrip())]
        start = view.source.position(report.line, 1)
        edit = lsp.TextEdit(range=lsp.Range(start, start), new_text=acsl_annotation(missing, indent))
        out.append(lsp.CodeAction(
            title=f"Quokka: insert proven invariant as ACSL annotation ({len(missing)} clause"
                  f"{'s' if len(missing) != 1 else ''})",
            kind=lsp.CodeActionKind.RefactorRewrite,
            edit=lsp.WorkspaceEdit(changes={view.uri: [edit]}),
        ))
    text = join_conjuncts(report.conjuncts)
    # a bare Command: a CodeAction holding only a command is read as a Command by some clients anyway
    out.append(lsp.Command("Quokka: copy proven invariant", CMD_COPY_INVARIANT, arguments=[text]))
    return out


def _not_yet_annotated(view: DocView, report: LoopReport) -> tuple[str, ...]:
    first = max(1, report.line - ANNOTATION_LOOKBACK)
    above = _squash("\n".join(view.source.line_text(n) for n in range(first, report.line)))
    return tuple(c for c in report.conjuncts if f"loop invariant {_squash(c)};" not in above)


def _squash(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def code_lenses(view: DocView) -> list[lsp.CodeLens]:
    """On `main`: the status, then `Verify` and `Verify with model`."""
    main = main_function(view.source)
    if main is None:
        return []
    rng = view.source.range(main.header)
    titles = ((lens_title(view.outcome, view.running), CMD_SHOW_RESULT), ("Verify", CMD_VERIFY),
              ("Verify with model", CMD_VERIFY_WITH_MODEL))
    return [lsp.CodeLens(rng, lsp.Command(title, name, arguments=[view.uri])) for title, name in titles]


def lens_title(outcome: Outcome | None, running: bool) -> str:
    if running:
        return "⟳ verifying…"
    if outcome is None:
        return "? not verified"
    if outcome.status != STATUS_OK:
        return _NOT_RUN.get(outcome.status, "? not verified")
    result = outcome.result
    if result.verdict is Verdict.TRUE:
        return f"✓ verified in {seconds(result.time_s)}"
    if result.verdict is Verdict.FALSE:
        line = f" (line {result.counterexample.error_line})" if result.counterexample else ""
        return f"✗ violation{line}"
    return "? unknown"
