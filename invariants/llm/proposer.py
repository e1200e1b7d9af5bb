"""The language-model proposer: prompt a model in the Quokka format, parse its answers into candidates
(the package `quokka.invariants.llm` names what this module defines, and imports it when asked).

Backends: a local transformers model directory (`local`, torch imported lazily) or any
OpenAI-compatible endpoint (`endpoint`). `make_llm_proposer(settings)` builds the proposer the
model layer's settings (`settings.ModelSettings`: `--model` / `--endpoint`, `[tool.quokka]`,
`[tool.quokka.extra]`) ask for, wrapped in template completion (`invariants.completion`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from quokka.verifier.errors import InputError
from quokka.verifier.ir import Program
from quokka.verifier.ir.builder import num

from ..protocol import Candidate, ProposalContext, Proposer, State
from .backend import Backend, EndpointError, Message, ModelError, SampleRequest, sample_per_loop
from .grammar import AnswerGrammar
from .prompt import PromptConfig, answer_grammar, build_messages, messages_for_context
from .settings import ModelSettings

__all__ = [
    "Backend",
    "EndpointError",
    "LLMConfig",
    "LLMProposer",
    "ModelError",
    "ModelSettings",
    "SampleRequest",
    "build_messages",
    "make_llm_proposer",
]


BUDGET_SHARE = 0.6  # of a round's remaining budget; Houdini and the two-query check need the rest
ANSWER_TOKENS = 32  # decoded per answer under the answer grammar (`LLMConfig.request`)


@dataclass(frozen=True)
class LLMConfig:
    """How the proposer samples and what it does with the answers."""

    samples: int = 8
    temperature: float = 0.8
    max_new_tokens: int = 384
    timeout_s: float = 120.0
    prompt: PromptConfig = field(default_factory=PromptConfig)
    completion: bool = True
    api_key: str | None = None
    model_name: str | None = None
    dtype: str = "auto"
    device: str = "auto"
    threads: int = 0
    constrained: bool = True
    per_loop: bool = True
    escalate: bool = False

    @staticmethod
    def from_settings(settings: ModelSettings) -> LLMConfig:
        return LLMConfig(
            samples=settings.samples,
            temperature=settings.temperature,
            max_new_tokens=settings.max_new_tokens,
            timeout_s=settings.timeout_s,
            prompt=PromptConfig(settings.prompt, settings.few_shot),
            completion=settings.completion,
            api_key=settings.api_key,
            model_name=settings.model_name,
            dtype=settings.dtype,
            device=settings.device,
            threads=settings.threads,
            constrained=settings.constrained,
            per_loop=settings.per_loop,
            escalate=bool(settings.escalate),
        )

    def grammar(self, program: Program) -> AnswerGrammar | None:
        return answer_grammar(program, self.prompt) if self.constrained else None

    def request(
        self, program: Program, seed: int = 0, timeout_s: float | None = None, backend: object = None
    ) -> SampleRequest:
        """The sampling request for `program`. When `backend` decodes under the answer grammar
        (`constrains`; None: assume it does), an answer is one or two invariant lines, so at most
        `ANSWER_TOKENS` tokens are decoded: a row that rambles on would hold up the whole batch
        (the training answers' conditions: median 12 tokens, 90 % under 38)."""
        grammar = self.grammar(program)
        capped = grammar is not None and (backend is None or getattr(backend, "constrains", False))
        tokens = min(self.max_new_tokens, ANSWER_TOKENS) if capped else self.max_new_tokens
        timeout = self.timeout_s if timeout_s is None else timeout_s
        return SampleRequest(self.samples, self.temperature, tokens, seed, timeout, grammar=grammar)

    def sample(self, backend: Backend, messages: Sequence[Message], request: SampleRequest) -> list[str]:
        """The request's answers, shared out over the loops when `per_loop` is set."""
        if self.per_loop:
            return sample_per_loop(backend, messages, request)
        return backend.sample(messages, request)


def _ctis_key(ctis: Mapping[str, Sequence[State]]) -> tuple[tuple[str, int], ...]:
    return tuple(sorted((loop, len(states)) for loop, states in ctis.items() if states))


class LLMProposer:
    """Samples N answers per round: the first round asks plainly, later rounds only when new
    counterexamples to induction can be shown to the model. With `config.escalate` the first
    round is left to the other proposers (tasks they prove never wait for the model)."""

    name = "llm"

    def __init__(self, backend: Backend, config: LLMConfig = LLMConfig()) -> None:
        self.backend = backend
        self.config = config
        self._asked: set[tuple[tuple[str, int], ...]] = set()
        self._dedup: tuple[Program, Any] | None = None
        self._rounds = 0

    def _deduplicator(self, program: Program) -> Any:
        from .dedup import Deduplicator

        if self._dedup is None or self._dedup[0] is not program:
            self._dedup = (program, Deduplicator(program))
            self._asked = set()
            self._rounds = 0
        return self._dedup[1]

    def request(self, context: ProposalContext) -> SampleRequest:
        """Sampling settings for one round: at most `BUDGET_SHARE` of the time left to the run."""
        c = self.config
        timeout = max(1.0, min(c.timeout_s, BUDGET_SHARE * context.budget_s))
        return c.request(context.program, context.seed, timeout, self.backend)

    def propose(self, context: ProposalContext) -> list[Candidate]:
        from .answers import parse_answers
        from .dedup import deduplicate

        dedup = self._deduplicator(context.program)
        self._rounds += 1
        key = _ctis_key(context.ctis)
        if self.config.escalate and self._rounds == 1:
            return []
        if not context.program.loops or key in self._asked:
            return []
        self._asked.add(key)
        if context.source is None:
            return [Candidate("", num(1), "", self.name, rejected="the prompt needs the program's C source")]
        answers = self.config.sample(
            self.backend, messages_for_context(context, self.config.prompt), self.request(context)
        )
        return deduplicate(parse_answers(answers, context.program), context.program, dedup)


def make_backend(settings: ModelSettings) -> Backend:
    """The local model (`--model DIR` or a name `quokka model pull` installed, `llm.registry`) or
    the endpoint (`--endpoint URL` / `QUOKKA_ENDPOINT`)."""
    if settings.model and settings.endpoint:
        raise InputError(None, "give either a model directory or an endpoint, not both")
    if settings.model:
        from .local import LocalBackend
        from .registry import resolve_model

        found = resolve_model(settings.model)
        return LocalBackend(found.directory, settings.dtype, settings.device, settings.threads, found.adapter)
    from .endpoint import EndpointBackend

    return EndpointBackend(settings.endpoint, settings.api_key, settings.model_name)


def make_llm_proposer(settings: ModelSettings) -> Proposer:
    """The language-model proposer `settings` describe (with template completion unless disabled)."""
    config = LLMConfig.from_settings(settings)
    proposer = LLMProposer(make_backend(settings), config)
    if not config.completion:
        return proposer
    from ..completion import CompletionProposer

    return CompletionProposer(proposer)
