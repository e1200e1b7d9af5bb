"""A certificate joined into one formula (issue 40): the inlay hint's tooltip, the copied text and
a witness's disjunction parenthesise each invariant, so the text parses back, with Quokka's own
parser, as the conjunction of the invariants (checked by Z3), not as another formula."""

from __future__ import annotations

import re
from pathlib import Path

import z3
from lsp_samples import COHENCU
from lsprotocol import types as lsp
from quokka.server.actions import code_actions
from quokka.server.hints import inlay_hints, resolve_inlay_hint
from quokka.server.model import STATUS_OK, Outcome
from quokka.server.text import SourceText
from quokka.server.view import DocView
from quokka.verifier.encode.smt import Translator
from quokka.verifier.frontend import lower_source
from quokka.verifier.frontend.invariant import parse_invariant
from quokka.verifier.ir import Expr, Program, free_vars
from quokka.verifier.ir.printer import join_conjuncts
from quokka.verifier.verdict.results import ProvenInvariant, Result, Verdict

URI = "file:///tmp/cohencu.c"
LOOP_LINE = 32
# the certificate: a disjunction next to other conjuncts reads as another formula unparenthesised
CONJUNCTS = ("n <= a + 1 || n == 0", "x*z <= y*y*y", "z == 6*n + 6", "x == n*n*n")


def _outcome() -> Outcome:
    invariants = tuple(ProvenInvariant(f"L{LOOP_LINE}", LOOP_LINE, 5, c, "houdini") for c in CONJUNCTS)
    return Outcome(Result(Verdict.TRUE, "invariants proven", "/tmp/cohencu.c", 1.0, invariants=invariants,
                          decided_by="houdini"), "/tmp/cohencu.c", STATUS_OK)


def _view() -> DocView:
    return DocView(URI, SourceText(COHENCU), _outcome(), COHENCU)


def _shown_formula() -> str:
    """The C block of the inlay hint's tooltip."""
    view = _view()
    [hint] = inlay_hints(view, lsp.Range(lsp.Position(0, 0), lsp.Position(10_000, 0)))
    tooltip = resolve_inlay_hint(view, hint).tooltip
    assert isinstance(tooltip, lsp.MarkupContent)
    block = re.search(r"```c\n(.*?)\n```", tooltip.value, re.S)
    assert block is not None, tooltip.value
    return block.group(1)


def _equivalent(program: Program, loop: str, left: str, right: str) -> bool:
    a, b = parse_invariant(left, program, loop), parse_invariant(right, program, loop)
    env = {d.name: z3.Int(d.name) for d in program.variables if d.name in free_vars(a) | free_vars(b)}
    solver = z3.Solver()
    solver.add(_formula(env, a) != _formula(env, b))
    return bool(solver.check() == z3.unsat)


def _formula(env: dict[str, z3.ExprRef], e: Expr) -> z3.BoolRef:
    return Translator(dict(env)).formula(e)


def _cohencu() -> tuple[Program, str]:
    program = lower_source(COHENCU, "cohencu.c", "LP64")
    [loop] = [info.id for info in program.loops if info.coord.line == LOOP_LINE]
    return program, loop


def test_the_tooltip_parses_back_as_the_conjunction_of_the_invariants() -> None:
    program, loop = _cohencu()
    shown = _shown_formula()
    conjunction = " && ".join(f"({c})" for c in CONJUNCTS)
    assert _equivalent(program, loop, shown.replace("\n", " "), conjunction), shown
    assert not _equivalent(program, loop, " && ".join(CONJUNCTS), conjunction)  # what it showed before


def test_the_copied_text_is_the_tooltips_and_one_invariant_stands_alone() -> None:
    view = _view()
    at_loop = lsp.Position(LOOP_LINE - 1, 0)
    [copy] = [a for a in code_actions(view, lsp.Range(at_loop, at_loop)) if isinstance(a, lsp.Command)]
    assert copy.arguments == [_shown_formula().replace(" &&\n", " && ")]
    assert join_conjuncts(["n <= a + 1 || n == 0"]) == "n <= a + 1 || n == 0"
    assert join_conjuncts([]) == ""


def test_a_witness_joins_the_copies_of_an_inlined_loop_parenthesised(tmp_path: Path) -> None:
    from quokka.verifier.verdict.witnesses import correctness_witness

    program = tmp_path / "p.c"
    program.write_text("int main() {\n  int i = 0;\n  while (i < 3) i++;\n  return 0;\n}\n")
    copies = [ProvenInvariant(loop, 3, 3, c, "houdini") for loop in ("L3", "L3_1")
              for c in ("i <= 1 || i == 3", "i >= 0")]
    result = Result(Verdict.TRUE, "r", str(program), invariants=tuple(copies))
    [item] = correctness_witness(result, program, data_model="LP64")["content"]
    copy = "((i <= 1 || i == 3) && (i >= 0))"
    assert item["invariant"]["value"] == f"{copy} || {copy}"
