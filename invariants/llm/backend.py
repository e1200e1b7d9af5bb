"""What a language-model backend does: N sampled answers to one chat prompt."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from quokka.verifier.errors import QuokkaError

from .grammar import AnswerGrammar

Message = dict[str, str]


class ModelError(QuokkaError):  # type: ignore[misc]  # mypy cannot follow the editable install
    """A language model could not be loaded or run."""


class EndpointError(ModelError):
    """An OpenAI-compatible endpoint was unreachable or answered with an error."""


@dataclass(frozen=True)
class SampleRequest:
    """Best-of-N sampling settings; `timeout_s` bounds the whole request. With `grammar`, a backend
    that can (the local one) decodes only answers of that grammar; others ignore it."""

    n: int = 8
    temperature: float = 0.8
    max_new_tokens: int = 384
    seed: int = 0
    timeout_s: float = 120.0
    top_p: float = 1.0
    grammar: AnswerGrammar | None = None


class Backend(Protocol):
    def sample(self, messages: Sequence[Message], request: SampleRequest) -> list[str]:
        """Up to `request.n` answers (fewer when time runs out)."""
        ...


def shares(n: int, parts: int) -> list[int]:
    """`n` split into `parts` near-equal whole shares, larger ones first."""
    return [n // parts + (i < n % parts) for i in range(parts)]


def sample_per_loop(backend: Backend, messages: Sequence[Message], request: SampleRequest) -> list[str]:
    """`backend.sample`, with the N samples shared out over the grammar's insertion lines.

    Each share decodes under the grammar pinned to its line (`AnswerGrammar.pinned`), so every
    loop of a multi-loop program gets guesses: a small model left to pick the line answers for
    one loop almost always. Backends that do not constrain decoding (`constrains` false) get the
    request as it is. A backend with `sample_shares` decodes the shares together (one batch);
    others get them one after another within the request's timeout.
    """
    grammar = request.grammar
    if grammar is None or len(grammar.lines) < 2 or not getattr(backend, "constrains", False):
        return backend.sample(messages, request)
    parts = _pinned_shares(request, grammar)
    if hasattr(backend, "sample_shares"):
        groups = backend.sample_shares(messages, parts)
        return [answer for group in groups for answer in group]
    deadline = time.monotonic() + request.timeout_s
    answers: list[str] = []
    for share in parts:
        left = deadline - time.monotonic()
        if left > 0:
            answers.extend(backend.sample(messages, replace(share, timeout_s=left)))
    return answers


def _pinned_shares(request: SampleRequest, grammar: AnswerGrammar) -> list[SampleRequest]:
    """The request's non-empty shares, one per insertion line, each pinned to its line."""
    return [
        replace(request, n=n, seed=request.seed + i, grammar=grammar.pinned(line))
        for i, (line, n) in enumerate(zip(grammar.lines, shares(request.n, len(grammar.lines)), strict=True))
        if n > 0
    ]
