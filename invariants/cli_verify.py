"""`quokka verify`: verify one C file or SV-COMP task and print the verdict with its evidence."""

from __future__ import annotations

import argparse
import gc
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from quokka.verifier.cli_args import memory_mb, non_negative_int, positive_int, seconds, seed, temperature
from quokka.verifier.errors import InputError, QuokkaError
from quokka.verifier.options import ENGINES, UNINITIALISED_READINGS, Options
from quokka.verifier.properties import READINGS

if TYPE_CHECKING:
    from quokka.verifier.verdict.results import Result

    from .llm.settings import ModelSettings

# `register` is all that `quokka verify --help` runs: what verifying needs is imported by `run`


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "verify",
        help="verify a C program or SV-COMP task (unreach-call, no-overflow)",
        description="Prove that the error is unreachable (TRUE, with invariants), find inputs that "
        "reach it (FALSE, replayed), or say why not (UNKNOWN). Exit 0: TRUE/FALSE, 1: UNKNOWN, 2: bad input. "
        "The error depends on the property: 'unreach-call' (SV-COMP: only a call of reach_error() is the "
        "error; a failing assert() aborts, so the path ends there), 'assert' (reach_error() and a failing "
        "assert() are both errors) or 'no-overflow' (SV-COMP: the error is a signed integer operation whose "
        "result does not fit its type; reach_error() is no error). A task .yml is checked for unreach-call "
        "when it lists it, else for no-overflow when it lists that (its other properties are reported as "
        "not checked), and is UNKNOWN ('property not supported: NAME') otherwise; a C file is checked for "
        "assert.",
    )
    parser.add_argument("file", type=Path, help="a .c/.i file or an SV-COMP task .yml")
    parser.add_argument("--timeout", type=seconds, help="wall-clock budget in seconds (default 60)")
    parser.add_argument("--data-model", choices=["ILP32", "LP64"], help="default: the task's, else LP64")
    parser.add_argument(
        "--property",
        choices=list(READINGS),
        help="what the error is: unreach-call (reach_error() only; a failing assert() aborts), assert "
        "(reach_error() and failing assert()s) or no-overflow (signed overflow); default: the task's "
        "(unreach-call, else no-overflow), else assert",
    )
    parser.add_argument(
        "--uninitialised",
        choices=list(UNINITIALISED_READINGS),
        help="reading an uninitialised local: nondet (an arbitrary value of its type, as SV-COMP reads it) "
        "or strict (undefined behaviour: no FALSE may depend on it); default: strict (SV-COMP's reading "
        "is nondet)",
    )
    parser.add_argument(
        "--engines",
        help=f"comma-separated, of {','.join(ENGINES)} (default: {','.join(Options().engines)}; "
        "bitblast starts only for loop-free programs and those computing with bits, fuzz only with a C file, "
        "algebra only where a loop asserts a nonlinear equality; kind: k-induction, not by default)",
    )
    parser.add_argument(
        "--proposers",
        help="comma-separated: dynamic (from runs), arrays (quantified, over array cells), annotations "
        "(your ACSL), accel (closed forms of accelerated loops, from the second round), absint (polyhedra "
        "at loop heads by abstract interpretation, from the second round), llm, or 'none' "
        "(default: dynamic,arrays,annotations,accel)",
    )
    parser.add_argument(
        "--invariant",
        action="append",
        default=[],
        metavar="LINE:EXPR",
        help="check your invariant for the loop on (or inserted after) LINE; repeatable",
    )
    parser.add_argument(
        "--model", help="a local transformers model (directory, or name: `quokka model list`) as LLM "
        "proposer, asked from the first round; `auto`: the installed quokka-smollm2, asked once the "
        "model-free first round has not proved the program; `none`: no model"
    )
    parser.add_argument("--endpoint", help="base URL of an OpenAI-compatible server for the LLM proposer")
    parser.add_argument("--samples", type=positive_int, help="LLM samples per prompt (default 8)")
    parser.add_argument("--temperature", type=temperature, help="LLM sampling temperature (default 0.8)")
    parser.add_argument(
        "--cores", type=non_negative_int,
        help="at most this many strategies at once, the cheap ones first (default: the cores this process "
        "may use; quokka batch gives each task its share); 0: all at once",
    )
    parser.add_argument("--memory", type=memory_mb, dest="memory_mb", help="memory limit per engine in MB")
    parser.add_argument("--seed", type=seed, help="random seed (default 0)")
    parser.add_argument(
        "--no-compiler-replay", action="store_true", help="confirm counterexamples in the interpreter only"
    )
    parser.add_argument(
        "--witness-in", type=Path, metavar="FILE",
        help="a witness 2.0 to validate: a correctness witness's loop invariants are each checked (valid, "
        "refuted or unknown); a violation witness is replayed (FALSE when its values reach the error)",
    )
    parser.add_argument(
        "--double-check", action="store_true",
        help="re-check a TRUE certificate with a second solver (cvc5) over an independent encoding",
    )
    parser.add_argument(
        "--all-invariants", action="store_true",
        help="show every proven invariant of the certificate, not only those that carry the proof",
    )
    parser.add_argument("--dump-dir", type=Path, help="write IR, verification conditions and CHC here")
    parser.add_argument(
        "--witness",
        type=Path,
        metavar="FILE",
        help="write an SV-COMP witness 2.0 (YAML) backing a TRUE or FALSE verdict",
    )
    parser.add_argument(
        "--profile", action="store_true",
        help="also print where the time went: per engine, its solver calls by kind (count, total, slowest, "
        "answers), and the checks of the verdict (in --json and --dump-dir's result.json: `profile`)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object (the Result wire format)")
    # `started`: when the run began (`cli.main`)
    parser.set_defaults(func=run, exit_at_once=True, started=None)


