"""When the model joins: on request (`--model`), escalating (`llm_escalate`: only after the
model-free first round), automatically when the shipped model is installed (`llm_auto`), never
with `--model none`."""

from __future__ import annotations

from pathlib import Path

import pytest
from llm_programs import LINE, SOURCE
from quokka.invariants import registry as proposers
from quokka.invariants.llm import LLMConfig, LLMProposer, ModelSettings
from quokka.invariants.llm import registry as models
from quokka.invariants.protocol import ProposalContext, loop_contexts
from quokka.verifier.options import Options


class Recording:
    """A backend that answers one fixed invariant and counts its requests."""

    constrains = False

    def __init__(self) -> None:
        self.requests = 0

    def sample(self, messages, request):
        self.requests += 1
        return [f"After line {LINE}, insert assume(i <= n);"] * request.n


def context(program, ctis=None):
    return ProposalContext(program, SOURCE, loop_contexts(program), ctis or {}, 60.0, 0)


def test_an_escalating_proposer_leaves_the_first_round_to_the_others(program):
    backend = Recording()
    proposer = LLMProposer(backend, LLMConfig(samples=2, escalate=True))
    assert proposer.propose(context(program)) == [] and backend.requests == 0
    loop = program.loops[0].id
    second = proposer.propose(context(program, {loop: ({"n": 3, "i": 5, "s": 15},)}))
    assert [c.text for c in second] == ["i <= n"] and backend.requests == 1


def test_a_requested_model_is_asked_in_the_first_round(program):
    backend = Recording()
    assert LLMProposer(backend, LLMConfig(samples=2)).propose(context(program))
    assert backend.requests == 1


@pytest.fixture
def installed(monkeypatch, tmp_path: Path) -> Path:
    """A models folder where the base of quokka-smollm2 counts as pulled, and its adapter shipped."""
    base = tmp_path / "models" / models.DEFAULT_MODEL
    base.mkdir(parents=True)
    (base / models.METADATA).write_text("{}")
    adapter = tmp_path / "adapter"
    adapter.mkdir()
    (adapter / "adapter_config.json").write_text("{}")
    tuned = models.AdapterModel(models.DEFAULT_TUNED, models.DEFAULT_MODEL, adapter)
    monkeypatch.setattr(models, "REGISTRY", models.Registry(models.REGISTRY.bases, (tuned,)))
    monkeypatch.setenv(models.MODELS_ENV, str(tmp_path / "models"))
    return adapter


DEFAULTS = len(Options().proposers)  # dynamic, arrays, annotations, accel


def names(found):
    return [getattr(p, "name", "") for p in found]


def llm_of(found):
    inner = [getattr(p, "inner", p) for p in found]
    return next(p for p in inner if isinstance(p, LLMProposer))


def test_the_installed_model_joins_escalating_when_auto_is_on(installed):
    found = proposers.make_proposers(Options(), ModelSettings(auto=True))
    assert "dynamic" in names(found) and len(found) == DEFAULTS + 1
    assert llm_of(found).config.escalate
    asked_at_once = proposers.make_proposers(Options(), ModelSettings(auto=True, escalate=False))
    assert not llm_of(asked_at_once).config.escalate  # `llm_escalate = false` is heard


def test_the_installed_model_stays_out_when_auto_is_off_or_the_model_is_none(installed):
    assert len(proposers.make_proposers(Options(), ModelSettings(auto=False))) == DEFAULTS
    found = proposers.make_proposers(Options(), ModelSettings(model="none", auto=True))
    assert names(found) == ["dynamic", "arrays", "annotation", "accel"]


def test_no_model_joins_when_none_is_installed(monkeypatch, tmp_path):
    monkeypatch.setenv(models.MODELS_ENV, str(tmp_path))
    assert len(proposers.make_proposers(Options(), ModelSettings(auto=True))) == DEFAULTS


def test_model_auto_is_the_installed_model_escalating_whatever_llm_auto_says(installed):
    found = proposers.make_proposers(Options(), ModelSettings(model="auto", auto=False))
    assert len(found) == DEFAULTS + 1 and llm_of(found).config.escalate


def test_model_auto_without_the_installed_model_is_no_model(monkeypatch, tmp_path):
    monkeypatch.setenv(models.MODELS_ENV, str(tmp_path))
    found = proposers.make_proposers(Options(), ModelSettings(model="auto"))
    assert names(found) == ["dynamic", "arrays", "annotation", "accel"]


def test_only_a_named_model_or_an_endpoint_is_awaited_for_its_report():
    assert proposers.requested_model(ModelSettings(model="quokka-smollm2"))
    assert proposers.requested_model(ModelSettings(endpoint="http://127.0.0.1:9"))
    assert not any(proposers.requested_model(ModelSettings(model=m)) for m in ("auto", "none", None))
