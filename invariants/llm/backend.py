"""What a language-model backend does: N sampled answers to one chat prompt."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
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
