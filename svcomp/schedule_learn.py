"""Learn `schedule.toml` from a batch store: which strategy decided each task of which kind, how fast.

    quokka batch SETS... --db race.sqlite --config race --timeout 20      # every strategy at once
    python -m quokka.svcomp.schedule_learn race.sqlite --out verifier/verdict/schedule.toml

For each kind of program (`schedule.Features.kind`, of the task's lowered program), the strategies
that decided correct results fast (within `--fast` seconds of the race, where every strategy had
a share of the cores) form the first stage, most such wins first (at most `FIRST_MAX`); the second
stage lists every strategy that decided any, most wins first (a first-stage one again when it also
won slowly). The first stage's slice (`--slice`) is a strategy's time alone on a core. A kind with
fewer than `MIN_TASKS` decided tasks takes the row learned from all tasks (`default`).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from quokka.invariants.verify import resolve_target
from quokka.verifier.errors import QuokkaError
from quokka.verifier.frontend import lower
from quokka.verifier.infra.store import Store
from quokka.verifier.options import Options
from quokka.verifier.verdict.schedule import features

FIRST_MAX = 3
MIN_TASKS = 4
SLICE_S = 1.0
SPECIALISTS = ("algebra", "execute", "bitblast")
SPECIALIST_SLICE_S = 3.0
FAST_S = 3.0  # a fast win, in the race's time (8 strategies on the cores: several times slower than alone)
CORRECT = "correct"
# the engine a result names (`decided_by`) -> the strategy that ran it; "frontend" decides before any
STRATEGY_OF = {"houdini": "quokka", "twoquery": "quokka", "inductive": "quokka", "frontend": ""}


@dataclass(frozen=True)
class Win:
    """A task decided correctly: its kind, the strategy that decided it and when."""

    kind: str
    strategy: str
    seconds: float


def wins_of(db: Path) -> list[Win]:
    """The correct decisions recorded in the store `db`, each with its program's kind."""
    with Store.open(db, writer=False) as store:
        rows = [r for r in store.results() if r.category == CORRECT and _strategy(r.decided_by)]
    return [Win(_kind(r.program, r.task), _strategy(r.decided_by), r.verify_time_s or r.wall_s) for r in rows]


def _strategy(engine: str) -> str:
    return STRATEGY_OF.get(engine, engine)


def _kind(program: str, task: str) -> str:
    """The kind of the task's program, as the verifier lowers it (`unreadable`: it cannot)."""
    try:
        target = resolve_target(Path(task if task.endswith((".yml", ".yaml")) else program), Options())
        checked = target.choice.checked
        if checked is None:
            return "unreadable"
        return features(lower(target.c_file, target.data_model, checked, target.uninitialised)).kind
    except QuokkaError:
        return "unreadable"


def stages(wins: Sequence[Win], fast_s: float) -> tuple[list[str], list[str]]:
    """The first and second stage learned from `wins` (fast: within `fast_s`)."""
    fast = Counter(w.strategy for w in wins if w.seconds <= fast_s)
    slow = Counter(w.strategy for w in wins if w.seconds > fast_s)
    first = [name for name, _ in fast.most_common(FIRST_MAX)]
    everyone = fast + slow
    then = [name for name, _ in everyone.most_common() if name not in first or slow[name]]
    return first, then


def table_text(wins: Sequence[Win], slice_s: float, fast_s: float, sources: Iterable[str]) -> str:
    """The TOML of the table learned from `wins` (a comment row per kind with its counts)."""
    lines = [
        "# The stages of `verifier/verdict/schedule.py`, per kind of program (`Features.kind`), learned by",
        f"# `python -m quokka.svcomp.schedule_learn --slice {slice_s:g} --fast {fast_s:g}` from",
        f"# {', '.join(sources)} (see that module to learn it again).",
        f"slice_s = {slice_s:g}",
        "# not learned: the engines that start only where they apply, last in every first stage",
        f"specialists = {_toml_list(SPECIALISTS)}",
        f"specialist_slice_s = {SPECIALIST_SLICE_S:g}",
    ]
    kinds = sorted({w.kind for w in wins})
    lines += _row("default", wins, fast_s)
    for kind in kinds:
        mine = [w for w in wins if w.kind == kind]
        if len(mine) >= MIN_TASKS and kind != "unreadable":
            lines += _row(f"kind.{kind}", mine, fast_s)
    return "\n".join(lines) + "\n"


def _row(name: str, wins: Sequence[Win], fast_s: float) -> list[str]:
    first, then = stages(wins, fast_s)
    counts = ", ".join(f"{k} {v}" for k, v in Counter(w.strategy for w in wins).most_common())
    median = statistics.median(w.seconds for w in wins)
    return [
        "",
        f"# {len(wins)} decided, median {median:.2f} s; wins: {counts}",
        f"[{name}]",
        f"first = {_toml_list(first)}",
        f"then = {_toml_list(then)}",
    ]


def _toml_list(names: Sequence[str]) -> str:
    return "[" + ", ".join(f'"{n}"' for n in names) + "]"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m quokka.svcomp.schedule_learn", description=__doc__)
    parser.add_argument("db", type=Path, nargs="+", help="batch stores of runs with --cores 0 (config race)")
    parser.add_argument("--slice", type=float, default=SLICE_S, help="the first stage's slice, seconds")
    parser.add_argument("--fast", type=float, default=FAST_S, help="a fast win in the race, seconds")
    parser.add_argument("--source", action="append", default=[], help="what the stores hold (for the header)")
    parser.add_argument("--out", type=Path, help="write the table here (default: standard output)")
    args = parser.parse_args(argv)
    wins = [w for db in args.db for w in wins_of(db)]
    if not wins:
        sys.stderr.write("no correct decisions in the stores\n")
        return 1
    text = table_text(wins, args.slice, args.fast, args.source or [str(db) for db in args.db])
    if args.out is None:
        sys.stdout.write(text)
    else:
        args.out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
