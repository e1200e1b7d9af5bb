"""`verify`: lower a file, race the engines and the proposer loop, return a checked `Result`."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace
from pathlib import Path

from quokka.verifier.engines.base import Budget, EngineResult, unknown
from quokka.verifier.errors import InputError, OutOfTime, UnsupportedFeature
from quokka.verifier.frontend import lower
from quokka.verifier.ir import Program, refusal
from quokka.verifier.ir.definedness import STRICT
from quokka.verifier.options import Options
from quokka.verifier.properties import PropertyChoice, decide
from quokka.verifier.verdict.checks import replay_violation, with_uninitialised
from quokka.verifier.verdict.claims import Claim, check_claims
from quokka.verifier.verdict.dump import dump_json, dump_program
from quokka.verifier.verdict.portfolio import Portfolio, PortfolioConfig, Strategy
from quokka.verifier.verdict.results import Diagnostic, Result, Verdict
from quokka.verifier.verdict.schedule import available_cores

from .annotations import certificate_exprs, parse_user_invariants, user_claims
from .llm.settings import ModelSettings
from .protocol import Proposer
from .quokka_loop import QuokkaLoop, user_invariant_strategy
from .registry import make_proposers, requested_model
from .testing import random_testing

CLAIMS_RESERVE_S = 5.0  # at most this much of `--timeout` is kept for checking the user's claims
CLAIMS_SHARE = 0.15  # ... and at most this share of it
CHECK_GRACE_S = 0.5  # a certificate or counterexample found at the deadline may be checked this long
EXIT_RESERVE_S = 0.4  # of the budget, kept for stopping the engines, printing and exiting


@dataclass(frozen=True)
class Target:
    """What `verify_path` checks: the C file, its data model and the property (`choice.checked`,
    None when none of the task's properties is supported), and how it reads uninitialised locals."""

    c_file: Path
    data_model: str
    choice: PropertyChoice
    uninitialised: str = STRICT


def resolve_target(path: Path, options: Options) -> Target:
    """The target of `path` (a C file or an SV-COMP task `.yml`); `options.property` overrides
    the task's property (unreach-call) or a C file's (assert), and `options.uninitialised` the
    reading of uninitialised locals (`strict` unless asked: SV-COMP reads them as arbitrary values,
    `nondet`, but nine `true` tasks of the code2inv set are reachable errors under that reading)."""
    if path.suffix in (".yml", ".yaml"):
        from quokka.verifier.task import read_task  # YAML only for a task file

        task = read_task(path)
        return Target(
            Path(task.file),
            options.data_model or task.data_model,
            task.choice(options.property),
            options.uninitialised or STRICT,
        )
    choice = decide(None, options.property)
    return Target(path, options.data_model or "LP64", choice, options.uninitialised or STRICT)


def resolve_input(path: Path, options: Options) -> tuple[Path, str]:
    """The C file and data model of `path` (a C file or an SV-COMP task `.yml`)."""
    target = resolve_target(path, options)
    return target.c_file, target.data_model


def _not_applicable(program: Program) -> set[str]:
    """The engines that could only say "not mine" of `program`: no process for them."""
    from quokka.verifier.engines import algebra, bitblast, execute

    out = set() if bitblast.applies(program) else {"bitblast"}
    out |= set() if algebra.applies(program) else {"algebra"}
    return out if execute.refusal(program) is None else out | {"execute"}


def engine_strategies(options: Options) -> dict[str, Strategy]:
    """The plain engines selected in `options` (imported lazily: each runs in its own process)."""
    from quokka.verifier.engines import algebra, bitblast, bmc, execute, fuzz, kinduction, spacer

    table: dict[str, Strategy] = {
        "bmc": lambda program, budget: bmc.check(program, budget),
        "bitblast": bitblast.check,
        "spacer": lambda program, budget: spacer.solve(program, budget),
        "testing": random_testing(options.seed),
        "fuzz": lambda program, budget: fuzz.check(program, budget, options.seed),
        "execute": execute.check,
        "algebra": algebra.check,
        "kind": lambda program, budget: kinduction.check_program(
            program, budget, dump_dir=_kind_dump(options)
        ),
    }
    return {name: table[name] for name in options.engines if name in table}


def _kind_dump(options: Options) -> Path | None:
    """Where k-induction writes its queries (`--dump-dir`)."""
    return None if options.dump_dir is None else options.dump_dir / "kinduction"


def strategies(
    program: Program, options: Options, proposers: list[Proposer], source: str | None
) -> dict[str, Strategy]:
    chosen = engine_strategies(options)
    for name in _not_applicable(program) & set(chosen):
        del chosen[name]
    if options.invariants:
        # parsed here, so that a bad invariant is bad input (exit 2), not an engine failure
        chosen["user"] = user_invariant_strategy(parse_user_invariants(program, options.invariants))
    if "houdini" in options.engines and proposers:
        chosen.update(_loops(proposers, options, source))
    refused = refusal(program)
    if refused is not None:
        return {name: s if name in FLOAT_STRATEGIES else _refused(name, refused)
                for name, s in chosen.items()}
    return chosen


def _loops(proposers: list[Proposer], options: Options, source: str | None) -> dict[str, Strategy]:
    """The proposer loop; when staged with a model, also without it ("quokka", the first stage's)
    and with it ("model", after the engines: `schedule`)."""
    if _model_strategy(options, proposers) != MODEL_STRATEGY:
        return {"quokka": QuokkaLoop(proposers, options, source).run}
    cheap = [p for p in proposers if p.name != "llm"]
    return {"quokka": QuokkaLoop(cheap, options, source).run,
            MODEL_STRATEGY: QuokkaLoop(proposers, options, source).run}  # fmt: skip


def _model_strategy(options: Options, proposers: list[Proposer]) -> str:
    """The strategy that asks the model (`_loops`): "model" when staged with other proposers."""
    names = {p.name for p in proposers}
    return MODEL_STRATEGY if options.cores != 0 and "llm" in names and names - {"llm"} else "quokka"


MODEL_STRATEGY = "model"
# what may handle floating point: FALSE or UNKNOWN only
FLOAT_STRATEGIES = frozenset({"bmc", "testing", "fuzz"})


def _refused(name: str, why: str) -> Strategy:
    """A strategy that answers UNKNOWN at once (`why`: the program has floating point)."""

    def refuse(program: Program, budget: Budget) -> EngineResult:
        return unknown(name, why)

    return refuse


def verify_program(
    program: Program,
    options: Options,
    source_path: Path | None = None,
    model: ModelSettings | None = None,
    deadline: float = math.inf,
) -> Result:
    """Verify a lowered program under `options` (proposers built from `options.proposers`, the
    language model from `model`, default `ModelSettings()`); every check done by `deadline`
    (`time.monotonic()`, `PortfolioConfig.deadline`)."""
    source = _read_text(source_path)
    model = model or ModelSettings()
    proposers = make_proposers(options, model)
    requested = requested_model(model)
    model_loop = _model_strategy(options, proposers)
    chosen = strategies(program, options, proposers, source)
    config = PortfolioConfig(
        timeout_s=options.timeout_s,
        memory_mb=options.memory_mb,
        source=source_path,
        replay_with_compiler=options.replay_with_compiler,
        minimal_certificate=not options.all_invariants,
        double_check=options.double_check,
        uncapped=frozenset({model_loop}) if any(p.name == "llm" for p in proposers) else frozenset(),
        # testing's finds come within seconds; it should not slow the provers down meanwhile
        yielding=frozenset({"testing", "fuzz"}),
        # a model asked for by name: its candidates are reported even when another engine decides
        reporting=frozenset({model_loop}) if requested else frozenset(),
        cores=available_cores() if options.cores is None else options.cores,
        instant=frozenset() if refusal(program) is None else frozenset(chosen) - FLOAT_STRATEGIES,
        deadline=deadline,
    )
    return Portfolio(program, config).run(chosen)


def verify_path(
    path: Path, options: Options, model: ModelSettings | None = None, started: float | None = None
) -> Result:
    """Verify a C file or task for its property (the language model's settings: `model`);
    unsupported C features or properties give UNKNOWN. Raises `InputError` on bad input.
    The budget `options.timeout_s` counts from `started` (`time.monotonic()`, default now; the
    command passes its process's start) and covers everything, from reading the file to the
    last check, less `EXIT_RESERVE_S`; a stage it cuts short is UNKNOWN ("timeout while
    parsing"). The result's `time_s` is the whole run's."""
    started = time.monotonic() if started is None else started
    deadline = started + options.timeout_s - EXIT_RESERVE_S
    target = resolve_target(path, options)
    checked = target.choice.checked
    if checked is None:
        return _unknown(target, target.choice.reason, started)
    try:
        program = lower(target.c_file, target.data_model, checked, target.uninitialised, deadline=deadline)
    except UnsupportedFeature as exc:
        return _unknown(target, str(exc), started, Diagnostic.of_error(exc, str(target.c_file)))
    except OutOfTime as exc:
        return _unknown(target, str(exc), started)
    if options.dump_dir is not None:
        dump_program(program, options.dump_dir)
    validated = _violation_witness(program, options, target, started)
    if validated is not None and validated.verdict is Verdict.FALSE:
        return with_property(validated, target.choice)
    witness = _witness(options, target)
    claims = user_claims(program, _read_text(target.c_file), options.invariants, witness)
    options = options.with_(invariants=(*options.invariants, *witness)) if witness else options
    budget = deadline - time.monotonic() - (_claims_reserve(options) if claims else 0.0)
    if budget <= 0.0:
        return _unknown(target, "timeout after reading the program, before any engine ran", started)
    result = verify_program(program, options.with_(data_model=target.data_model, timeout_s=budget),
                            target.c_file, model, deadline + CHECK_GRACE_S)
    result = _with_claims(program, result, claims, Budget(deadline))
    result = with_uninitialised(with_property(result, target.choice), target.uninitialised)
    if validated is not None:
        result = replace(result, extra={**result.extra, "violation_witness": validated.reason})
    result = replace(result, time_s=time.monotonic() - started)
    if options.dump_dir is not None:
        dump_json(options.dump_dir, "result.json", result.to_json())
    return result


def _witness(options: Options, target: Target) -> list[tuple[int, str]]:
    """The loop invariants of `--witness-in` as (line, C expression); a witness of another file,
    or one that cannot be read, is bad input."""
    if options.witness_in is None:
        return []
    from quokka.verifier.verdict.witnesses import WitnessError, witness_invariants  # YAML only for a witness

    try:
        found = witness_invariants(options.witness_in, target.c_file)
    except WitnessError as exc:
        raise InputError(None, str(exc)) from None
    return [(inv.line, inv.expr) for inv in found]


def _violation_witness(program: Program, options: Options, target: Target, started: float) -> Result | None:
    """`--witness-in` with a violation sequence, replayed as SV-COMP's validators do: FALSE with
    the counterexample when its values lead to the error (None when it is no violation witness)."""
    if options.witness_in is None:
        return None
    from quokka.verifier.verdict.witnesses import WitnessError, violation_waypoints

    try:
        values = violation_waypoints(options.witness_in, target.c_file)
    except WitnessError as exc:
        raise InputError(None, str(exc)) from None
    if values is None:
        return None
    cex, why = replay_violation(program, [(v.line, v.value) for v in values], target.c_file)
    elapsed = time.monotonic() - started
    if cex is None:
        return Result(Verdict.UNKNOWN, f"violation witness not confirmed: {why}", str(target.c_file), elapsed)
    reason = f"violation witness confirmed: error reached at line {cex.error_line}"
    file = str(target.c_file)
    return Result(Verdict.FALSE, reason, file, elapsed, counterexample=cex, decided_by="witness")


def _claims_reserve(options: Options) -> float:
    """Seconds of the budget kept for checking the user's claims after the verdict."""
    return min(CLAIMS_RESERVE_S, CLAIMS_SHARE * float(options.timeout_s))


def _with_claims(program: Program, result: Result, claims: list[Claim], budget: Budget) -> Result:
    """`result` with each of the user's claims checked (valid, refuted or unknown)."""
    if not claims:
        return result
    support = certificate_exprs(program, result.invariants) if result.verdict is Verdict.TRUE else {}
    return replace(result, claims=check_claims(program, claims, budget, support))


def _unknown(target: Target, reason: str, started: float, cause: Diagnostic | None = None) -> Result:
    result = Result(Verdict.UNKNOWN, reason, str(target.c_file), time.monotonic() - started, cause=cause)
    return with_property(result, target.choice)


def with_property(result: Result, choice: PropertyChoice) -> Result:
    """`result` saying what was checked (`extra`: property, not_checked) and, in its reason,
    which of the task's properties were not."""
    reason = f"{result.reason} ({choice.note})" if choice.note else result.reason
    return replace(result, reason=reason, extra={**result.extra, **choice.to_json()})


def _read_text(path: Path | None) -> str | None:
    if path is None:
        return None
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