def parse_invariant_args(values: list[str]) -> tuple[tuple[int, str], ...]:
    out = []
    for value in values:
        line, sep, expr = value.partition(":")
        if not sep or not line.strip().isdigit() or not expr.strip():
            raise InputError(None, f"--invariant expects LINE:EXPR, got {value!r}")
        out.append((int(line), expr.strip()))
    return tuple(out)


def settings_from_args(args: argparse.Namespace) -> tuple[Options, ModelSettings]:
    """The core's options and the model's settings: `[tool.quokka]` above the file, then the flags."""
    from .llm.settings import from_pyproject

    options, model = from_pyproject(args.file.resolve().parent)
    options = options.with_(
        timeout_s=args.timeout,
        data_model=args.data_model,
        property=args.property,
        uninitialised=args.uninitialised,
        engines=_split(args.engines),
        proposers=_split(args.proposers),
        invariants=parse_invariant_args(args.invariant) or None,
        memory_mb=args.memory_mb,
        seed=args.seed,
        dump_dir=args.dump_dir,
        replay_with_compiler=False if args.no_compiler_replay else None,
        all_invariants=True if args.all_invariants else None,
        witness_in=args.witness_in,
        double_check=True if args.double_check else None,
        cores=args.cores,
    )
    return options, model.with_(
        model=args.model, endpoint=args.endpoint, samples=args.samples, temperature=args.temperature
    )


def _split(value: str | None) -> tuple[str, ...] | None:
    return None if value is None else tuple(v.strip() for v in value.split(",") if v.strip())


def run(args: argparse.Namespace) -> int:
    verify_path = _import_verifier()
    from quokka.verifier.verdict.contract import VerifyExit
    try:
        options, model = settings_from_args(args)
        result = verify_path(args.file, options, model, args.started)
        if args.witness is not None:
            _write_witness(args, result, options)
    except QuokkaError as exc:
        return _bad_input(args, exc)
    if args.json:
        sys.stdout.write(json.dumps(result.to_json()) + "\n")
    else:
        from .report import print_profile, print_result

        print_result(result)
        if args.profile:
            print_profile(result)
    return VerifyExit.of(result)


def _import_verifier() -> Callable[[Path, Options, ModelSettings, float | None], Result]:
    """`verify.verify_path`, imported without the cycle collector (the verifier's thousands of
    long-lived objects would make it run over and over, ~8% of the import) and then frozen out of
    its reach: neither this process nor the strategies it forks walk them again (a walk would also
    copy each forked child's shared pages)."""
    gc.disable()
    try:
        from .verify import verify_path
    finally:
        gc.freeze()
        gc.enable()
    return verify_path


def _write_witness(args: argparse.Namespace, result: Result, options: Options) -> None:
    from quokka.verifier.verdict.witnesses import input_file_name, witness_for, write_witness

    from .verify import resolve_input

    c_file, data_model = resolve_input(args.file, options)
    task_file = args.file if args.file.suffix in (".yml", ".yaml") else None
    entry = witness_for(result, c_file, data_model=data_model, file_name=input_file_name(c_file, task_file))
    if entry is None:
        sys.stderr.write("quokka verify: no witness for an unknown verdict\n")
        return
    write_witness(entry, args.witness)


def _bad_input(args: argparse.Namespace, exc: QuokkaError) -> int:
    from quokka.verifier.verdict.contract import VerifyExit
    from quokka.verifier.verdict.results import Diagnostic

    diagnostic = Diagnostic.of_error(exc, str(args.file))
    if args.json:
        sys.stdout.write(json.dumps(diagnostic.to_json()) + "\n")
    sys.stderr.write(f"quokka verify: {diagnostic.reason}\n")
    return VerifyExit.BAD_INPUT
