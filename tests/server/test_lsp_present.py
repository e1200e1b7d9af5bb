"""The pure LSP adapter: results + text in, hints/hovers/diagnostics/actions/lenses out (no server)."""

from __future__ import annotations

from lsp_samples import COHENCU, LINEAR, SUM_BUG, cohencu_true, linear_true, sum_bug_false, unknown
from lsprotocol import types as lsp
from quokka.server.actions import (
    CMD_COPY_INVARIANT,
    CMD_VERIFY,
    CMD_VERIFY_WITH_MODEL,
    acsl_annotation,
    code_actions,
    code_lenses,
    lens_title,
)
from quokka.server.diagnostics import diagnostics
from quokka.server.hints import hover, inlay_hints, resolve_inlay_hint
from quokka.server.model import STATUS_SKIPPED, Outcome, bad_input, failed, loop_reports
from quokka.server.text import SourceText
from quokka.server.view import DocView, hint_label
from quokka.verifier.verdict.results import (
    PARSE_ERROR,
    UNSUPPORTED_FEATURE,
    CandidateReport,
    Diagnostic,
    Result,
    Verdict,
)

URI = "file:///tmp/linear.c"


def view(text: str, outcome: Outcome | None, current: str | None = None, running: bool = False) -> DocView:
    return DocView(URI, SourceText(current if current is not None else text), outcome, text, running)


def whole() -> lsp.Range:
    return lsp.Range(lsp.Position(0, 0), lsp.Position(10_000, 0))


# ----------------------------------------------------------------------------- inlay hints


def test_hint_label_keeps_whole_conjuncts_within_40_characters():
    label = hint_label(("z == 6*n + 6", "y == 3*n*n + 3*n + 1", "x == n*n*n"))
    assert label == "⊢ z == 6*n + 6 ∧ …"
    assert hint_label(("i <= n", "s == 2*i")) == "⊢ i <= n ∧ s == 2*i"
    long = hint_label(("a_very_long_variable_name + another_long_name == 0",))
    assert len(long) == 40 and long.endswith("…")


def test_inlay_hint_at_the_end_of_the_loop_line_with_the_invariant():
    hints = inlay_hints(view(LINEAR, linear_true()), whole())
    assert len(hints) == 1
    hint = hints[0]
    assert hint.label == "⊢ i <= n ∧ s == 2*i"
    assert hint.position == lsp.Position(8, len("    while (i < n) {"))
    assert hint.tooltip is None  # only when resolved
    resolved = resolve_inlay_hint(view(LINEAR, linear_true()), hint)
    assert isinstance(resolved.tooltip, lsp.MarkupContent)
    text = resolved.tooltip.value
    assert "i <= n" in text and "s == 2*i" in text
    assert "from traces, proved by houdini" in text and "from model sample" in text


def test_inlay_hints_outside_the_visible_range_are_left_out():
    rng = lsp.Range(lsp.Position(0, 0), lsp.Position(3, 0))
    assert inlay_hints(view(LINEAR, linear_true()), rng) == []


def test_no_inlay_hint_without_a_proven_invariant_or_result():
    assert inlay_hints(view(LINEAR, None), whole()) == []
    assert inlay_hints(view(LINEAR, unknown("timeout after 20 s")), whole()) == []
    assert inlay_hints(view(SUM_BUG, sum_bug_false()), whole()) == []


def test_stale_result_keeps_hints_only_where_the_loop_line_is_unchanged():
    edited_elsewhere = LINEAR.replace("return 0;\n}", "return 1;\n}")
    assert len(inlay_hints(view(LINEAR, linear_true(), edited_elsewhere), whole())) == 1
    loop_edited = LINEAR.replace("while (i < n)", "while (i <= n)")
    assert inlay_hints(view(LINEAR, linear_true(), loop_edited), whole()) == []
    shifted = "\n" + LINEAR
    assert inlay_hints(view(LINEAR, linear_true(), shifted), whole()) == []


def test_cohencu_hint_label_matches_the_issue_example():
    hints = inlay_hints(DocView(URI, SourceText(COHENCU), cohencu_true(), COHENCU), whole())
    assert [h.label for h in hints] == ["⊢ z == 6*n + 6 ∧ …"]


# ----------------------------------------------------------------------------- hover


def test_hover_on_the_loop_keyword_lists_conjuncts_sources_and_rejections():
    result = hover(view(LINEAR, linear_true()), lsp.Position(8, 6))
    assert result is not None and isinstance(result.contents, lsp.MarkupContent)
    text = result.contents.value
    assert "`i <= n` — from traces, proved by houdini (0.4 s)" in text
    assert "`s == 2*i` — from model sample" in text
    assert "5 tried, 2 proven, 3 rejected" in text
    assert "2x not inductive" in text and "1x does not hold initially" in text
    assert "verified by houdini in 0.8 s" in text
    assert result.range == lsp.Range(lsp.Position(8, 4), lsp.Position(8, 9))


