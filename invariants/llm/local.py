"""A local `transformers` causal LM as a backend: Best-of-N sampling over one shared prompt prefill.

The prompt is run through the model once; its KV cache is then repeated to N rows and the N
answers are sampled together, token by token (rows that finish are dropped from the batch). On a
CPU the prompt (hundreds of tokens) costs far more than one decoding step, so this is close to N
times cheaper than prefilling N copies. torch and transformers are imported here, lazily.
"""

from __future__ import annotations

import inspect
import os
import resource
import time
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from .backend import Message, ModelError, SampleRequest
from .grammar import GrammarState, TokenConstraint

PLAIN_ROLES = {"system": "System", "user": "User", "assistant": "Assistant"}


def cpu_has_bf16() -> bool:
    """True when the CPU has native bfloat16 arithmetic (AVX512-BF16 or AMX)."""
    try:
        flags = Path("/proc/cpuinfo").read_text(encoding="utf-8")
    except OSError:
        return False
    return "avx512_bf16" in flags or "amx_bf16" in flags


def choose_device(device: str) -> str:
    import torch

    if device != "auto":
        return device
    return "cuda" if torch.cuda.is_available() else "cpu"


def choose_dtype(dtype: str, device: str) -> Any:
    import torch

    if dtype == "auto":
        return torch.bfloat16 if device.startswith("cuda") or cpu_has_bf16() else torch.float32
    names = {"bf16": torch.bfloat16, "bfloat16": torch.bfloat16, "fp32": torch.float32,
             "float32": torch.float32, "fp16": torch.float16, "float16": torch.float16}  # fmt: skip
    if dtype not in names:
        raise ModelError(f"unknown dtype {dtype!r} (known: auto, {', '.join(names)})")
    return names[dtype]


