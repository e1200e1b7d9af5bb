"""The `quokka finetune` and `quokka dataset` commands: their arguments (light to import: the
dispatcher registers every command for `quokka --help`); what they do is imported when they run."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from quokka.verifier.cli_args import minutes, non_negative_int, positive_float, positive_int, seed
from quokka.verifier.errors import QuokkaError

from .synthetic import COMPANION_TEMPLATES, IN_LOOP_SHARE

EPILOG = """GPU path: the same command on a larger base with LoRA, e.g.
  quokka finetune --base ~/models/Qwen2.5-Coder-7B-Instruct --data DS --out OUT --lora --bf16
(needs `pip install peft`; adapters are merged on export, so OUT loads with AutoModelForCausalLM,
`quokka verify --model OUT` and `vllm serve OUT`)."""


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "finetune",
        help="fine-tune a causal LM on `quokka dataset build` output",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    start = p.add_mutually_exclusive_group(required=True)
    start.add_argument("--base", help="a transformers model to start from: a directory, or a base model's "
                       "name (`quokka model list`, e.g. smollm2-135m)")
    start.add_argument("--init-small", choices=["tiny", "small"], help="a new small Llama (CPU)")
    p.add_argument("--data", type=Path, required=True, help="folder with train.jsonl and val.jsonl")
    p.add_argument("--out", type=Path, required=True, help="output model folder")
    p.add_argument("--lora", action="store_true", help="train LoRA adapters (needs peft), merged on export")
    p.add_argument("--adapter", type=Path, metavar="DIR",
                   help="with --lora: train on from this adapter (e.g. the shipped quokka-smollm2's)")
    p.add_argument("--epochs", type=positive_float, default=1.0)
    p.add_argument("--max-steps", type=positive_int, default=-1, help="stop after N optimizer steps")
    p.add_argument("--max-minutes", type=minutes, help="stop after this much training time (then export)")
    p.add_argument("--bf16", action="store_true", help="bf16 autocast (GPU, or CPUs with native bf16)")
    p.add_argument("--lr", type=positive_float, help="learning rate (default by mode)")
    p.add_argument("--batch-size", type=positive_int, default=4)
    p.add_argument("--max-len", type=positive_int, default=2048, help="drop longer examples (tokens)")
    p.add_argument("--threads", type=non_negative_int, default=1,
                   help="torch CPU threads (default 1; 0: torch's)")
    p.add_argument("--save-steps", type=positive_int, default=50)
    p.add_argument("--seed", type=seed, default=0)
    p.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto",
                   help="where to train (default: cuda when there is one)")
    p.set_defaults(func=run)


def base_directory(spec: str | None) -> Path | None:
    """The checkpoint `--base` names: a directory, or a pulled base model (not an adapter model)."""
    if spec is None:
        return None
    from ..llm.registry import resolve_model

    found = resolve_model(spec)
    if found.adapter is not None:
        raise QuokkaError(f"--base {spec}: a fine-tuned model is a base plus an adapter; start from its base")
    return found.directory


def _named(spec: str | None) -> Any:
    """The resolved `--base` when it is a model name (not a directory), else None."""
    if spec is None or Path(spec).expanduser().is_dir():
        return None
    from ..llm.registry import resolve_model

    return resolve_model(spec)


def run(args: argparse.Namespace) -> int:
    from .finetune import FinetuneConfig, finetune

    try:
        base = base_directory(args.base)
        if args.adapter is not None and not (args.lora and (args.adapter / "adapter_config.json").is_file()):
            raise QuokkaError(f"--adapter {args.adapter}: needs --lora and a folder with adapter_config.json")
    except QuokkaError as exc:
        sys.stderr.write(f"quokka finetune: {exc}\n")
        return 2
    config = FinetuneConfig(
        data=args.data,
        out=args.out,
        base=base,
        base_name=found.name if (found := _named(args.base)) else None,
        init_small=args.init_small,
        lora=args.lora,
        adapter=args.adapter,
        epochs=args.epochs,
        max_steps=args.max_steps,
        bf16=args.bf16,
        lr=args.lr,
        batch_size=args.batch_size,
        max_len=args.max_len,
        threads=args.threads,
        seed=args.seed,
        save_steps=args.save_steps,
        max_minutes=args.max_minutes,
        device=args.device,
    )
    try:
        s = finetune(config)
    except QuokkaError as exc:
        sys.stderr.write(f"quokka finetune: {exc}\n")
        return 2
    sys.stdout.write(
        f"{s.steps} steps in {s.seconds:.1f} s ({s.tokens_per_s:.0f} tokens/s), {s.parameters} parameters; "
        f"train loss {s.train_loss_first} -> {s.train_loss_last}; val loss {s.val_loss_before} -> "
        f"{s.val_loss_after}; model in {args.out}\n"
    )
    return 0


# ----------------------------------------------------------------------------- quokka dataset

DATASET_DESCRIPTION = """\
`quokka dataset build SOURCE... --out DIR`: chat-form training data from proven invariants.