def test_hover_elsewhere_is_empty_and_before_a_result_says_so():
    assert hover(view(LINEAR, linear_true()), lsp.Position(9, 8)) is None
    pending = hover(view(LINEAR, None, running=True), lsp.Position(8, 5))
    assert pending is not None and "verifying…" in str(pending.contents)


def test_hover_on_a_loop_without_invariant():
    result = hover(view(SUM_BUG, sum_bug_false()), lsp.Position(8, 5))
    assert result is not None and "No invariant proven" in str(result.contents)


def test_hover_counts_utf16_columns():
    text = "// héllo 😀\n" + LINEAR  # the emoji is two UTF-16 units
    outcome = linear_true()
    shifted = Outcome(outcome.result.__class__(
        outcome.result.verdict, "", "x", 0.1,
        invariants=tuple(i.__class__(i.loop, i.line + 1, i.column, i.expr, i.proved_by, i.source)
                         for i in outcome.result.invariants)), outcome.input_path)
    source = SourceText(text)
    assert source.position(1, 11) == lsp.Position(0, 11)  # after "😀" (col 11 = 10 chars + 1)
    assert source.from_position(lsp.Position(0, 11)) == (1, 11)
    assert hover(DocView(URI, source, shifted, text), lsp.Position(9, 5)) is not None


# ----------------------------------------------------------------------------- diagnostics


def test_proven_assertions_get_a_quiet_hint_unless_switched_off():
    found = diagnostics(URI, SourceText(LINEAR), linear_true())
    assert len(found) == 1
    assert found[0].severity == lsp.DiagnosticSeverity.Hint
    assert found[0].range.start == lsp.Position(12, 4)
    assert "proven" in found[0].message
    assert diagnostics(URI, SourceText(LINEAR), linear_true(), show_proven=False) == []


def test_violation_is_an_error_on_the_assertion_with_inputs_and_path():
    found = diagnostics(URI, SourceText(SUM_BUG), sum_bug_false())
    assert len(found) == 1
    diag = found[0]
    assert diag.severity == lsp.DiagnosticSeverity.Error
    assert diag.range.start == lsp.Position(11, 4)  # the __VERIFIER_assert call in main, not line 3
    assert "__VERIFIER_nondet_uint() = 86" in diag.message and "gcc" in diag.message
    assert diag.message.endswith("\nlast loop head: L9, iteration 1: i = 1, sum = 3")  # no `nd.1`
    related = diag.related_information or []
    messages = [r.message for r in related]
    assert "input: __VERIFIER_nondet_uint() returns 86" in messages
    assert "loop L9, iteration 1: i = 1, sum = 3" in messages
    steps = [r for r in related if r.message.startswith("path step")]
    assert len(steps) == 10 and steps[-1].location.range.start.line == 2


def test_unknown_is_a_warning_on_each_assertion_and_at_the_unsupported_feature():
    path = "/tmp/quokka-lsp-x/linear.c"
    cause = Diagnostic(path, 10, 13, UNSUPPORTED_FEATURE, "unsupported feature: pointer dereference")
    found = diagnostics(URI, SourceText(LINEAR), unknown(cause.reason, path, cause))
    assert [d.severity for d in found] == [lsp.DiagnosticSeverity.Warning] * 2
    feature, assertion = found
    assert feature.range == lsp.Range(lsp.Position(9, 12), lsp.Position(9, 13))
    assert feature.code == "quokka.unsupported"
    assert feature.message == "unsupported feature: pointer dereference"
    assert assertion.range.start == lsp.Position(12, 4)
    assert assertion.message == "not proven: linear.c:10:13: unsupported feature: pointer dereference"
    assert assertion.related_information is not None
    assert assertion.related_information[0].location.range == feature.range


def test_the_place_is_the_typed_cause_not_a_location_in_the_reason():
    path = "/tmp/quokka-lsp-x/linear.c"
    cause = Diagnostic(path, 9, 5, UNSUPPORTED_FEATURE, "unsupported feature: recursion")
    (feature, _) = diagnostics(URI, SourceText(LINEAR), unknown(f"{path}:6:9: elsewhere", path, cause))
    assert feature.range.start == lsp.Position(8, 4) and feature.message == "unsupported feature: recursion"
    in_header = Diagnostic("/usr/include/x.h", 2, 1, UNSUPPORTED_FEATURE, "unsupported feature: union")
    found = diagnostics(URI, SourceText(LINEAR), unknown(in_header.reason, path, in_header))
    assert [d.code for d in found] == ["quokka.unknown"]


def test_an_engine_reason_naming_a_place_puts_the_whole_reason_there():
    path = "/tmp/quokka-lsp-x/linear.c"
    reason = (f"houdini: floating point: only bounded model checking handles it ({path}:8:9: float i); "
              "bmc: timeout at k=12")
    feature, assertion = diagnostics(URI, SourceText(LINEAR), unknown(reason, path))
    assert (feature.range.start, feature.message, feature.code) == (
        lsp.Position(7, 8), reason, "quokka.unsupported")
    assert assertion.message == f"not proven: {reason.replace(path, 'linear.c')}"


