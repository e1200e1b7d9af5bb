"""The two gates every verdict passes: certificates re-checked, counterexamples replayed."""

from __future__ import annotations

import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from quokka.verifier.cfg.uninitialised import possible_uninitialised_read
from quokka.verifier.encode.smt_bv import BITS
from quokka.verifier.engines import algebra, bitblast, bmc, execute, inductive, kinduction
from quokka.verifier.engines.base import Budget, EngineResult, Status
from quokka.verifier.errors import Coord
from quokka.verifier.exec import emit_c
from quokka.verifier.exec.interp import LONG_RUN_STEPS, Execution, run
from quokka.verifier.exec.replay import (
    InputDeclaration,
    ReplayResult,
    is_nondet_call,
    replay_inputs,
    replay_sanitized,
    replay_with_compiler,
)
from quokka.verifier.exec.shrink import shrink
from quokka.verifier.ir import (
    ArrayType,
    Assert,
    Expr,
    FloatType,
    Havoc,
    IntType,
    Program,
    Var,
    VarDecl,
    conjuncts,
    float_use,
    fpsem,
    walk,
    walk_stmts,
)
from quokka.verifier.ir.definedness import NONDET, ORIGIN
from quokka.verifier.ir.printer import format_expr_c_names
from quokka.verifier.ir.simplify import readable, readable_conjuncts
from quokka.verifier.properties import NO_OVERFLOW, UNREACH_CALL
from quokka.verifier.verdict.minimize import minimal_certificate
from quokka.verifier.verdict.results import Counterexample, InputValue, ProvenInvariant, Result

MINIMIZE_S = 2.0  # seconds at most for finding the minimal certificate (a guard: `minimize.TOTAL_RLIMIT`)
LOOP_FREE_INT_S = 1.0  # seconds for the integer check of a loop-free program before bit-blasting it
UNWOUND_BITS_S = 2.0  # seconds for the bit-precise unrolling of a program unrolled completely, then integers
LONG_RUN_S = 10.0  # the sanitized compiled run that confirms a path longer than the interpreter's limit
LONG_RUN_CHECK = "gcc+ASan+UBSan"
LATER_INPUT = "input read past the interpreter's limit"  # an `InputValue` origin: its line is unknown


def certificate_result(
    program: Program, result: EngineResult, budget: Budget
) -> tuple[tuple[ProvenInvariant, ...] | None, str]:
    """The proven invariants of `result` (None when the certificate does not check) and why.

    A loop-free program whose integer encoding is too hard within `LOOP_FREE_INT_S` is decided
    again bit-precisely (`bitblast`, a fresh unrolling and solver): exact, and SAFE only when no
    path has undefined behaviour, where both encodings mean the same. So is a program that a
    complete unrolling proved (`unwinding_bound`): unrolled again to the same bound, bit-precisely
    first, then with integers, each with a fresh solver. Polynomial equalities proven by algebra
    (`algebra`) are proven again, every path afresh: Z3's integers give up on them."""
    bound = unwinding_bound(result)
    if executed(result):
        check = execute.confirm(program, budget)
    elif program.loops and bound is not None:
        check = _unwound_again(program, bound, budget, result.engine == bitblast.ENGINE)
    elif algebra.algebraic(result):
        check = algebra.confirm(program, result.invariants, budget)
    elif kinduction.k_inductive(result) is not None:  # no 1-inductive certificate: the proof again
        check = kinduction.confirm(program, result, budget)
    elif program.loops:
        check = inductive.prove_with(program, result.invariants, budget)
    else:
        check = inductive.prove_with(program, {}, Budget.of(min(LOOP_FREE_INT_S, budget.remaining())))
        if check.status is not Status.SAFE:
            check = bitblast.check(program, budget)
    if check.status is not Status.SAFE:
        return None, check.reason
    return shown_invariants(program, result, result.invariants, minimal=False), check.reason


def executed(result: EngineResult) -> bool:
    """Whether `result` is SAFE by the one execution of a program that reads no input (`execute`)."""
    return result.stats.get("executed") is True and not result.invariants


def invariant_free(result: EngineResult) -> bool:
    """Whether `result`'s proof has no invariants: a complete unrolling of a program with loops
    (`unwinding_bound`), or its one execution."""
    return executed(result) or unwinding_bound(result) is not None