Writes `DIR/train.jsonl` and `DIR/val.jsonl` (one `{"messages": [system, user, assistant], "meta": ...}`
per line; the prompt is exactly `build_messages`, the answer `format_answer`) and `DIR/split.json`
(families of each split, counts, dropped targets by reason). Split by program family; synthetic
programs only ever train. Besides the sources' invariants, each named program's own assertions are
tried at its loops (kept when inductive), and half the synthetic programs assert their invariant
inside the loop: an assertion in a loop is often its invariant, and a model should learn that.
"""


def register_dataset(subparsers: Any) -> None:
    parser = subparsers.add_parser("dataset", help="build fine-tuning data from proven invariants")
    sub = parser.add_subparsers(dest="dataset_command", metavar="ACTION", required=True)
    b = sub.add_parser(
        "build", help="harvest, re-check, split and write chat-form JSONL", description=DATASET_DESCRIPTION
    )
    b.add_argument(
        "sources",
        nargs="+",
        type=Path,
        metavar="SOURCE",
        help="invariants.jsonl, results .sqlite, witness .yml, ACSL-annotated .c, or a folder",
    )
    b.add_argument("--out", type=Path, required=True, help="output folder")
    b.add_argument("--jobs", type=positive_int, default=1,
                   help="parallel re-check processes (default 1)")
    b.add_argument("--synthetic", type=non_negative_int, default=0,
                   help="generated programs to add to train")  # fmt: skip
    b.add_argument(
        "--synthetic-in-loop",
        type=_share,
        default=IN_LOOP_SHARE,
        metavar="SHARE",
        help=f"share of synthetic programs that assert their invariant in the loop (default {IN_LOOP_SHARE})",
    )
    b.add_argument(
        "--synthetic-in-loop-target",
        choices=("assertion", "invariant"),
        default="assertion",
        help="what an in-loop synthetic program teaches: its assertion (default), or the whole invariant "
        "the assertion is part of",
    )
    b.add_argument(
        "--synthetic-companions",
        type=non_negative_int,
        default=0,
        metavar="N",
        help="generated programs whose assertion holds only with other facts (companions) the target adds",
    )
    b.add_argument(
        "--companion-templates",
        type=_companion_templates,
        metavar="T,...",
        help=f"only these companion templates (default all: {', '.join(sorted(COMPANION_TEMPLATES))})",
    )
    b.add_argument("--val-fraction", type=_share, default=0.2, help="share of families to validate on")
    b.add_argument(
        "--val-families",
        type=_families,
        metavar="F,...",
        help="validate on these families (comma-separated) instead of drawing --val-fraction of them",
    )
    b.add_argument("--seed", type=seed, default=0)
    b.add_argument(
        "--assertions",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="also try each named program's assertions as invariants of its loops (default on)",
    )
    b.set_defaults(func=run_build)


def _share(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"expected a number from 0 to 1, got {text!r}")
    return value


def _companion_templates(text: str) -> list[str]:
    names = _families(text)
    unknown = sorted(set(names) - set(COMPANION_TEMPLATES))
    if unknown:
        raise argparse.ArgumentTypeError(f"no companion template {', '.join(unknown)}")
    return names


def _families(text: str) -> list[str]:
    names = [f.strip() for f in text.split(",") if f.strip()]
    if not names:
        raise argparse.ArgumentTypeError("expected family names separated by commas")
    return names


def run_build(args: argparse.Namespace) -> int:
    from .dataset import run_build as run

    return run(args)