def set_threads(threads: int) -> None:
    """torch's CPU threads: `threads`, or (0) half the cores, since the portfolio runs the engines
    beside the model; oversubscribed cores make torch's threads spin against each other."""
    import torch

    torch.set_num_threads(threads if threads > 0 else max(1, (os.cpu_count() or 2) // 2))


def render_prompt(tokenizer: Any, messages: Sequence[Message]) -> tuple[str, bool]:
    """The prompt text, and whether the tokenizer should still add its special tokens."""
    if getattr(tokenizer, "chat_template", None):
        text = tokenizer.apply_chat_template(list(messages), tokenize=False, add_generation_prompt=True)
        return str(text), False
    lines = [f"{PLAIN_ROLES.get(m['role'], m['role'])}: {m['content']}" for m in messages]
    return "\n\n".join([*lines, "Assistant:"]), True


def _expand_cache(cache: Any, n: int) -> Any:
    """The prompt's KV cache repeated to `n` rows (a `Cache` object, or legacy tuples)."""
    if hasattr(cache, "batch_repeat_interleave"):
        cache.batch_repeat_interleave(n)
        return cache
    return tuple(tuple(t.repeat_interleave(n, dim=0) for t in layer) for layer in cache)


def _select_rows(cache: Any, rows: Any) -> Any:
    if hasattr(cache, "batch_select_indices"):
        cache.batch_select_indices(rows)
        return cache
    return tuple(tuple(t[rows] for t in layer) for layer in cache)


def _cache_of(output: Any) -> Any:
    return output.cache if hasattr(output, "cache") else output.past_key_values


def _next_tokens(logits: Any, request: SampleRequest, generator: Any) -> Any:
    import torch

    logits = logits.float()
    if request.temperature <= 0:
        return logits.argmax(dim=-1)
    probs = torch.softmax(logits / request.temperature, dim=-1)
    if request.top_p < 1.0:
        sorted_probs, order = probs.sort(dim=-1, descending=True)
        drop = sorted_probs.cumsum(dim=-1) - sorted_probs > request.top_p
        sorted_probs = sorted_probs.masked_fill(drop, 0.0)
        probs = torch.zeros_like(probs).scatter(-1, order, sorted_probs)
    return torch.multinomial(probs, 1, generator=generator).squeeze(-1)


STOP = -1  # no token the grammar allows: the row ends


@dataclass
class _Batch:
    """The rows still being sampled: their answer indices, tokens so far, KV cache and, when
    decoding is constrained, the grammar state of each answer."""

    rows: list[int]
    tokens: list[list[int]]
    cache: Any
    states: list[GrammarState]
    constraint: TokenConstraint | None = None


def token_texts(tokenizer: Any) -> list[str]:
    """The text each token adds after another token (SentencePiece drops a leading space when a
    token is decoded alone, so each is decoded after a fixed one); "" for special tokens."""
    base = tokenizer.encode("a", add_special_tokens=False)
    special = set(tokenizer.all_special_ids)
    if len(base) == 1:
        prefix = len(tokenizer.decode(base))
        texts = [tokenizer.decode([*base, i])[prefix:] for i in range(len(tokenizer))]
    else:
        texts = [tokenizer.decode([i]) for i in range(len(tokenizer))]
    return ["" if i in special else text for i, text in enumerate(texts)]


class LocalModel:
    """A causal LM and its tokenizer, loaded from a directory (see `load_model`)."""

    def __init__(self, model: Any, tokenizer: Any, device: str) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.device = device
        self.eos = self._eos_ids()
        self.context = int(getattr(model.config, "max_position_embeddings", 0) or 0)
        params = inspect.signature(model.forward).parameters
        # transformers 5.x renamed `past_key_values` to `cache` (the old name is deprecated).
        self.cache_arg = "cache" if "cache" in params else "past_key_values"
        self.prefill_args = {"logits_to_keep": 1} if "logits_to_keep" in params else {}
        self._texts: list[str] | None = None

    def constraint(self, request: SampleRequest) -> TokenConstraint | None:
        if request.grammar is None:
            return None
        if self._texts is None:
            self._texts = token_texts(self.tokenizer)
        return TokenConstraint(request.grammar, self._texts, self.eos)

    def _eos_ids(self) -> set[int]:
        ids = getattr(self.model.generation_config, "eos_token_id", None)
        if ids is None:
            ids = self.tokenizer.eos_token_id
        if ids is None:
            return set()
        return {int(i) for i in ids} if isinstance(ids, (list, tuple)) else {int(ids)}

    def encode(self, messages: Sequence[Message]) -> Any:
        text, special = render_prompt(self.tokenizer, messages)
        ids = self.tokenizer(text, return_tensors="pt", add_special_tokens=special)["input_ids"]
        return ids.to(self.device)

    def sample(self, messages: Sequence[Message], request: SampleRequest) -> list[str]:
        """`request.n` answers sampled from one prefill of the prompt."""
        ids = self.encode(messages)
        try:
            tokens = self.sample_ids(ids, request)
        except MemoryError as exc:
            raise ModelError(f"out of memory while sampling{memory_hint()}") from exc
        return [self.tokenizer.decode(t, skip_special_tokens=True) for t in tokens]

    def sample_ids(self, prompt_ids: Any, request: SampleRequest) -> list[list[int]]:
        import torch

        if request.n <= 0:
            return []
        self._check_length(int(prompt_ids.shape[1]), request.max_new_tokens)
        deadline = time.monotonic() + request.timeout_s
        generator = torch.Generator(device=self.device).manual_seed(request.seed)
        with torch.inference_mode():
            out = self.model(input_ids=prompt_ids, use_cache=True, **self.prefill_args)
            logits = out.logits[:, -1, :].expand(request.n, -1)
            batch = _Batch(list(range(request.n)), [[] for _ in range(request.n)],
                           _expand_cache(_cache_of(out), request.n),
                           [GrammarState()] * request.n, self.constraint(request))  # fmt: skip
            for _ in range(request.max_new_tokens):
                logits = self._step(batch, logits, request, generator)
                if logits is None or time.monotonic() > deadline:
                    break
        return batch.tokens

    def _step(self, batch: _Batch, logits: Any, request: SampleRequest, generator: Any) -> Any:
        """Sample one token per active row, drop finished rows, run the model once more."""
        import torch

        chosen = _next_tokens(logits, request, generator).tolist()
        if (constraint := batch.constraint) is not None:
            chosen = [
                _constrained(batch, constraint, pos, tok, logits, request, generator)
                for pos, tok in enumerate(chosen)
            ]
        keep = []
        for pos, (row, tok) in enumerate(zip(batch.rows, chosen, strict=True)):
            if tok in self.eos or tok == STOP:
                continue
            batch.tokens[row].append(tok)
            keep.append(pos)
        if not keep:
            return None
        if len(keep) < len(batch.rows):
            batch.cache = _select_rows(batch.cache, torch.tensor(keep, device=self.device))
            batch.rows = [batch.rows[p] for p in keep]
        feed = torch.tensor([[batch.tokens[r][-1]] for r in batch.rows], device=self.device)
        out = self.model(input_ids=feed, use_cache=True, **{self.cache_arg: batch.cache})
        batch.cache = _cache_of(out)
        return out.logits[:, -1, :]

    def _check_length(self, prompt_tokens: int, new_tokens: int) -> None:
        if self.context and prompt_tokens + new_tokens > self.context:
            raise ModelError(
                f"prompt of {prompt_tokens} tokens + {new_tokens} new tokens exceeds the model's "
                f"context of {self.context} tokens"
            )


def _constrained(
    batch: _Batch,
    constraint: TokenConstraint,
    pos: int,
    token: int,
    logits: Any,
    request: SampleRequest,
    generator: Any,
) -> int:
    """`token` when the grammar allows it for row `pos`, else one drawn from the allowed tokens
    with the row's own probabilities (for plain temperature sampling, the two steps together
    sample exactly from the distribution restricted to the allowed tokens)."""
    import torch

    row = batch.rows[pos]
    state = constraint.step(batch.states[row], token)
    if state is None:
        allowed = constraint.allowed(batch.states[row])
        if not allowed:
            return STOP
        ids = torch.tensor(allowed, device=logits.device)
        token = allowed[int(_next_tokens(logits[pos : pos + 1, ids], request, generator)[0])]
        state = constraint.step(batch.states[row], token)
    if state is not None:
        batch.states[row] = state
    return token


def memory_hint() -> str:
    """Why loading may run out of memory: the address-space limit of this process, if any."""
    limit = resource.getrlimit(resource.RLIMIT_AS)[0]
    if limit == resource.RLIM_INFINITY:
        return ""
    return (
        f" (this process may map at most {limit >> 20} MB: raise the memory limit, or serve the model "
        "with `quokka serve-model DIR` and use --endpoint)"
    )


def _load(directory: Path, dtype: str, device: str) -> LocalModel:
    try:
        from transformers import AutoModelForCausalLM, AutoTokenizer
    except ImportError as exc:
        raise ModelError(
            f"the local model backend needs torch and transformers (the [llm] extra): {exc}"
        ) from exc
    try:
        dev = choose_device(device)
        tokenizer: Any = AutoTokenizer.from_pretrained(str(directory), local_files_only=True)
        model: Any = AutoModelForCausalLM.from_pretrained(
            str(directory), dtype=choose_dtype(dtype, dev), local_files_only=True
        )
        model.to(dev)
    except (OSError, ValueError, KeyError) as exc:
        raise ModelError(f"cannot load a causal language model from {directory}: {exc}") from exc
    except (MemoryError, RuntimeError) as exc:
        raise ModelError(f"cannot load the model in {directory}: {exc}{memory_hint()}") from exc
    model.eval()
    return LocalModel(model, tokenizer, dev)


@cache
def _cached(directory: Path, dtype: str, device: str) -> LocalModel:
    return _load(directory, dtype, device)


def load_model(directory: str | Path, dtype: str = "auto", device: str = "auto") -> LocalModel:
    """The model in `directory`, loaded once per process (cached by resolved path, dtype, device)."""
    path = Path(directory).expanduser().resolve()
    if not path.is_dir():
        raise ModelError(f"model directory not found: {directory}")
    return _cached(path, dtype, device)


class LocalBackend:
    """A `Backend` over a model directory; the model is loaded at the first request.

    `threads` sets torch's CPU threads first (0: half the cores; None: leave torch's setting).
    """

    constrains = True  # honours `SampleRequest.grammar`

    def __init__(
        self, directory: str | Path, dtype: str = "auto", device: str = "auto", threads: int | None = None
    ) -> None:
        self.directory = directory
        self.dtype = dtype
        self.device = device
        self.threads = threads

    def sample(self, messages: Sequence[Message], request: SampleRequest) -> list[str]:
        if self.threads is not None:
            set_threads(self.threads)
        return load_model(self.directory, self.dtype, self.device).sample(messages, request)
