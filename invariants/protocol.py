"""What every invariant proposer receives and returns.

Proposers only suggest: a `Candidate` is a guess at a loop-head invariant, and only the verifier
decides whether it holds. `rejected` marks a guess that could not even be turned into IR (it is
reported, never checked).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

from quokka.verifier.ir import Expr, IntType, LoopInfo, Program, VarDecl

State = Mapping[str, int]  # IR variable name -> value


@dataclass(frozen=True)
class LoopContext:
    """One loop and the integer variables in scope at its head (IR declarations)."""

    loop: LoopInfo
    variables: tuple[VarDecl, ...]


@dataclass(frozen=True)
class ProposalContext:
    """Everything a proposer may use in one round.

    `ctis` holds, per loop id, extra loop-head states from earlier rounds (counterexamples to
    induction and the like), keyed by the C names visible at the loop or by IR names.
    """

    program: Program
    source: str | None
    loops: tuple[LoopContext, ...]
    ctis: Mapping[str, tuple[State, ...]] = field(default_factory=dict)
    budget_s: float = 10.0
    seed: int = 0


@dataclass(frozen=True)
class Candidate:
    """A candidate invariant for the head of `loop_id`: an IR expression and its C text."""

    loop_id: str
    expr: Expr
    text: str
    proposer: str
    sample: int | None = None
    raw: str | None = None
    rejected: str | None = None


class Proposer(Protocol):
    name: str

    def propose(self, context: ProposalContext) -> list[Candidate]: ...


def loop_contexts(program: Program) -> tuple[LoopContext, ...]:
    """One `LoopContext` per loop: the integer variables its `scope` names, in scope order."""
    out = []
    for info in program.loops:
        names = dict.fromkeys(ir_name for _, ir_name in info.scope)
        decls = [program.var(n) for n in names]
        out.append(LoopContext(info, tuple(d for d in decls if isinstance(d.type, IntType))))
    return tuple(out)
