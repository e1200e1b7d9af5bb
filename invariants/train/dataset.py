"""Chat-form training data from proven invariants (`quokka dataset build`, whose arguments
`cli.register_dataset` defines, with what it does: `cli.DATASET_DESCRIPTION`)."""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from quokka.verifier.errors import QuokkaError
from quokka.verifier.frontend import lower
from quokka.verifier.ir import Program
from quokka.verifier.task import family_of

from ..llm.prompt import build_messages, format_answer
from .families import split_families
from .recheck import CACHE_NAME, Checked, RecheckStats, recheck_all
from .sources import Target, assertion_targets, data_model_of, read_source
from .synthetic import COMPANION_TEMPLATES, IN_LOOP_SHARE, generate, generate_companions, write_all

SYNTHETIC = "synthetic"


@dataclass(frozen=True)
class DatasetSummary:
    train: int
    val: int
    targets: int
    proven: int
    duplicates: int
    dropped: tuple[tuple[str, int], ...]
    cached: int
    train_families: int
    val_families: int


def synthetic_targets(
    out: Path,
    count: int,
    seed: int,
    in_loop_share: float = IN_LOOP_SHARE,
    in_loop_whole: bool = False,
    companions: int = 0,
    companion_templates: Sequence[str] | None = None,
) -> list[Target]:
    programs = generate(count, seed, in_loop_share, in_loop_whole)
    programs += generate_companions(companions, seed, in_loop_share, companion_templates)
    paths = write_all(programs, out / SYNTHETIC)
    return [
        Target(path.resolve(), p.loop_line, p.invariant, SYNTHETIC)
        for p, path in zip(programs, paths, strict=True)
    ]


def example(program: Program, source: str, checked: Checked) -> dict[str, Any]:
    messages = build_messages(program, source)
    answer = format_answer([(checked.after_line, checked.target.invariant)])
    meta = {
        "file": str(checked.target.file),
        "after_line": checked.after_line,
        "invariant": checked.target.invariant,
        "origin": checked.target.origin,
        "family": _family(checked.target),
    }
    return {"messages": [*messages, {"role": "assistant", "content": answer}], "meta": meta}


def _family(target: Target) -> str:
    name = family_of(target.file)
    return f"{SYNTHETIC}:{name}" if target.origin == SYNTHETIC else name


def _dedup_key(c: Checked) -> str:
    text = " ".join(c.target.invariant.split())
    digest = hashlib.sha256(c.target.file.read_bytes()).hexdigest()
    return f"{digest}:{c.after_line}:{text}"


def examples_of(checked: Sequence[Checked]) -> tuple[list[dict[str, Any]], int]:
    """The examples of the proven targets, deduplicated; and the number of duplicates."""
    seen: set[str] = set()
    programs: dict[Path, tuple[Program, str]] = {}
    out = []
    for c in checked:
        key = _dedup_key(c) if c.proven else ""
        if not c.proven or key in seen:
            continue
        seen.add(key)
        f = c.target.file
        if f not in programs:
            programs[f] = (lower(f, data_model_of(f)), f.read_text(encoding="utf-8"))
        out.append(example(*programs[f], c))
    return out, sum(c.proven for c in checked) - len(out)


def build(
    sources: Sequence[Path],
    out: Path,
    *,
    jobs: int = 1,
    synthetic: int = 0,
    val_fraction: float = 0.2,
    seed: int = 0,
    assertions: bool = True,
    in_loop_share: float = IN_LOOP_SHARE,
    in_loop_whole: bool = False,
    companions: int = 0,
    companion_templates: Sequence[str] | None = None,
    val_families: Sequence[str] | None = None,
) -> DatasetSummary:
    """Read, re-check, deduplicate, split and write the dataset; see the module docstring.
    With `assertions`, the named programs' own assertions are targets too (`assertion_targets`).
    `val_families` pins the validation families (so that adding a source keeps the split); else
    `split_families` draws them. `in_loop_whole`: see `synthetic.in_loop_assertion`; `companions`:
    programs of `synthetic.COMPANION_TEMPLATES` (those named in `companion_templates`) added to train."""
    out.mkdir(parents=True, exist_ok=True)
    targets = [t for s in sources for t in read_source(s)]
    if assertions:
        targets += assertion_targets(t.file for t in targets)
    targets += synthetic_targets(
        out, synthetic, seed, in_loop_share, in_loop_whole, companions, companion_templates
    )
    checked, stats = recheck_all(targets, out / CACHE_NAME, jobs)
    examples, dups = examples_of(checked)
    families = [e["meta"]["family"] for e in examples]
    named = [f for f in families if not f.startswith(SYNTHETIC)]
    if val_families is None:
        train_f, val_f = split_families(named, val_fraction, seed)
    else:
        val_f = sorted(set(val_families))
        train_f = sorted(set(named) - set(val_f))
    val_set = set(val_f)
    train = [e for e in examples if e["meta"]["family"] not in val_set]
    val = [e for e in examples if e["meta"]["family"] in val_set]
    _write_jsonl(out / "train.jsonl", train)
    _write_jsonl(out / "val.jsonl", val)
    summary = _summary(stats, train, val, dups, train_f, val_f)
    split = {
        "train_families": train_f,
        "val_families": val_f,
        "seed": seed,
        "val_fraction": val_fraction,
        "synthetic_train": synthetic,
        "synthetic_in_loop_share": in_loop_share,
        "synthetic_in_loop_whole": in_loop_whole,
        "synthetic_companions": companions,
        "synthetic_companion_templates": sorted(companion_templates or COMPANION_TEMPLATES),
        "summary": asdict(summary),
    }
    (out / "split.json").write_text(json.dumps(split, indent=2) + "\n", encoding="utf-8")
    return summary


def _summary(
    stats: RecheckStats, train: list[Any], val: list[Any], dups: int, train_f: list[str], val_f: list[str]
) -> DatasetSummary:
    return DatasetSummary(
        len(train),
        len(val),
        stats.total,
        stats.proven,
        dups,
        stats.dropped_reasons,
        stats.cached,
        len(train_f),
        len(val_f),
    )


def _write_jsonl(path: Path, rows: Sequence[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


# ----------------------------------------------------------------------------- command line


def run_build(args: argparse.Namespace) -> int:
    try:
        s = build(
            args.sources,
            args.out,
            jobs=args.jobs,
            synthetic=args.synthetic,
            val_fraction=args.val_fraction,
            seed=args.seed,
            assertions=args.assertions,
            in_loop_share=args.synthetic_in_loop,
            in_loop_whole=args.synthetic_in_loop_target == "invariant",
            companions=args.synthetic_companions,
            companion_templates=args.companion_templates,
            val_families=args.val_families,
        )
    except QuokkaError as exc:
        sys.stderr.write(f"quokka dataset: {exc}\n")
        return 2
    dropped = ", ".join(f"{k}: {n}" for k, n in s.dropped) or "none"
    sys.stdout.write(
        f"{s.targets} targets, {s.proven} proven ({s.cached} cached), {s.duplicates} duplicates; "
        f"train {s.train} examples ({s.train_families} families), val {s.val} ({s.val_families} families)\n"
        f"dropped: {dropped}\n"
    )
    return 0