def unwinding_bound(result: EngineResult) -> int | None:
    """The bound of `result` when it is SAFE by a complete unrolling (BMC: no path runs a loop
    more often), with no invariant to check; else None."""
    bound = result.stats.get("bound")
    complete = result.stats.get("complete") is True and not result.invariants
    return bound if complete and isinstance(bound, int) else None


def _unwound_again(program: Program, bound: int, budget: Budget, bits_found_it: bool) -> EngineResult:
    """The unrolling to `bound`, afresh: bit-precise first (all the time there is when that is
    how it was found: the integers may not manage bit operations at all), then over integers."""
    bits_budget = budget if bits_found_it else budget.sub(UNWOUND_BITS_S)
    bits = bmc.check(program, bits_budget, start_bound=bound, max_bound=bound, solving="fresh",
                     domain=BITS, engine=bitblast.ENGINE)  # fmt: skip
    if bits.status is Status.SAFE or bits_found_it:
        return bits
    return bmc.check(program, budget, start_bound=bound, max_bound=bound, solving="fresh")


def minimal_invariants(program: Program, result: EngineResult, budget: Budget) -> tuple[ProvenInvariant, ...]:
    """The conjuncts of `result`'s checked certificate that carry the proof (`minimize`, within
    `budget`: a guard, its queries are limited by Z3's resource count), shown with pairs of bounds
    as equalities."""
    smaller = minimal_certificate(program, result.invariants, budget)
    return shown_invariants(program, result, smaller, minimal=True)


def shown_invariants(
    program: Program, result: EngineResult, invariants: Mapping[str, Expr], minimal: bool
) -> tuple[ProvenInvariant, ...]:
    """`invariants` (part of `result`'s checked certificate) as rows in C names, each text once
    per loop (two conjuncts may read the same: `x - y == 0` and `x == y`)."""
    sources = result.stats.get("sources")
    sources = sources if isinstance(sources, dict) else {}
    out = []
    for loop_id, inv in sorted(invariants.items()):
        info = program.loop(loop_id)
        parts = conjuncts(inv)
        shown = readable_conjuncts(parts) if minimal else [(k, readable(p)) for k, p in enumerate(parts)]
        texts: set[str] = set()
        for k, expr in shown:
            text = format_expr_c_names(expr, program, loop_id)
            if text in texts:
                continue
            texts.add(text)
            source = sources.get((loop_id, parts[k]), result.engine)
            out.append(
                ProvenInvariant(
                    loop_id,
                    info.coord.line,
                    info.coord.column,
                    text,
                    result.engine,
                    source,
                    _model_only(expr, program),
                )
            )
    return tuple(out)


def _model_only(e: Expr, program: Program) -> bool:
    """Whether `e` reads a pointer or a heap field (values of the heap model, not of C)."""
    heap = {v.name for v in program.variables if isinstance(v.type, ArrayType) and v.c_name.startswith("->")}
    return any(
        (isinstance(t := node.type, IntType) and t.is_pointer)
        or (isinstance(node, Var) and node.name in heap)
        for node in walk(e)
    )


DEEPER_RECURSION = (8, 16, 32)  # the depths a counterexample of a cut program is replayed at


def confirm_counterexample(
    program: Program, result: EngineResult, source: Path | None, *, compile_ir: bool = False
) -> tuple[Counterexample | None, str]:
    """Replay `result.inputs`; a counterexample only when the error is really reached. A path that
    reads an uninitialised local is one only under the nondet reading (`Program.uninitialised`).
    A program with floating point needs the compiled program to reach the error too (gcc's IEEE
    arithmetic is the reference; the interpreter's alone does not suffice). The compiled program
    is `source`'s; with `compile_ir` and no C file, the IR written as C (`emit_c`)."""
    execution = _interpreter_replay(program, result)
    if isinstance(execution, _StepLimit):
        return _long_run(program, result, execution.run, source, compile_ir=compile_ir)
    if isinstance(execution, str):
        return None, execution
    confirmed, notes = ["interpreter"], []
    if source is not None and source.suffix in (".c", ".i"):
        compiled: tuple[str, str] | None = _compiler_check(program, execution, source)
    else:
        compiled = _emitted_check(program, execution) if compile_ir and source is None else None
    if compiled is not None:
        outcome, detail = compiled
        if outcome == "rejected":
            return None, detail
        if outcome == "reached":
            confirmed.append("gcc")
        else:
            notes.append(detail)
    floating = float_use(program)
    if floating is not None and "gcc" not in confirmed:
        why = "; ".join(notes) or "no C file to compile"
        return None, f"floating point ({floating}): only a compiled replay confirms a counterexample ({why})"
    return _counterexample(program, execution, tuple(confirmed), tuple(notes)), ""


