"""Random testing as a falsification engine, over the shared corpus and a deep bounded loop."""

from __future__ import annotations

import pytest
from corpus import CORPUS
from quokka.invariants.testing import random_testing
from quokka.verifier.engines.base import Budget, Status
from quokka.verifier.exec.interp import run
from quokka.verifier.ir.builder import ProgramBuilder, add, eq, ge, lt, mul, num


@pytest.mark.parametrize("example", CORPUS, ids=lambda e: e.name)
def test_unsafe_only_on_unsafe_examples_with_inputs_that_replay(example):
    result = random_testing(0)(example.program, Budget.of(3))
    assert result.status is not Status.SAFE
    if result.status is Status.UNSAFE:
        assert example.expected == "unsafe"
        assert result.inputs is not None and run(example.program, result.inputs).outcome == "error"
    else:
        assert "runs reached the error" in result.reason


def test_bug_after_a_hundred_nonlinear_iterations():
    """An `_unwindbound100`-style bug: the loop stops at its bound before `r` reaches 0."""
    b = ProgramBuilder("deep.c")
    n, r, k, c = b.var("n"), b.var("r"), b.var("k"), b.var("c")
    b.havoc(n)
    b.assume(ge(n, num(0)))
    b.assign(r, mul(n, n))
    with b.loop():
        b.assign(c, add(c, num(1)))
        b.if_break(ge(c, num(100)))
        b.if_break(eq(r, num(0)))
        b.assign(r, add(r, num(-1)))
        b.assign(k, add(k, num(1)))
    b.check(lt(r, num(1)))
    result = random_testing(0)(b.build(), Budget.of(10))
    assert result.status is Status.UNSAFE
    assert result.inputs is not None and result.inputs[0] * result.inputs[0] > 99
