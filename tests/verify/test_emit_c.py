"""The IR written as C (`emit_c`): the compiled check of counterexamples of programs without a C file."""

from __future__ import annotations

import pytest
from corpus import CORPUS, counter_program
from quokka.verifier import ir
from quokka.verifier.engines import bmc
from quokka.verifier.engines.base import EngineResult, Status
from quokka.verifier.exec import emit_c
from quokka.verifier.exec.replay import gcc_available
from quokka.verifier.ir.builder import ProgramBuilder, add, lt, ne, num
from quokka.verifier.verdict.checks import confirm_counterexample
from quokka.verifier.verdict.portfolio import Portfolio, PortfolioConfig
from quokka.verifier.verdict.results import Verdict

needs_gcc = pytest.mark.skipif(not gcc_available(), reason="no C compiler")
UNSAFE = [e for e in CORPUS if e.expected == "unsafe" and e.witness is not None and e.c_source is None]


def _claimed(inputs: tuple[int, ...]) -> EngineResult:
    return EngineResult("claim", Status.UNSAFE, "claimed", inputs=inputs)


@needs_gcc
@pytest.mark.parametrize("example", UNSAFE, ids=lambda e: e.name)
def test_every_unsafe_corpus_witness_reaches_the_error_of_the_compiled_ir(example):
    cex, why = confirm_counterexample(example.program, _claimed(example.witness), None, compile_ir=True)
    assert cex is not None, why
    assert cex.confirmed_by == ("interpreter", "gcc"), cex.replay_notes


def test_the_corpus_has_unsafe_programs_of_every_control_construct():
    features = {f for e in UNSAFE for f in e.features}
    assert len(UNSAFE) >= 15
    assert {"goto", "break", "continue", "return", "nested", "cast"} <= features


@needs_gcc
def test_a_counterexample_the_compiled_program_does_not_follow_is_rejected(monkeypatch):
    """If C computed something else than the interpreter, the FALSE would be withdrawn."""
    example = UNSAFE[0]
    written = emit_c.program_to_c(example.program)
    monkeypatch.setattr(emit_c, "program_to_c", lambda program: written.replace("reach_error();", ";"))
    cex, why = confirm_counterexample(example.program, _claimed(example.witness), None, compile_ir=True)
    assert cex is None
    assert "did not reach the error" in why


@needs_gcc
def test_the_portfolio_confirms_a_false_of_an_ir_program_by_compiling_it():
    result = Portfolio(counter_program(7), PortfolioConfig(timeout_s=20)).run({"bmc": bmc.check})
    assert result.verdict is Verdict.FALSE, result.reason
    assert result.counterexample is not None
    assert "gcc" in result.counterexample.confirmed_by


def test_arithmetic_narrower_than_int_is_not_written_as_c():
    uchar = ir.int_types("LP64")["unsigned char"]
    b = ProgramBuilder("narrow.c")
    c = b.var("c", uchar)
    b.havoc(c)
    b.assign(c, add(c, num(1, uchar)))
    b.check(ne(c, num(0, uchar)))
    with pytest.raises(emit_c.NotEmittable, match="promotes"):
        emit_c.program_to_c(b.build())


def _havocked_array() -> ir.Program:
    b = ProgramBuilder("array.c")
    a = b.var("a", ir.ArrayType(ir.INT, 4))
    b.havoc(a)
    b.check(lt(ir.Select(a, num(0), ir.INT), num(5)))
    return b.build()


def test_a_havocked_array_is_not_written_as_c():
    with pytest.raises(emit_c.NotEmittable, match="havocked"):
        emit_c.program_to_c(_havocked_array())


def test_a_program_that_cannot_be_written_keeps_the_interpreters_confirmation_with_a_note():
    cex, why = confirm_counterexample(_havocked_array(), _claimed((9,)), None, compile_ir=True)
    assert cex is not None, why
    assert cex.confirmed_by == ("interpreter",)
    assert any("no faithful C form" in note for note in cex.replay_notes)
