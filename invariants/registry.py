"""Proposers by name, built from the options (heavy ones imported only when selected)."""

from __future__ import annotations

from quokka.verifier.errors import InputError
from quokka.verifier.options import Options

from .protocol import Proposer

KNOWN = ("dynamic", "annotations", "llm")


def make_proposers(options: Options) -> list[Proposer]:
    """The proposers `options.proposers` names; `llm` joins when a model or endpoint is set."""
    names = [n for n in options.proposers if n != "none"]
    if (options.model or options.endpoint) and "llm" not in names:
        names.append("llm")
    unknown = [n for n in names if n not in KNOWN]
    if unknown:
        raise InputError(None, f"unknown proposer(s): {', '.join(unknown)} (known: {', '.join(KNOWN)}, none)")
    return [_make(name, options) for name in names]


def _make(name: str, options: Options) -> Proposer:
    if name == "dynamic":
        from .dynamic import DynamicProposer

        return DynamicProposer()
    if name == "annotations":
        from .annotations import AnnotationProposer

        return AnnotationProposer()
    from .llm import make_llm_proposer

    return make_llm_proposer(options)