def confirm_smallest(
    program: Program, result: EngineResult, source: Path | None, *, compile_ir: bool = False
) -> tuple[Counterexample | None, str]:
    """`confirm_counterexample` of `result` with its inputs shrunk (`shrink`), or of `result` as
    found when the shrunk run is not confirmed (say, gcc does not follow it)."""
    if result.inputs is not None:
        smaller = shrink(program, result.inputs)
        if smaller != result.inputs:
            shrunk = replace(result, inputs=smaller)
            cex, _ = confirm_counterexample(program, shrunk, source, compile_ir=compile_ir)
            if cex is not None:
                return cex, ""
    return confirm_counterexample(program, result, source, compile_ir=compile_ir)


def confirm_deeper(
    program: Program, result: EngineResult, source: Path | None
) -> tuple[Counterexample | None, str]:
    """`confirm_smallest` for a program whose recursion was cut (`Program.cut_calls`), on the
    program lowered again from `source` with recursion inlined deeper (`DEEPER_RECURSION`, in turn):
    a run that goes past the cut (the compiled program follows it, the cut program cannot) is
    confirmed by the interpreter and gcc on the first that reaches as deep."""
    from quokka.verifier.errors import UnsupportedFeature
    from quokka.verifier.frontend import lower

    why = "the recursion was not cut"
    if not program.cut_calls or source is None or source.suffix not in (".c", ".i"):
        return None, why
    for depth in DEEPER_RECURSION:
        try:
            deeper = lower(
                source, program.data_model, program.property_name, program.uninitialised,
                recursion_depth=depth,
            )
        except UnsupportedFeature as exc:
            return None, f"recursion inlined to depth {depth}: {exc}"
        cex, why = confirm_smallest(deeper, result, source)
        if cex is not None or not deeper.cut_calls:
            return cex, why
    return None, why


def replay_violation(
    program: Program, values: Sequence[tuple[int, int]], source: Path | None
) -> tuple[Counterexample | None, str]:
    """Follow a violation witness: its `(line, value)`s answer the nondet calls in order (each on
    its line; any other `Havoc` is 0), as a counterexample would be replayed; the counterexample
    when the run reaches the error, else why the witness is not confirmed."""
    pending = list(values)
    misplaced: list[str] = []

    def answer(decl: VarDecl, havoc: Havoc) -> int:
        if not is_nondet_call(havoc.origin) or not pending or misplaced:
            return 0
        line, value = pending[0]
        if havoc.coord is not None and havoc.coord.line != line:
            misplaced.append(f"the witness's value for line {line} is asked for at {havoc.coord}")
            return 0
        pending.pop(0)
        if isinstance(decl.type, FloatType):  # the witness states the value, the input is its encoding
            return fpsem.to_bits(fpsem.from_int(value, decl.type), decl.type)
        return value

    execution = run(program, answer, check_uninitialised=True)
    if misplaced:
        return None, misplaced[0]
    if execution.outcome != "error":
        return None, f"following the witness ends with '{execution.outcome}' ({execution.message})"
    found = EngineResult("witness", Status.UNSAFE, "violation witness", inputs=execution.inputs_used)
    return confirm_counterexample(program, found, source)


def _long_run(
    program: Program, result: EngineResult, prefix: Execution, source: Path | None, *, compile_ir: bool
) -> tuple[Counterexample | None, str]:
    """A counterexample whose run is longer than the interpreter's limit (`prefix`: its first
    `LONG_RUN_STEPS` steps): confirmed only by the compiled program, built with the sanitizers,
    reaching the error with no report (`replay.replay_sanitized`), on the inputs of the prefix
    and then the rest of `result.inputs`. The program is `source`, or with `compile_ir` and no C
    file its IR written as C (every `Havoc` an input)."""
    limit = f"interpreter: the error not reached within {prefix.steps:,} steps (its limit)"
    refused = _long_run_refusal(program, prefix)
    if refused is not None:
        return None, f"{limit}; {refused}"
    rest = tuple(result.inputs or ())[len(prefix.inputs_used) :]
    if source is not None and source.suffix in (".c", ".i"):
        prepared = _compiler_inputs(program, prefix)
        if isinstance(prepared, _Unfollowable):
            return None, f"{limit}; the compiled program cannot follow this path: {prepared.reason}"
        known, declarations = prepared
        replayed = replay_sanitized(source, (*known, *rest), program.data_model, timeout_s=LONG_RUN_S,
                                    property_name=program.property_name, initialise=declarations)  # fmt: skip
    elif compile_ir and source is None:
        known = prefix.inputs_used
        replayed = _emitted_sanitized(program, (*known, *rest))
    else:
        return None, f"{limit}; no C file to compile"
    if replayed.status != "reached":
        return None, f"{limit}; {LONG_RUN_CHECK}: {replayed.status}: {replayed.detail}"
    return _long_run_counterexample(program, prefix, (len(known), rest), replayed, limit), ""


