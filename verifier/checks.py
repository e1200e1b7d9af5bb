"""The two gates every verdict passes: certificates re-checked, counterexamples replayed."""

from __future__ import annotations

from pathlib import Path

from .engines import inductive
from .engines.base import Budget, EngineResult, Status
from .interp import Execution, run
from .ir import Binary, Expr, Havoc, Program, VarDecl
from .printer import format_expr_c_names
from .replay import is_nondet_call, replay_inputs, replay_with_compiler
from .results import Counterexample, InputValue, ProvenInvariant


def conjuncts(e: Expr) -> list[Expr]:
    """The top-level `&&` operands of `e`."""
    if isinstance(e, Binary) and e.op == "&&":
        return conjuncts(e.left) + conjuncts(e.right)
    return [e]


def certificate_result(
    program: Program, result: EngineResult, budget: Budget
) -> tuple[tuple[ProvenInvariant, ...] | None, str]:
    """The proven invariants of `result` (None when the certificate does not check) and why."""
    check = inductive.prove_with(program, result.invariants, budget)
    if check.status is not Status.SAFE:
        return None, check.reason
    sources = result.stats.get("sources")
    sources = sources if isinstance(sources, dict) else {}
    out = []
    for loop_id, inv in sorted(result.invariants.items()):
        info = program.loop(loop_id)
        for part in conjuncts(inv):
            text = format_expr_c_names(part, program, loop_id)
            source = sources.get((loop_id, part), result.engine)
            out.append(
                ProvenInvariant(loop_id, info.coord.line, info.coord.column, text, result.engine, source)
            )
    return tuple(out), check.reason


def confirm_counterexample(
    program: Program, result: EngineResult, source: Path | None
) -> tuple[Counterexample | None, str]:
    """Replay `result.inputs`; a counterexample only when the error is really reached."""
    if result.inputs is None:
        return None, "no inputs to replay"
    execution = run(program, result.inputs, check_uninitialised=True)
    if execution.outcome != "error":
        return None, f"replay in the interpreter ended with '{execution.outcome}': {execution.message}"
    if execution.overflows:
        return None, f"the path overflows signed arithmetic (undefined behaviour) at {execution.overflows[0]}"
    if isinstance(replay_inputs(execution), str):
        execution = _with_zeroed_locals(program, execution)
    if execution.uninitialised_reads:
        read = execution.uninitialised_reads[0]
        return None, f"the path {read.describe(_c_name(program, read.variable))} (undefined behaviour)"
    confirmed = ["interpreter"]
    if source is not None and source.suffix in (".c", ".i"):
        compiled_inputs = replay_inputs(execution)
        if isinstance(compiled_inputs, str):
            return None, f"the compiled program cannot follow this path: {compiled_inputs}"
        compiled = replay_with_compiler(
            source, compiled_inputs, program.data_model, property_name=program.property_name
        )
        if compiled.status == "not_reached":
            return None, f"the compiled program did not reach the error: {compiled.detail}"
        if compiled.status == "reached":
            confirmed.append("gcc")
    return _counterexample(program, execution, tuple(confirmed)), ""


def _with_zeroed_locals(program: Program, execution: Execution) -> Execution:
    """The same nondet values with uninitialised locals at 0, as a compiled run has them, if that
    still reaches the error without overflow; else `execution` unchanged."""
    nondet = iter(
        v for h, v in zip(execution.havocs, execution.inputs_used, strict=True) if is_nondet_call(h.origin)
    )

    def source(decl: VarDecl, havoc: Havoc) -> int:
        return next(nondet, 0) if is_nondet_call(havoc.origin) else 0

    again = run(program, source, check_uninitialised=True)
    return again if again.outcome == "error" and not again.overflows else execution


def _c_name(program: Program, name: str) -> str:
    return next((v.c_name for v in program.variables if v.name == name), name)


def _counterexample(program: Program, execution: Execution, confirmed: tuple[str, ...]) -> Counterexample:
    names = {v.name: v.c_name for v in program.variables}
    inputs = tuple(
        InputValue(h.origin, h.coord.line if h.coord else 0, value)
        for h, value in zip(execution.havocs, execution.inputs_used, strict=True)
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
        path_lines=_lines(execution),
        loop_heads=heads,
        confirmed_by=confirmed,
    )


def _lines(execution: Execution, limit: int = 2000) -> tuple[int, ...]:
    """The source lines of the path, consecutive repeats merged."""
    out: list[int] = []
    for coord in execution.path:
        if not out or out[-1] != coord.line:
            out.append(coord.line)
    return tuple(out[:limit])
