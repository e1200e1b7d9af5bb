"""Drawing the next tokens from a decoding step's logits: temperature, top-p, and the answer
grammar (a refused token is redrawn from the distribution restricted to the allowed tokens).

The logits may score only some tokens (`Head`): under the answer grammar, a step need not score
the tokens no answer can contain (`TokenConstraint.support`), so the model's output layer, a
fifth of a small model's weights, is restricted to them (`LocalModel`). Tokens the grammar
refuses are never kept, so the answers' distribution is the same: for each row, the model's
distribution restricted to the tokens the grammar allows. torch is imported lazily.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .backend import SampleRequest
from .grammar import GrammarState, TokenConstraint

STOP = -1  # no token the grammar allows: the row ends
REDRAWS = 64  # tokens drawn for a row before the grammar's list of allowed tokens is computed


@dataclass
class Head:
    """The tokens the logits score: column c scores `tokens[c]` (in increasing order); with
    `tokens` None, every token (column = token id)."""

    tokens: list[int] | None = None
    _columns: dict[int, int] = field(default_factory=dict, repr=False)
    _index: Any = field(default=None, repr=False)

    def token(self, column: int) -> int:
        return column if self.tokens is None else self.tokens[column]

    def columns(self, tokens: Sequence[int]) -> list[int]:
        """The columns of those of `tokens` that the logits score."""
        if self.tokens is None:
            return list(tokens)
        if not self._columns:
            self._columns = {t: c for c, t in enumerate(self.tokens)}
        return [self._columns[t] for t in tokens if t in self._columns]

    def select(self, logits: Any) -> Any:
        """This head's columns of logits over the whole vocabulary."""
        import torch

        if self.tokens is None:
            return logits
        if self._index is None:
            self._index = torch.tensor(self.tokens, device=logits.device)
        return logits.index_select(-1, self._index)


def head_of(constraints: Sequence[TokenConstraint | None], request: SampleRequest) -> Head:
    """The tokens rows under these grammars can take: the union of the grammars' supports, or all
    tokens when a row is unconstrained or top-p applies (its nucleus is taken over all tokens)."""
    if not constraints or request.top_p < 1.0 or any(c is None for c in constraints):
        return Head()
    unique = {id(c): c for c in constraints if c is not None}
    return Head(sorted(set().union(*(c.support() for c in unique.values()))))


def probabilities(logits: Any, request: SampleRequest) -> Any:
    """Each row's next-token distribution (temperature, then top-p; plain softmax at 0)."""
    import torch

    probs = torch.softmax(logits.float() / max(request.temperature, 1e-6), dim=-1)
    if request.top_p < 1.0:
        sorted_probs, order = probs.sort(dim=-1, descending=True)
        drop = sorted_probs.cumsum(dim=-1) - sorted_probs > request.top_p
        sorted_probs = sorted_probs.masked_fill(drop, 0.0)
        probs = torch.zeros_like(probs).scatter(-1, order, sorted_probs)
    return probs


def draw(weights: Any, generator: Any) -> Any:
    """One column per row of `weights` (non-negative, each row's sum positive), in proportion to
    the weights: the first column whose cumulative weight reaches a uniform point in (0, sum]
    (exact, and much cheaper on a CPU than `torch.multinomial` over a whole vocabulary)."""
    import torch

    cdf = weights.float().cumsum(dim=-1)
    uniform = torch.rand(cdf.shape[0], 1, generator=generator, device=cdf.device, dtype=cdf.dtype)
    return torch.searchsorted(cdf, (1.0 - uniform) * cdf[:, -1:]).squeeze(-1)


def next_columns(logits: Any, request: SampleRequest, generator: Any) -> Any:
    """Each row's next column: the most likely one at temperature 0, else a draw."""
    if request.temperature <= 0:
        return logits.float().argmax(dim=-1)
    return draw(probabilities(logits, request), generator)


def constrained(
    constraint: TokenConstraint,
    state: GrammarState,
    token: int,
    logits: Any,
    request: SampleRequest,
    generator: Any,
    head: Head,
) -> tuple[int, GrammarState | None]:
    """`token` and the state after it when the grammar allows it after `state`, else a token drawn
    from the row's distribution (`logits`) restricted to the allowed tokens (`redraw`)."""
    after = constraint.step(state, token)
    if after is not None:
        return token, after
    return redraw(constraint, state, logits, request, generator, head)


def redraw(
    constraint: TokenConstraint,
    state: GrammarState,
    logits: Any,
    request: SampleRequest,
    generator: Any,
    head: Head,
) -> tuple[int, GrammarState | None]:
    """A token the grammar allows after `state`, from the distribution restricted to the allowed
    tokens. Drawing without replacement until a token is allowed samples exactly that, and costs a
    few grammar steps where the model mostly agrees with the grammar; only after `REDRAWS` refusals
    is the allowed set listed (a scan of the whole vocabulary, cached per grammar state)."""
    import torch

    weights = probabilities(logits.unsqueeze(0), request)[0].clone()
    for _ in range(REDRAWS):
        if float(weights.sum()) <= 0.0:
            break
        column = _pick(weights, request, generator)
        token = head.token(column)
        after = constraint.step(state, token)
        if after is not None:
            return token, after
        weights[column] = 0.0
    columns = head.columns(constraint.allowed(state))
    if not columns:
        return STOP, None
    ids = torch.tensor(columns, device=logits.device)
    token = head.token(columns[int(next_columns(logits[ids].unsqueeze(0), request, generator)[0])])
    return token, constraint.step(state, token)


def _pick(weights: Any, request: SampleRequest, generator: Any) -> int:
    """The heaviest column at temperature 0, else one drawn in proportion to the weights."""
    if request.temperature <= 0:
        return int(weights.argmax())
    return int(draw(weights.unsqueeze(0), generator)[0])
