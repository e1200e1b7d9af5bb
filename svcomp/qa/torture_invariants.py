"""Adversarial invariants for `quokka torture`: a task verified with a wrong, weak or ill-formed
loop invariant, given through one of the channels a user has: `--invariant LINE:EXPR`, an ACSL
`loop invariant` annotation in a copy of the program, or a correctness witness (`--witness-in`)
from a verifier that lies. A guess may cost a proof (or be refused as bad input); it must never
turn the verdict into a wrong one.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from quokka.verifier.errors import QuokkaError
from quokka.verifier.frontend import lower
from quokka.verifier.ir import LoopInfo
from quokka.verifier.verdict.results import ProvenInvariant, Result, Verdict
from quokka.verifier.verdict.witnesses import correctness_witness, write_witness

CHANNELS = ("option", "acsl", "witness")
CONSTANTS = (0, 1, 2, -1, 7, 100, 2147483647, 4294967295)


@dataclass(frozen=True)
class InvariantTrial:
    """What to verify (`program`, an annotated copy for ACSL) with which extra `quokka verify`
    arguments; `description` names the channel, the guess and its loop."""

    program: Path
    args: tuple[str, ...]
    description: str


def guess(names: Sequence[str], rng: random.Random) -> str:
    """A random invariant over `names`: mostly wrong, some true only without wrap-around or for
    some inputs, some over a name out of scope, some not C at all."""
    x, y, k = rng.choice(names), rng.choice(names), rng.choice(CONSTANTS)
    forms = (
        f"{x} <= {k}", f"{x} >= {k}", f"{x} == {y} + {k}", f"{x} % 2 == {k % 2}", f"{x} + 1 > {x}",
        f"{x} * {x} >= 0", f"{x} != {x}", "1", f"{x} < {y}", f"quokka_nosuch > {k}", f"{x} <=",
        f"{x} - {y} <= {k} && {y} - {x} <= {k}", f"{x} == {k} || {x} > {y}",
    )  # fmt: skip
    return rng.choice(forms)


def invariant_trial(
    program: Path, data_model: str, work: Path, rng: random.Random, name: str
) -> InvariantTrial | None:
    """A trial for one loop of `program` (None when it has none or does not lower)."""
    try:
        loops = lower(program, data_model).loops
    except QuokkaError:
        return None
    if not loops:
        return None
    info = rng.choice(loops)
    expr = guess([c for c, _ in info.scope] or ["x"], rng)
    channel = rng.choice(CHANNELS)
    described = f"{channel}: {expr} at line {info.coord.line}"
    if channel == "option":
        return InvariantTrial(program, ("--invariant", f"{info.coord.line}:{expr}"), described)
    if channel == "acsl":
        return InvariantTrial(_annotated(program, info, expr, work / name), (), described)
    witness = work / f"{Path(name).stem}.witness.yml"
    _lying_witness(program, data_model, info, expr, witness)
    return InvariantTrial(program, ("--witness-in", str(witness)), described)


def _annotated(program: Path, info: LoopInfo, expr: str, out: Path) -> Path:
    """A copy of `program` with `/*@ loop invariant expr; */` on its own line above the loop."""
    lines = program.read_text(errors="replace").splitlines(keepends=True)
    at = max(info.coord.line - 1, 0)
    out.write_text("".join([*lines[:at], f"/*@ loop invariant {expr}; */\n", *lines[at:]]))
    return out


def _lying_witness(program: Path, data_model: str, info: LoopInfo, expr: str, out: Path) -> None:
    """A correctness witness claiming `expr` at the loop, as a verifier that lies would write it."""
    claimed = ProvenInvariant(info.id, info.coord.line, info.coord.column, expr, "torture")
    result = Result(Verdict.TRUE, "claimed", str(program), invariants=(claimed,))
    write_witness(correctness_witness(result, program, data_model=data_model), out)
