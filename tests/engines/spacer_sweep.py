"""Measure Spacer settings on benchmark tasks (a script, not a test).

    python tests/engines/spacer_sweep.py --cap 10 --sample 40 --configs default,noiuc code2inv quokka-dev

Each task runs in a forked child with a hard kill at cap + 5 s; one task at a time (the
machine is shared). Prints one line per task and a summary per configuration; a verdict that
contradicts the task's expected verdict is flagged WRONG.
"""

from __future__ import annotations

import argparse
import csv
import multiprocessing as mp
import random
import time
from pathlib import Path

import yaml
import z3
from quokka.verifier.encode import chc, encode
from quokka.verifier.engines import spacer
from quokka.verifier.engines.base import Budget
from quokka.verifier.frontend import lower
from quokka.verifier.ir import Program
from shared_data import BENCHMARKS

ROOT = BENCHMARKS  # ../shared beside the project
INLINE_OFF = {"xform.inline_linear": False, "xform.inline_eager": False}
CONFIGS: dict[str, dict[str, object]] = {
    "default": {"spacer.use_iuc": True},
    "noiuc": {"spacer.use_iuc": False},
    "iuc_noinl": {"spacer.use_iuc": True, **INLINE_OFF},
    "noiuc_noinl": {"spacer.use_iuc": False, **INLINE_OFF},
    "noiuc_global": {"spacer.use_iuc": False, "spacer.global": True},
    "iuc_global": {"spacer.use_iuc": True, "spacer.global": True},
    "noiuc_noslice": {"spacer.use_iuc": False, "xform.slice": False},
    "schedule": {},  # spacer.solve's own defaults
    "horn_iuc": {"horn": True, "spacer.use_iuc": True},
    "horn_noiuc": {"horn": True, "spacer.use_iuc": False},
}


def tasks(bench: str) -> list[tuple[str, Path, str, bool]]:
    root = ROOT / bench
    out = []
    for row in csv.DictReader((root / "tasks.csv").read_text().splitlines()):
        meta = yaml.safe_load((root / row["task"]).read_text())
        model = meta.get("options", {}).get("data_model", "LP64")
        out.append((row["task"], root / row["file"], model, row["expected_verdict"] == "true"))
    return out


def _horn(program: Program, params: dict[str, object], cap: float) -> tuple[str, str]:
    """The decision only, by a `z3.Solver` over Horn clauses (sat = safe) instead of `Fixedpoint`."""
    system = chc.build(encode(program))
    solver = z3.SolverFor("HORN")
    solver.set("timeout", int(cap * 1000))
    for key, value in params.items():
        solver.set(key if key.startswith("spacer.") else f"fp.{key}", value)
    solver.add(*chc.horn_assertions(system))
    answer = solver.check()
    status = "safe" if answer == z3.sat else "unsafe" if answer == z3.unsat else "unknown"
    return status, solver.reason_unknown() if status == "unknown" else "horn solver"


def _child(path: Path, model: str, params: dict[str, object] | None, cap: float, conn: object) -> None:
    try:
        program = lower(path, model)
        if params is not None and params.get("horn"):
            conn.send(_horn(program, {k: v for k, v in params.items() if k != "horn"}, cap))  # type: ignore[attr-defined]
            return
        result = spacer.solve(program, Budget.of(cap), params)
        conn.send((result.status.value, result.reason[:300]))  # type: ignore[attr-defined]
    except Exception as exc:
        conn.send(("error", f"{type(exc).__name__}: {str(exc)[:150]}"))  # type: ignore[attr-defined]


def run_one(path: Path, model: str, params: dict[str, object] | None, cap: float) -> tuple[str, str, float]:
    ctx = mp.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(path, model, params, cap, child), daemon=True)
    start = time.monotonic()
    proc.start()
    child.close()
    status, reason = "timeout", "killed"
    if parent.poll(cap + 5):
        try:
            status, reason = parent.recv()
        except EOFError:
            status, reason = "crash", f"exit {proc.exitcode}"
    if proc.is_alive():
        proc.kill()
    proc.join()
    return status, reason, time.monotonic() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("benches", nargs="+")
    parser.add_argument("--cap", type=float, default=10.0)
    parser.add_argument("--sample", type=int, default=0)
    parser.add_argument("--configs", default="default,noiuc")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    chosen = []
    for bench in args.benches:
        all_tasks = tasks(bench)
        chosen += rng.sample(all_tasks, min(args.sample, len(all_tasks))) if args.sample else all_tasks
    summary: dict[str, list[float]] = {}
    for name, path, model, safe in chosen:
        cells = []
        for config in args.configs.split(","):
            params = CONFIGS[config] or None
            status, reason, took = run_one(path, model, params, args.cap)
            wrong = (status == "safe" and not safe) or (status == "unsafe" and safe)
            if status in ("safe", "unsafe") and not wrong:
                summary.setdefault(config, []).append(took)
            mark = "WRONG " if wrong else ""
            detail = "" if status in ("safe", "unsafe") else f" ({reason[:200]})"
            cells.append(f"{config}={mark}{status}:{took:.1f}s{detail}")
        print(f"{path.parent.name}/{name} [{'T' if safe else 'F'}] " + " | ".join(cells), flush=True)
    for config in args.configs.split(","):
        times = summary.get(config, [])
        print(f"SUMMARY {config}: solved {len(times)}/{len(chosen)}, time on solved {sum(times):.1f}s")


if __name__ == "__main__":
    main()
