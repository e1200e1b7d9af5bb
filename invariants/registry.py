"""Proposers by name, built from the options (heavy ones imported only when selected)."""

from __future__ import annotations

from quokka.verifier.errors import InputError
from quokka.verifier.options import Options

from .protocol import Proposer

KNOWN = ("dynamic", "annotations", "llm")
AUTO_MODEL = False  # whether an installed quokka-smollm2 joins by default (set from `quokka bench`)


NO_MODEL = "none"  # `--model none`: no model, not even the installed default


def make_proposers(options: Options) -> list[Proposer]:
    """The proposers `options.proposers` names; `llm` joins when a model or endpoint is set, or,
    with neither, when the shipped fine-tuned model is installed and `llm_auto` is on (then it
    escalates: it is asked only once the model-free first round has not proved the program)."""
    names = [n for n in options.proposers if n != "none"]
    if options.model == NO_MODEL:
        return [_make(n, options) for n in _known([n for n in names if n != "llm"])]
    if not (options.model or options.endpoint or "llm" in names) and (auto := auto_model(options)):
        options = options.with_(model=auto, extra={"llm_escalate": True, **options.extra})
    if (options.model or options.endpoint) and "llm" not in names:
        names.append("llm")
    return [_make(name, options) for name in _known(names)]


def auto_model(options: Options) -> str | None:
    """The shipped fine-tuned model's name when it is installed and `llm_auto` allows it."""
    if not options.extra.get("llm_auto", AUTO_MODEL):
        return None
    from .llm.registry import DEFAULT_TUNED, installed_model

    return DEFAULT_TUNED if installed_model(DEFAULT_TUNED) else None


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
