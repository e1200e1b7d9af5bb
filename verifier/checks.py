"""The two gates every verdict passes: certificates re-checked, counterexamples replayed."""

from __future__ import annotations

from pathlib import Path

from .engines import inductive
from .engines.base import Budget, EngineResult, Status
from .interp import Execution, run
from .ir import Binary, Expr, Program
from .printer import format_expr_c
from .replay import replay_with_compiler
from .results import Counterexample, InputValue, ProvenInvariant


def conjuncts(e: Expr) -> list[Expr]:
    """The top-level `&&` operands of `e`."""
    if isinstance(e, Binary) and e.op == "&&":
        return conjuncts(e.left) + conjuncts(e.right)
    return [e]


def certificate_result(
    program: Program, result: EngineResult, budget: Budget
) -> tuple[ProvenInvariant, ...] | None:
    """The proven invariants of `result`, or None when the certificate does not check."""
    check = inductive.prove_with(program, result.invariants, budget)
    if check.status is not Status.SAFE:
        return None
    sources = result.stats.get("sources", {})
    out = []
    for loop_id, inv in sorted(result.invariants.items()):
        info = program.loop(loop_id)
        for part in conjuncts(inv):
            text = format_expr_c(part, program)
            source = sources.get(text, result.engine) if isinstance(sources, dict) else result.engine
            out.append(ProvenInvariant(loop_id, info.coord.line, info.coord.column, text, result.engine, source))
    return tuple(out)


def confirm_counterexample(
    program: Program, result: EngineResult, source: Path | None
) -> tuple[Counterexample | None, str]:
    """Replay `result.inputs`; a counterexample only when the error is really reached."""
    if result.inputs is None:
        return None, "no inputs to replay"
    execution = run(program, result.inputs)
    if execution.outcome != "error":
        return None, f"replay in the interpreter ended with '{execution.outcome}': {execution.message}"
    if execution.overflows:
        return None, f"the path overflows signed arithmetic (undefined behaviour) at {execution.overflows[0]}"
    confirmed = ["interpreter"]
    if source is not None and source.suffix in (".c", ".i"):
        compiled = replay_with_compiler(source, execution.inputs_used, program.data_model)
        if compiled.status == "not_reached":
            return None, f"the compiled program did not reach the error: {compiled.detail}"
        if compiled.status == "reached":
            confirmed.append("gcc")
    return _counterexample(program, execution, tuple(confirmed)), ""


def _counterexample(program: Program, execution: Execution, confirmed: tuple[str, ...]) -> Counterexample:
    names = {v.name: v.c_name for v in program.variables}
    inputs = tuple(
        InputValue(origin, coord.line if coord else 0, value) for coord, origin, value in execution.havocs
    )
    error = execution.error
    where = (error.site or error.coord) if error else None
    heads = tuple(
        (h.loop_id, h.iteration, tuple(sorted((names.get(k, k), v) for k, v in h.values.items())))
        for h in execution.loop_heads[:200]
    )
    return Counterexample(
        inputs=inputs,
        error_line=where.line if where else 0,
        error_column=where.column if where else 0,
        path_lines=tuple(dict.fromkeys(c.line for c in execution.path)),
        loop_heads=heads,
        confirmed_by=confirmed,
    )