def test_timeout_unknown_names_the_reason():
    found = diagnostics(URI, SourceText(LINEAR), unknown("timeout: no engine decided within 20 s"))
    assert len(found) == 1 and found[0].message == "not proven: timeout: no engine decided within 20 s"


def test_frontend_error_at_its_location_and_skipped_text_is_information():
    bad = bad_input(Diagnostic("/tmp/x/linear.c", 6, 13, PARSE_ERROR, "undeclared identifier 'm'"),
                    "/tmp/x/linear.c")
    found = diagnostics(URI, SourceText(LINEAR), bad)
    assert len(found) == 1 and found[0].severity == lsp.DiagnosticSeverity.Error
    assert found[0].range == lsp.Range(lsp.Position(5, 12), lsp.Position(5, 33))  # the token
    assert (found[0].message, found[0].code) == ("undeclared identifier 'm'", "quokka.input")
    no_place = Diagnostic("/tmp/x/linear.c", 0, 0, PARSE_ERROR, "linear.c: parse error: x")
    unplaced = bad_input(no_place, "/tmp/x/linear.c")
    (whole_file,) = diagnostics(URI, SourceText(LINEAR), unplaced)
    assert whole_file.range.start == lsp.Position(4, 4) and whole_file.message == "linear.c: parse error: x"
    skipped = diagnostics(URI, SourceText("int x;\n"), failed("no `main`", "x.c", status=STATUS_SKIPPED))
    assert skipped[0].severity == lsp.DiagnosticSeverity.Information
    crashed = diagnostics(URI, SourceText(LINEAR), failed("the verifier exited with code 1", "x.c"))
    assert crashed[0].severity == lsp.DiagnosticSeverity.Warning
    assert crashed[0].range.start == lsp.Position(4, 4)  # on `main`


# ----------------------------------------------------------------------------- code actions and lenses


def test_acsl_annotation_text():
    assert acsl_annotation(("i <= n",), "    ") == "    /*@ loop invariant i <= n; */\n"
    assert acsl_annotation(("a", "b"), "  ") == "  /*@ loop invariant a;\n    @ loop invariant b; */\n"


def test_code_action_inserts_the_acsl_annotation_above_the_loop_and_copies():
    rng = lsp.Range(lsp.Position(8, 6), lsp.Position(8, 6))
    actions = code_actions(view(LINEAR, linear_true()), rng)
    assert len(actions) == 2
    insert, copy = actions
    assert isinstance(insert, lsp.CodeAction) and isinstance(copy, lsp.Command)
    assert insert.edit is not None and insert.edit.changes is not None
    (edit,) = insert.edit.changes[URI]
    assert edit.range == lsp.Range(lsp.Position(8, 0), lsp.Position(8, 0))
    assert edit.new_text == "    /*@ loop invariant i <= n;\n      @ loop invariant s == 2*i; */\n"
    assert copy.command == CMD_COPY_INVARIANT and copy.arguments == ["(i <= n) && (s == 2*i)"]
    assert code_actions(view(LINEAR, linear_true()), lsp.Range(lsp.Position(2, 0), lsp.Position(3, 0))) == []


def test_no_insert_action_when_the_annotation_is_already_there():
    acsl = "    /*@ loop invariant i <= n;\n      @ loop invariant s == 2*i; */\n"
    annotated = LINEAR.replace("    while", acsl + "    while")
    outcome = linear_true()
    moved = Outcome(outcome.result.__class__(
        outcome.result.verdict, "", "x", 0.1,
        invariants=tuple(i.__class__(i.loop, 11, i.column, i.expr, i.proved_by, "annotation")
                         for i in outcome.result.invariants)), outcome.input_path)
    actions = code_actions(DocView(URI, SourceText(annotated), moved, annotated),
                           lsp.Range(lsp.Position(10, 0), lsp.Position(10, 0)))
    assert [a.title for a in actions] == ["Quokka: copy proven invariant"]


def test_code_lens_on_main_shows_status_and_commands():
    lenses = code_lenses(view(LINEAR, linear_true()))
    assert [lens.command.title for lens in lenses if lens.command] == [
        "✓ verified in 0.8 s", "Verify", "Verify with model"]
    assert lenses[1].command is not None and lenses[1].command.command == CMD_VERIFY
    assert lenses[2].command is not None and lenses[2].command.command == CMD_VERIFY_WITH_MODEL
    assert lenses[0].range == lsp.Range(lsp.Position(4, 4), lsp.Position(4, 8))
    assert lens_title(sum_bug_false(), False) == "✗ violation (line 3)"
    assert lens_title(unknown("timeout"), False) == "? unknown"
    assert lens_title(None, True) == "⟳ verifying…"
    assert code_lenses(DocView(URI, SourceText("int x;"))) == []


def test_loop_reports_locate_candidate_only_loops_by_id():
    rejected = CandidateReport("L9", "s == i", "dynamic", "rejected", "no")
    result = Result(Verdict.UNKNOWN, "", "x", 0.1, candidates=(rejected,))
    (report,) = loop_reports(result)
    assert (report.loop, report.line, report.column, report.conjuncts) == ("L9", 9, 0, ())