def _long_run_refusal(program: Program, prefix: Execution) -> str | None:
    """Why the compiled run cannot confirm a path the interpreter saw only the start of, or None."""
    if program.property_name == NO_OVERFLOW:
        return "under no-overflow a sanitizer's report is the error itself"
    if prefix.overflows:
        return f"the path overflows signed arithmetic (undefined behaviour) at {prefix.overflows[0]}"
    if program.uninitialised == NONDET:
        return None
    reads = prefix.uninitialised_reads
    read = reads[0] if reads else possible_uninitialised_read(program)
    if read is None:
        return None
    return (
        f"the program may read an uninitialised local, which no sanitizer sees: it "
        f"{read.describe(_c_name(program, read.variable))} on some path (--uninitialised nondet "
        "reads it as an arbitrary value)"
    )


def _emitted_sanitized(program: Program, inputs: Sequence[int]) -> ReplayResult:
    """`replay_sanitized` of the IR written as C (`emit_c`)."""
    try:
        text = emit_c.program_to_c(program)
    except emit_c.NotEmittable as exc:
        return ReplayResult("unavailable", f"the IR has no faithful C form ({exc})")
    with tempfile.TemporaryDirectory(prefix="quokka-ir-") as folder:
        c_file = Path(folder) / "program.c"
        c_file.write_text(text, encoding="utf-8")
        return replay_sanitized(c_file, inputs, program.data_model, timeout_s=LONG_RUN_S,
                                property_name=UNREACH_CALL)  # fmt: skip


def _long_run_counterexample(
    program: Program, prefix: Execution, fed: tuple[int, tuple[int, ...]], replayed: ReplayResult, limit: str
) -> Counterexample:
    """The counterexample of a sanitized compiled run that reached the error past the interpreter's
    limit: the inputs of `prefix`, then those the compiled run read beyond them (`fed`: how many
    inputs the prefix gave the compiled program, and the values that followed; a read past them
    is 0): their lines are unknown, and so is the error's state (its location only when the
    program has one)."""
    base = _counterexample(program, prefix, (LONG_RUN_CHECK,))
    known, rest = fed
    read = replayed.inputs_read if replayed.inputs_read is not None else known + len(rest)
    values = (*rest, *([0] * max(0, read - known - len(rest))))
    later = tuple(InputValue(LATER_INPUT, 0, value) for value in values[: max(0, read - known)])
    notes = (limit, f"{LONG_RUN_CHECK}: {replayed.detail} ({read} inputs read)")
    where = _only_error(program)
    return replace(
        base, inputs=(*base.inputs, *later), error_line=where.line if where else 0,
        error_column=where.column if where else 0, path_lines=(), loop_heads=(), error_state=(),
        replay_notes=notes,
    )  # fmt: skip


def _only_error(program: Program) -> Coord | None:
    """The error's position when the program has one (all its Asserts are there), else None."""
    places = {s.coord for s in walk_stmts(program.body) if isinstance(s, Assert)}
    return next(iter(places)) if len(places) == 1 else None


def _compiler_check(program: Program, execution: Execution, source: Path) -> tuple[str, str]:
    """("reached", detail), ("rejected", why the path is no counterexample) or ("note", why gcc
    does not confirm it: no compiler, or a value the compiled program cannot be given)."""
    compiled = _compiler_replay(program, execution, source)
    if isinstance(compiled, _Unfollowable):
        if compiled.arbitrary and program.uninitialised == NONDET:
            return "note", f"gcc replay skipped: {compiled.reason}"
        return "rejected", f"the compiled program cannot follow this path: {compiled.reason}"
    return _judged(compiled)


