"""A decoding step's attention on a CPU, as a transformers attention implementation.

In a decoding step each row has one query position. torch's CPU flash-attention kernel (what
`sdpa` runs there) is slow for that shape: on the 2-core development machine, 8 rows over a
700-position cache, 1.0 ms per layer, three times two plain matrix products around a softmax.
`decode_attention` computes those products, with the query heads grouped by the key/value head
they share (no copied keys and values, as `sdpa`'s `pack_gqa`); anything else (the prompt, the
forced answer start, dropout, attention biases) goes to `sdpa`. Like transformers' `eager`
attention, the scores are rounded to the model's dtype before the softmax, which is computed in
float32. `use_decode_attention` switches a model to it.
"""

from __future__ import annotations

from typing import Any

NAME = "quokka_decode"
_EXTRAS = ("position_bias", "softcap", "s_aux", "sinks")  # what only `sdpa` handles


def decode_attention(
    module: Any,
    query: Any,
    key: Any,
    value: Any,
    attention_mask: Any,
    dropout: float = 0.0,
    scaling: float | None = None,
    **kwargs: Any,
) -> tuple[Any, None]:
    """Attention of one query position per row (shapes: query (batch, heads, 1, dim), key and
    value (batch, kv_heads, length, dim), a boolean or additive mask (batch, 1, 1, length));
    other calls: transformers' `sdpa_attention_forward`. The output is (batch, 1, heads, dim)."""
    import torch

    if not _plain_step(query, key, attention_mask, dropout, kwargs):
        from transformers.integrations.sdpa_attention import sdpa_attention_forward

        return sdpa_attention_forward(  # type: ignore[no-any-return]
            module, query, key, value, attention_mask, dropout=dropout, scaling=scaling, **kwargs
        )
    batch, heads, _, dim = query.shape
    groups = key.shape[1]
    scale = scaling if scaling is not None else dim**-0.5
    grouped = query.reshape(batch, groups, heads // groups, dim)
    scores = torch.matmul(grouped, key.transpose(-1, -2)).float() * scale
    if attention_mask is not None:
        if attention_mask.dtype == torch.bool:
            scores = scores.masked_fill(~attention_mask, float("-inf"))
        else:
            scores = scores + attention_mask
    weights = torch.softmax(scores, dim=-1).to(value.dtype)
    out = torch.matmul(weights, value).reshape(batch, heads, 1, value.shape[-1])
    return out.transpose(1, 2).contiguous(), None


def _plain_step(query: Any, key: Any, mask: Any, dropout: float, kwargs: dict[str, Any]) -> bool:
    """A decoding step of plain attention: one query position, the same batch in query and keys,
    the query heads a multiple of the key heads, a mask shared by all heads and no extras."""
    if query.shape[2] != 1 or dropout or any(kwargs.get(k) is not None for k in _EXTRAS):
        return False
    if query.shape[0] != key.shape[0] or query.shape[1] % key.shape[1]:
        return False
    return mask is None or (mask.dim() == 4 and mask.shape[1] == 1 and mask.shape[2] == 1)


def use_decode_attention(model: Any) -> bool:
    """Switch `model` from `sdpa` to `decode_attention` (registered with transformers once);
    False, and the model unchanged, when it uses another implementation or cannot switch."""
    try:
        from transformers import AttentionInterface
        from transformers.masking_utils import AttentionMaskInterface, sdpa_mask
    except ImportError:
        return False
    if getattr(model.config, "_attn_implementation", None) != "sdpa":
        return False
    AttentionInterface.register(NAME, decode_attention)
    AttentionMaskInterface.register(NAME, sdpa_mask)
    switch = getattr(model, "set_attn_implementation", None)  # transformers >= 4.56
    if switch is None:
        return False
    try:
        switch(NAME)
    except ValueError:
        return False
    return bool(model.config._attn_implementation == NAME)
