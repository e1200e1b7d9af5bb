"""The language-model layer: the proposer (`proposer`), its backends (`local`, `endpoint`), the
named models (`registry`) and the model's settings (`settings`).

The proposer's names are importable from here, but are imported when first asked for: what only
needs the settings or the registry (`quokka verify` without a model, `quokka model list`) does
not load the prompt, the frontend and the parsers with them.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .backend import Backend, EndpointError, ModelError, SampleRequest
    from .prompt import build_messages
    from .proposer import LLMConfig, LLMProposer, make_backend, make_llm_proposer
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
    "make_backend",
    "make_llm_proposer",
]


def __getattr__(name: str) -> object:
    if name in __all__:
        return getattr(import_module(".proposer", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
