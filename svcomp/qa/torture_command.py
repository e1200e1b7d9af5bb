"""What `quokka torture` does (its arguments are in `cli.py`; the campaign in `torture`)."""

from __future__ import annotations

import argparse
import json
import sys
import time

from quokka.svcomp.qa.torture import Campaign, Counts, Finding, Settings
from quokka.svcomp.tasks import load_tasks
from quokka.svcomp.ui import print_error, print_table
from quokka.verifier.errors import QuokkaError
from quokka.verifier.properties import UNREACH_CALL
from rich.console import Console
from rich.table import Table

EXIT_OK, EXIT_FOUND, EXIT_BAD_INPUT = 0, 1, 2


def torture_command(args: argparse.Namespace) -> int:
    err = Console(stderr=True)
    try:
        # the tasks' verdicts are reach-safety ones
        tasks = load_tasks(args.sets, UNREACH_CALL).tasks if args.sets else ()
    except QuokkaError as exc:
        print_error(err, str(exc))
        return EXIT_BAD_INPUT
    settings = Settings(args.minutes, args.seed, args.timeout, args.out)
    campaign = Campaign(settings, [t for t in tasks if t.expected is True], tasks)
    started = time.monotonic()
    show = not args.quiet and not args.json and err.is_terminal
    with err.status("torture") as status:
        counts = campaign.run(lambda c: status.update(_line(c, time.monotonic() - started)) if show else None)
    if args.json:
        findings = [f.__dict__ for f in campaign.findings]
        json.dump({"counts": counts.to_json(), "findings": findings}, sys.stdout)
        sys.stdout.write("\n")
    else:
        _print(Console(), counts, campaign.findings)
    return EXIT_FOUND if counts.failed else EXIT_OK


def _line(counts: Counts, elapsed: float) -> str:
    return (
        f"{elapsed:.0f} s: {counts.programs} programs, {counts.mutants} mutants, "
        f"{counts.fuzz_inputs} fuzz inputs, {counts.invariants} invariants, "
        f"{counts.array_claims} array claims, {counts.faults} faults; "
        f"wrong {counts.wrong}, "
        f"crashes {counts.crashes}, hangs {counts.hangs}"
    )


def _print(console: Console, counts: Counts, findings: list[Finding]) -> None:
    table = Table("trials", "count", title="quokka torture")
    rows = [
        ("generated programs (truth from gcc)", f"{counts.programs} ({counts.programs_true} true)"),
        ("mutants failing in gcc's build", f"{counts.mutants} of {counts.mutants_tried} tried"),
        ("fuzzed inputs", str(counts.fuzz_inputs)),
        ("adversarial invariants", str(counts.invariants)),
        ("quantified claims on array programs", str(counts.array_claims)),
        ("faults injected", str(counts.faults)),
        ("verdicts", ", ".join(f"{k} {v}" for k, v in counts.verdicts.items())),
        ("wrong verdicts", str(counts.wrong)),
        ("crashes", str(counts.crashes)),
        ("hangs", str(counts.hangs)),
    ]
    for row in rows:
        table.add_row(*row)
    print_table(console, table)
    for f in findings:
        console.print(f"{f.kind}: {f.trial}: {f.detail}", highlight=False, soft_wrap=True)