def _emitted_check(program: Program, execution: Execution) -> tuple[str, str]:
    """`_compiler_check` for a program without a C file: its IR written as C, every `Havoc` an
    input in the order the interpreter took them."""
    try:
        text = emit_c.program_to_c(program)
    except emit_c.NotEmittable as exc:
        return "note", f"gcc replay skipped: the IR has no faithful C form ({exc})"
    with tempfile.TemporaryDirectory(prefix="quokka-ir-") as folder:
        c_file = Path(folder) / "program.c"
        c_file.write_text(text, encoding="utf-8")
        replayed = replay_with_compiler(
            c_file, execution.inputs_used, program.data_model, property_name=UNREACH_CALL
        )
    return _judged(replayed)


def _judged(compiled: ReplayResult) -> tuple[str, str]:
    if compiled.status == "not_reached":
        return "rejected", f"the compiled program did not reach the error: {compiled.detail}"
    if compiled.status == "reached":
        return "reached", compiled.detail
    return "note", f"gcc replay {compiled.status}: {compiled.detail}"


def _interpreter_replay(program: Program, result: EngineResult) -> Execution | _StepLimit | str:
    """The run of `result.inputs` that reaches the error (uninitialised locals at 0 when that still
    does), the run cut off at the step limit, or why it is no counterexample."""
    if result.inputs is None:
        return "no inputs to replay"
    execution = run(program, result.inputs, check_uninitialised=True, max_steps=LONG_RUN_STEPS)
    if execution.outcome == "limit" and execution.steps >= LONG_RUN_STEPS:
        return _StepLimit(execution)
    if execution.outcome != "error":
        return f"replay in the interpreter ended with '{execution.outcome}': {execution.message}"
    if execution.overflows:
        return f"the path overflows signed arithmetic (undefined behaviour) at {execution.overflows[0]}"
    if isinstance(replay_inputs(execution), str):
        execution = _with_zeroed_locals(program, execution)
    if execution.uninitialised_reads and program.uninitialised != NONDET:
        read = execution.uninitialised_reads[0]
        return (
            f"the path {read.describe(_c_name(program, read.variable))} (undefined behaviour; "
            "--uninitialised nondet reads it as an arbitrary value)"
        )
    return execution


@dataclass(frozen=True)
class _StepLimit:
    """The interpreter's replay ran `LONG_RUN_STEPS` steps without ending; `run` is that prefix."""

    run: Execution


@dataclass(frozen=True)
class _Unfollowable:
    """Why the compiled program cannot follow a path; `arbitrary`: only because uninitialised
    locals it cannot set have values other than 0 (which the nondet reading allows)."""

    reason: str
    arbitrary: bool


def _compiler_replay(program: Program, execution: Execution, source: Path) -> ReplayResult | _Unfollowable:
    """The compiled program run on the path's inputs, or why it cannot follow the path."""
    prepared = _compiler_inputs(program, execution)
    if isinstance(prepared, _Unfollowable):
        return prepared
    inputs, declarations = prepared
    return replay_with_compiler(
        source, inputs, program.data_model, property_name=program.property_name, initialise=declarations
    )


def _compiler_inputs(
    program: Program, execution: Execution
) -> tuple[tuple[int, ...], tuple[InputDeclaration, ...]] | _Unfollowable:
    """The inputs of the compiled program for the path of `execution` and the declarations it must
    initialise from them: none when every uninitialised local is 0 (the compiled program zeroes
    them); under the nondet reading, the scalar ones that are not, each time they are declared."""
    plain = replay_inputs(execution)
    if not isinstance(plain, str):
        return plain, ()
    if program.uninitialised != NONDET:
        return _Unfollowable(plain, False)
    inputs: list[int] = []
    declarations: dict[InputDeclaration, None] = {}
    blocked: list[tuple[Havoc, int]] = []
    for value, havoc in zip(execution.inputs_used, execution.havocs, strict=True):
        declared = _input_declaration(program, havoc)
        if declared is not None:
            declarations[declared] = None
        if declared is not None or is_nondet_call(havoc.origin):
            inputs.append(value)
        elif value != 0:
            blocked.append((havoc, value))
    if blocked:
        first, value = blocked[0]
        reason = f"{_c_name(program, first.target)} ({first.origin}) is {value} at {first.coord}"
        return _Unfollowable(f"{reason}; compiled, it is 0", all(h.origin == ORIGIN for h, _ in blocked))
    return tuple(inputs), tuple(declarations)


