"""Proposers by name, built from the core's options and the model's settings (heavy ones imported only
when selected)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from quokka.verifier.errors import InputError
from quokka.verifier.options import Options

from .llm.settings import ModelSettings
from .protocol import Candidate, ProposalContext, Proposer

KNOWN = ("dynamic", "arrays", "annotations", "llm", "accel", "absint")
AUTO_MODEL = False  # whether an installed quokka-smollm2 joins by default (set from `quokka bench`)


NO_MODEL = "none"  # `--model none`: no model, not even the installed default
AUTO = "auto"  # `--model auto`: the installed quokka-smollm2, escalating (see `make_proposers`)


def make_proposers(options: Options, model: ModelSettings) -> list[Proposer]:
    """The proposers `options.proposers` names; `llm` joins when `model` names a model or endpoint.

    `--model auto` (and no `--model` at all when `model.auto`, default `AUTO_MODEL`, is on) is the
    shipped fine-tuned model when it is installed, escalating: asked only once the model-free
    first round has not proved the program, so the tasks that round proves never wait for it.
    """
    names = [n for n in options.proposers if n != "none"]
    if model.model == AUTO or (model.model is None and not model.endpoint and "llm" not in names):
        model = _auto(model)
    if model.model == NO_MODEL:
        return [_make(n, model, options) for n in _known([n for n in names if n != "llm"])]
    if (model.model or model.endpoint) and "llm" not in names:
        names.append("llm")
    return [_make(name, model, options) for name in _known(names)]


def _auto(model: ModelSettings) -> ModelSettings:
    """`model` with the model `auto` stands for: the shipped one, escalating (unless told not to), or none."""
    chosen = model.model == AUTO or (AUTO_MODEL if model.auto is None else model.auto)
    if not (chosen and auto_installed()):
        return model.with_(model=NO_MODEL)
    from .llm.registry import DEFAULT_TUNED

    escalate = True if model.escalate is None else model.escalate
    return model.with_(model=DEFAULT_TUNED, escalate=escalate)


def auto_installed() -> bool:
    """Whether the shipped fine-tuned model is installed (its base pulled, its adapter shipped)."""
    from .llm.registry import DEFAULT_TUNED, installed_model

    return installed_model(DEFAULT_TUNED)


def requested_model(model: ModelSettings) -> bool:
    """Whether a model or endpoint was named (not `none`, not `auto`): its report is awaited."""
    return bool(model.endpoint or (model.model and model.model not in (NO_MODEL, AUTO)))


def _known(names: list[str]) -> list[str]:
    unknown = [n for n in names if n not in KNOWN]
    if unknown:
        raise InputError(None, f"unknown proposer(s): {', '.join(unknown)} (known: {', '.join(KNOWN)}, none)")
    return names


def _make(name: str, model: ModelSettings, options: Options) -> Proposer:
    if name == "dynamic":
        from .dynamic import DynamicProposer

        return DynamicProposer()
    if name == "arrays":
        from .arrays import ArrayProposer

        return ArrayProposer()
    if name == "annotations":
        from .annotations import AnnotationProposer

        return AnnotationProposer()
    if name == "accel":
        return Escalating(NAME_ACCEL, lambda: _accel(options.dump_dir))
    if name == "absint":
        return Escalating(NAME_ABSINT, lambda: _absint(options.dump_dir))
    from .llm.proposer import make_llm_proposer

    return make_llm_proposer(model)


NAME_ACCEL = "accel"


def _accel(dump_dir: Path | None) -> Proposer:
    from .accel import AccelProposer

    return AccelProposer(dump_dir)


NAME_ABSINT = "absint"


def _absint(dump_dir: Path | None) -> Proposer:
    from .absint import AbsintProposer

    return AbsintProposer(dump_dir)


class Escalating:
    """A proposer asked from the second round on, and built when first asked: the programs the
    first round proves never pay for it (loop acceleration imports sympy: 0.45 s of CPU)."""

    def __init__(self, name: str, build: Callable[[], Proposer]) -> None:
        self.name = name
        self._build = build
        self._made: Proposer | None = None
        self._rounds = 0

    def propose(self, context: ProposalContext) -> list[Candidate]:
        self._rounds += 1
        if self._rounds == 1:
            return []
        if self._made is None:
            self._made = self._build()
        return self._made.propose(context)
