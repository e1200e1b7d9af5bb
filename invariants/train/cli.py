"""The `quokka finetune` command (`quokka dataset` is registered by `dataset.register`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from quokka.verifier.cli_args import minutes, non_negative_int, positive_float, positive_int, seed
from quokka.verifier.errors import QuokkaError

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