def _input_declaration(program: Program, havoc: Havoc) -> InputDeclaration | None:
    """The declaration of an uninitialised scalar local in the program's own file, which the
    compiled copy can initialise from the inputs (None for anything else)."""
    coord = havoc.coord
    if havoc.origin != ORIGIN or coord is None or coord.file != program.file:
        return None
    decl = program.var(havoc.target)
    if not isinstance(decl.type, IntType) or decl.kind != "local":
        return None
    return InputDeclaration(coord.line, coord.column, decl.c_name)


def _with_zeroed_locals(program: Program, execution: Execution) -> Execution:
    """The same nondet values with uninitialised locals at 0, as a compiled run has them, if that
    still reaches the error without overflow; else `execution` unchanged."""
    nondet = iter(
        v for h, v in zip(execution.havocs, execution.inputs_used, strict=True) if is_nondet_call(h.origin)
    )

    def source(decl: VarDecl, havoc: Havoc) -> int:
        return next(nondet, 0) if is_nondet_call(havoc.origin) else 0

    again = run(program, source, check_uninitialised=True, max_steps=LONG_RUN_STEPS)
    return again if again.outcome == "error" and not again.overflows else execution


def _c_name(program: Program, name: str) -> str:
    return next((v.c_name for v in program.variables if v.name == name), name)


def _counterexample(
    program: Program, execution: Execution, confirmed: tuple[str, ...], notes: tuple[str, ...] = ()
) -> Counterexample:
    names = {v.name: v.c_name for v in program.variables if v.kind in ("global", "local")}
    read = {(r.variable, r.declared) for r in execution.uninitialised_reads}
    inputs = tuple(  # a declaration the program assigns before it reads it is no input
        InputValue(h.origin, h.coord.line if h.coord else 0, value)
        for h, value in zip(execution.havocs, execution.inputs_used, strict=True)
        if h.origin != ORIGIN or (h.target, h.coord) in read
    )
    error = execution.error
    where = (error.site or error.coord) if error else None
    visible = {info.id: {ir: c for c, ir in info.scope} for info in program.loops}
    heads = tuple(
        (
            h.loop_id,
            h.iteration,
            tuple(sorted((c, h.values[ir]) for ir, c in visible[h.loop_id].items() if ir in h.values)),
        )
        for h in execution.loop_heads[:200]
    )
    return Counterexample(
        inputs=inputs,
        error_line=where.line if where else 0,
        error_column=where.column if where else 0,
        path_lines=_lines(execution),
        loop_heads=heads,
        confirmed_by=confirmed,
        uninitialised_reads=_read_names(program, execution),
        replay_notes=notes,
        error_state=tuple(sorted((names[k], v) for k, v in execution.final.items() if k in names)),
    )


def _read_names(program: Program, execution: Execution) -> tuple[str, ...]:
    """Under the nondet reading, `file:line:col name` of each uninitialised local whose value the
    path reads (where it is declared; `name[]` for an array, whose elements are read when drawn)."""
    if program.uninitialised != NONDET:
        return ()
    reads = execution.uninitialised_reads
    scalars = [f"{r.declared or r.coord} {_c_name(program, r.variable)}" for r in reads]
    arrays = [
        f"{h.coord} {_c_name(program, h.target)}[]"
        for h in execution.havocs
        if h.origin == ORIGIN and isinstance(program.var(h.target).type, ArrayType)
    ]
    return tuple(dict.fromkeys([*scalars, *arrays]))


def with_uninitialised(result: Result, reading: str) -> Result:
    """`result` saying how uninitialised locals were read (`extra.uninitialised`: nondet or
    strict); when its counterexample reads one, which (`extra.uninitialised_reads`) and, in the
    reason, that the verdict assumes their values."""
    extra = {**result.extra, "uninitialised": reading}
    reads = result.counterexample.uninitialised_reads if result.counterexample is not None else ()
    if not reads:
        return replace(result, extra=extra)
    extra["uninitialised_reads"] = list(reads)
    note = f"reads uninitialised locals as arbitrary values (--uninitialised nondet): {', '.join(reads)}"
    return replace(result, reason=f"{result.reason} ({note})", extra=extra)


def _lines(execution: Execution, limit: int = 2000) -> tuple[int, ...]:
    """The source lines of the path, consecutive repeats merged."""
    out: list[int] = []
    for coord in execution.path:
        if not out or out[-1] != coord.line:
            out.append(coord.line)
    return tuple(out[:limit])
