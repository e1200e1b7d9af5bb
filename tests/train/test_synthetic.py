"""Every synthetic template: its invariant is proven by the re-check and implies the assertion."""

from __future__ import annotations

from pathlib import Path

import pytest
from quokka.invariants.train.recheck import check_target, loop_for
from quokka.invariants.train.sources import Target
from quokka.invariants.train.synthetic import TEMPLATES, Synthetic, generate, write_all
from quokka.verifier.engines.base import Budget
from quokka.verifier.engines.inductive import check
from quokka.verifier.frontend import lower, parse_invariant

PER_TEMPLATE = 2
SEED = 11


def _programs(template: str) -> list[Synthetic]:
    programs = generate(PER_TEMPLATE * len(TEMPLATES), seed=SEED)
    return [p for p in programs if p.template == template]


def test_generate_cycles_sorted_templates_deterministically() -> None:
    programs = generate(len(TEMPLATES) + 1, seed=5)
    names = sorted(TEMPLATES)
    assert [p.template for p in programs] == [*names, names[0]]
    assert generate(len(TEMPLATES) + 1, seed=5) == programs
    assert generate(len(TEMPLATES) + 1, seed=6) != programs
    assert all(TEMPLATES[t][0] in ("linear", "polynomial") for t in TEMPLATES)


@pytest.mark.parametrize("template", sorted(TEMPLATES))
def test_template_invariant_is_proven(template: str, tmp_path: Path) -> None:
    programs = _programs(template)
    assert len(programs) == PER_TEMPLATE
    for p, path in zip(programs, write_all(programs, tmp_path), strict=True):
        assert "while" in p.source.splitlines()[p.loop_line - 1], p.name
        target = Target(path, p.loop_line, p.invariant, "synthetic")
        checked = check_target(target)
        assert checked.proven, (p.name, p.invariant, checked.reason)
        program = lower(path, "LP64")
        info = loop_for(program, target)
        assert info is not None
        expr = parse_invariant(p.invariant, program, info.id)
        obligations = check(program, {info.id: expr}, Budget.of(10.0))
        assert obligations.all_valid, (p.name, p.invariant, obligations.summary())
