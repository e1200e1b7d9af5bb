"""Every synthetic template: its invariant is proven by the re-check and implies the assertion."""

from __future__ import annotations

from pathlib import Path

import pytest
from quokka.invariants.train.recheck import check_target, loop_for
from quokka.invariants.train.sources import Target
from quokka.invariants.train.synthetic import (
    COMPANION_TEMPLATES,
    HEADER,
    TEMPLATES,
    Synthetic,
    generate,
    generate_companions,
    write_all,
)
from quokka.verifier.engines.base import Budget
from quokka.verifier.engines.inductive import check
from quokka.verifier.frontend import lower, parse_invariant

PER_TEMPLATE = 2
SEED = 11


def _programs(template: str, in_loop_share: float) -> list[Synthetic]:
    programs = generate(PER_TEMPLATE * len(TEMPLATES), seed=SEED, in_loop_share=in_loop_share)
    return [p for p in programs if p.template == template]


def test_generate_cycles_sorted_templates_deterministically() -> None:
    programs = generate(len(TEMPLATES) + 1, seed=5)
    names = sorted(TEMPLATES)
    assert [p.template for p in programs] == [*names, names[0]]
    assert generate(len(TEMPLATES) + 1, seed=5) == programs
    assert generate(len(TEMPLATES) + 1, seed=6) != programs
    assert all(TEMPLATES[t].kind in ("linear", "polynomial") for t in TEMPLATES)


def test_a_share_of_programs_asserts_its_invariant_in_the_loop() -> None:
    programs = generate(200, seed=SEED)
    in_loop = [p for p in programs if p.in_loop]
    assert 60 < len(in_loop) < 140
    for p in in_loop:
        lines = p.source.splitlines()
        assert lines[p.loop_line - 1].strip() == "while (1) {", p.name
        assert lines[p.loop_line].strip() == f"__VERIFIER_assert({p.invariant});", p.name
        assert lines[p.loop_line + 1].strip().startswith("if (!("), p.name
        assert p.source.count("__VERIFIER_assert(") == 2, p.name  # the header's and the loop's
        assert p.name.endswith(f"-ll_{programs.index(p)}")
    assert not any(p.in_loop for p in generate(50, seed=SEED, in_loop_share=0.0))


def test_programs_come_with_either_header() -> None:
    programs = generate(100, seed=SEED)
    nla = [p for p in programs if "assume_abort_if_not" in p.source]
    assert 20 < len(nla) < 80
    assert all(f'__assert_fail("0", "{p.name}.c", 4, "reach_error")' in p.source for p in nla)
    assert all(p.source.startswith(HEADER) for p in programs if p not in nla)


@pytest.mark.parametrize("in_loop_share", [0.0, 1.0])
@pytest.mark.parametrize("template", sorted(TEMPLATES))
def test_template_invariant_is_proven(template: str, in_loop_share: float, tmp_path: Path) -> None:
    programs = _programs(template, in_loop_share)
    assert len(programs) == PER_TEMPLATE
    assert all(p.in_loop == (in_loop_share == 1.0) for p in programs)
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


def test_an_in_loop_program_can_teach_the_whole_invariant(tmp_path: Path) -> None:
    """The same programs (same seed): the target is the whole invariant, whose first conjunct is the
    assertion, and the re-check proves it at the `while (1)` head."""
    count = len(TEMPLATES)
    first = generate(count, seed=SEED, in_loop_share=1.0)
    whole = generate(count, seed=SEED, in_loop_share=1.0, in_loop_whole=True)
    assert [p.source for p in whole] == [p.source for p in first]
    assert all(w.invariant.split(" && ")[0] == f.invariant for w, f in zip(whole, first, strict=True))
    assert any(" && " in w.invariant for w in whole)
    for p, path in zip(whole, write_all(whole, tmp_path), strict=True):
        checked = check_target(Target(path, p.loop_line, p.invariant, "synthetic"))
        assert checked.proven, (p.name, p.invariant, checked.reason)


@pytest.mark.parametrize("in_loop_share", [0.0, 1.0])
@pytest.mark.parametrize("template", sorted(COMPANION_TEMPLATES))
def test_a_companion_template_needs_its_companions(
    template: str, in_loop_share: float, tmp_path: Path
) -> None:
    """Its whole invariant is proven in both forms; its first conjunct (the in-loop assertion) is
    not inductive alone, and the in-loop form teaches the whole invariant."""
    count = PER_TEMPLATE * len(COMPANION_TEMPLATES)
    programs = [p for p in generate_companions(count, SEED, in_loop_share) if p.template == template]
    assert [p.in_loop for p in programs] == [in_loop_share == 1.0] * PER_TEMPLATE
    for p, path in zip(programs, write_all(programs, tmp_path), strict=True):
        first = p.invariant.split(" && ")[0]
        assert " && " in p.invariant, p.name
        assert check_target(Target(path, p.loop_line, p.invariant, "synthetic")).proven, (p.name, p.invariant)
        alone = check_target(Target(path, p.loop_line, first, "synthetic"))
        assert not alone.proven, (p.name, first)
        if p.in_loop:
            assert f"__VERIFIER_assert({first});" in p.source, p.name
