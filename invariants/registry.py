"""Proposers by name, built from the options (heavy ones imported only when selected)."""

from __future__ import annotations

from quokka.verifier.errors import InputError
from quokka.verifier.options import Options

from .protocol import Proposer

KNOWN = ("dynamic", "annotations", "llm")
AUTO_MODEL = False  # whether an installed quokka-smollm2 joins by default (set from `quokka bench`)


NO_MODEL = "none"  # `--model none`: no model, not even the installed default
AUTO = "auto"  # `--model auto`: the installed quokka-smollm2, escalating (see `make_proposers`)


def make_proposers(options: Options) -> list[Proposer]:
    """The proposers `options.proposers` names; `llm` joins when a model or endpoint is set.

    `--model auto` (and no `--model` at all when `llm_auto`, default `AUTO_MODEL`, is on) is the
    shipped fine-tuned model when it is installed, escalating: asked only once the model-free
    first round has not proved the program, so the tasks that round proves never wait for it.
    """
    names = [n for n in options.proposers if n != "none"]
    if options.model == AUTO or (options.model is None and not options.endpoint and "llm" not in names):
        options = _auto(options)
    if options.model == NO_MODEL:
        return [_make(n, options) for n in _known([n for n in names if n != "llm"])]
    if (options.model or options.endpoint) and "llm" not in names:
        names.append("llm")
    return [_make(name, options) for name in _known(names)]


def _auto(options: Options) -> Options:
    """`options` with the model `auto` stands for: the shipped one, escalating, or none."""
    chosen = options.model == AUTO or bool(options.extra.get("llm_auto", AUTO_MODEL))
    if not (chosen and auto_installed()):
        return options.with_(model=NO_MODEL)
    from .llm.registry import DEFAULT_TUNED

    return options.with_(model=DEFAULT_TUNED, extra={"llm_escalate": True, **options.extra})


def auto_installed() -> bool:
    """Whether the shipped fine-tuned model is installed (its base pulled, its adapter shipped)."""
    from .llm.registry import DEFAULT_TUNED, installed_model

    return installed_model(DEFAULT_TUNED)


def requested_model(options: Options) -> bool:
    """Whether a model or endpoint was named (not `none`, not `auto`): its report is awaited."""
    return bool(options.endpoint or (options.model and options.model not in (NO_MODEL, AUTO)))


def _known(names: list[str]) -> list[str]:
    unknown = [n for n in names if n not in KNOWN]
    if unknown:
        raise InputError(None, f"unknown proposer(s): {', '.join(unknown)} (known: {', '.join(KNOWN)}, none)")
    return names


def _make(name: str, options: Options) -> Proposer:
    if name == "dynamic":
        from .dynamic import DynamicProposer

        return DynamicProposer()
    if name == "annotations":
        from .annotations import AnnotationProposer

        return AnnotationProposer()
    from .llm import make_llm_proposer

    return make_llm_proposer(options)
