"""A local `transformers` causal LM as a backend: Best-of-N sampling over one shared prompt prefill.

The prompt is run through the model once, on one row, and kept while the next requests repeat it
(the per-loop shares of a proposal round); its KV cache is copied into a preallocated cache of N
rows and the N answers are sampled together, token by token. On a CPU the prompt (hundreds of
tokens) costs far more than one decoding step, so this is close to N times cheaper than
prefilling N copies. torch and transformers are imported here, lazily.
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
from .grammar import AnswerGrammar, GrammarState, TokenConstraint, answer_start

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


def _probabilities(logits: Any, request: SampleRequest) -> Any:
    """Each row's next-token distribution (temperature, then top-p; plain softmax at 0)."""
    import torch

    probs = torch.softmax(logits.float() / max(request.temperature, 1e-6), dim=-1)
    if request.top_p < 1.0:
        sorted_probs, order = probs.sort(dim=-1, descending=True)
        drop = sorted_probs.cumsum(dim=-1) - sorted_probs > request.top_p
        sorted_probs = sorted_probs.masked_fill(drop, 0.0)
        probs = torch.zeros_like(probs).scatter(-1, order, sorted_probs)
    return probs


def _next_tokens(logits: Any, request: SampleRequest, generator: Any) -> Any:
    import torch

    if request.temperature <= 0:
        return logits.float().argmax(dim=-1)
    return torch.multinomial(_probabilities(logits, request), 1, generator=generator).squeeze(-1)


STOP = -1  # no token the grammar allows: the row ends
REDRAWS = 64  # tokens drawn for a row before the grammar's list of allowed tokens is computed


@dataclass
class _Prompt:
    """A prompt run through the model once, on one row: its token ids, each layer's keys and
    values, and the logits after its last token. Requests that repeat the prompt (the per-loop
    shares of one proposal round) reuse it."""

    ids: tuple[int, ...]
    layers: list[tuple[Any, Any]]
    logits: Any


@dataclass
class _Batch:
    """The rows being sampled: tokens so far, which rows still run, the KV cache and each row's
    grammar (None: unconstrained) and state in it."""

    tokens: list[list[int]]
    active: list[bool]
    cache: Any
    states: list[GrammarState]
    constraints: list[TokenConstraint | None]


def _forced_state(constraint: TokenConstraint | None, text: str) -> GrammarState:
    """The grammar state after a forced answer start `text`."""
    start = GrammarState()
    return start if constraint is None else constraint.grammar.advance(start, text) or start


def _split(rows: list[list[int]], sizes: Sequence[int]) -> list[list[list[int]]]:
    out, at = [], 0
    for size in sizes:
        out.append(rows[at : at + size])
        at += size
    return out


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
        self._prompt: _Prompt | None = None
        pad = tokenizer.pad_token_id
        self.pad = int(pad if pad is not None else min(self.eos, default=0))

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
        return self.sample_shares(messages, [request])[0]

    def sample_shares(
        self, messages: Sequence[Message], requests: Sequence[SampleRequest]
    ) -> list[list[str]]:
        """The answers to each request (its share of the samples), all from one prefill of the
        prompt and, when their forced starts are equally long, decoded together in one batch (the
        decoding settings and the time limit of the first request apply to all)."""
        ids = self.encode(messages)
        forced = [self.forced_ids(r.grammar) for r in requests]
        groups = [list(range(len(requests)))] if len({len(f) for f in forced}) <= 1 else [
            [i] for i in range(len(requests))]  # fmt: skip
        out: list[list[str]] = [[] for _ in requests]
        try:
            for group in groups:
                rows = self.sample_ids(ids, [requests[i] for i in group])
                for i, answers in zip(group, _split(rows, [requests[i].n for i in group]), strict=True):
                    out[i] = [self.tokenizer.decode(t, skip_special_tokens=True) for t in answers]
        except MemoryError as exc:
            raise ModelError(f"out of memory while sampling{memory_hint()}") from exc
        return out

    def sample_ids(self, prompt_ids: Any, requests: Sequence[SampleRequest]) -> list[list[int]]:
        """The answers' token ids, `r.n` rows per request r in order, decoded together from one
        prefill of the prompt.

        The prompt's KV cache is copied into a preallocated cache of all rows (a growing cache
        copies itself at every step, which costs more than the model on a CPU). When a request's
        grammar names one insertion line, its answers' fixed start `After line X, insert assume(`
        is forced, not sampled (the forced starts of one call must be equally long).
        """
        import torch

        first = requests[0] if requests else SampleRequest(n=0)
        forced = [f for r in requests for f in [self.forced_ids(r.grammar)] * r.n]
        if not forced:
            return []
        self._check_length(int(prompt_ids.shape[1]) + len(forced[0]), first.max_new_tokens)
        deadline = time.monotonic() + first.timeout_s
        generator = torch.Generator(device=self.device).manual_seed(first.seed)
        with torch.inference_mode():
            batch, logits = self._start(prompt_ids, forced, requests)
            for _ in range(first.max_new_tokens):
                logits = self._step(batch, logits, first, generator)
                if logits is None or time.monotonic() > deadline:
                    break
        return [f + tokens for f, tokens in zip(forced, batch.tokens, strict=True)]

    def forced_ids(self, grammar: AnswerGrammar | None) -> list[int]:
        """The tokens of `After line X, insert assume(` when `grammar` allows one line X, else []."""
        if grammar is None or len(grammar.lines) != 1:
            return []
        text = answer_start(grammar.lines[0])
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def _start(
        self, prompt_ids: Any, forced: list[list[int]], requests: Sequence[SampleRequest]
    ) -> tuple[_Batch, Any]:
        """The batch of all rows, each holding the prompt and its forced start, and the logits
        after that."""
        import torch

        n = len(forced)
        prompt = self._prefill(prompt_ids)
        length = len(prompt.ids) + len(forced[0]) + requests[0].max_new_tokens
        cache = self._cache_of_rows(prompt, n, length)
        logits = prompt.logits.expand(n, -1)
        if forced[0]:
            feed = torch.tensor(forced, device=self.device)
            logits = self.model(input_ids=feed, use_cache=True, **{self.cache_arg: cache}).logits[:, -1, :]
        constraints = [c for r in requests for c in [self.constraint(r)] * r.n]
        texts = [self.tokenizer.decode(f) for f in forced]
        states = [_forced_state(c, t) for c, t in zip(constraints, texts, strict=True)]
        return _Batch([[] for _ in range(n)], [True] * n, cache, states, constraints), logits

    def _prefill(self, prompt_ids: Any) -> _Prompt:
        """The prompt run through the model on one row (reused when the last prompt repeats)."""
        from transformers import DynamicCache

        ids = tuple(int(i) for i in prompt_ids[0].tolist())
        if self._prompt is not None and self._prompt.ids == ids:
            return self._prompt
        cache = DynamicCache(config=self.model.config)
        out = self.model(input_ids=prompt_ids, use_cache=True, **{self.cache_arg: cache}, **self.prefill_args)
        layers = [(layer.keys, layer.values) for layer in cache.layers]  # type: ignore[union-attr]
        self._prompt = _Prompt(ids, layers, out.logits[:, -1, :])
        return self._prompt

    def _cache_of_rows(self, prompt: _Prompt, rows: int, length: int) -> Any:
        """A preallocated cache of `rows` rows and `length` positions, each row holding the prompt."""
        from transformers import StaticCache

        cache = StaticCache(config=self.model.config, max_cache_len=length)
        for i, (keys, values) in enumerate(prompt.layers):
            cache.update(keys.expand(rows, -1, -1, -1), values.expand(rows, -1, -1, -1), i)
        return cache

    def _step(self, batch: _Batch, logits: Any, request: SampleRequest, generator: Any) -> Any:
        """Sample one token per running row, end the rows that finish, run the model once more
        (on every row: finished ones are fed their last token and ignored)."""
        import torch

        chosen = _next_tokens(logits, request, generator).tolist()
        for row, tok in enumerate(chosen):
            if batch.active[row]:
                self._take(batch, row, tok, logits, request, generator)
        if not any(batch.active):
            return None
        feed = torch.tensor([[t[-1] if t else self.pad] for t in batch.tokens], device=self.device)
        out = self.model(input_ids=feed, use_cache=True, **{self.cache_arg: batch.cache})
        return out.logits[:, -1, :]

    def _take(self, batch: _Batch, row: int, tok: int, logits: Any, request: SampleRequest,
              generator: Any) -> None:  # fmt: skip
        if (constraint := batch.constraints[row]) is not None:
            tok = _constrained(batch, constraint, row, tok, logits, request, generator)
        if tok in self.eos or tok == STOP:
            batch.active[row] = False
        else:
            batch.tokens[row].append(tok)

    def _check_length(self, prompt_tokens: int, new_tokens: int) -> None:
        if self.context and prompt_tokens + new_tokens > self.context:
            raise ModelError(
                f"prompt of {prompt_tokens} tokens + {new_tokens} new tokens exceeds the model's "
                f"context of {self.context} tokens"
            )


def _constrained(
    batch: _Batch,
    constraint: TokenConstraint,
    row: int,
    token: int,
    logits: Any,
    request: SampleRequest,
    generator: Any,
) -> int:
    """`token` when the grammar allows it for `row`, else one drawn from the row's distribution
    restricted to the tokens the grammar allows (`_redraw`)."""
    state = constraint.step(batch.states[row], token)
    if state is None:
        token, state = _redraw(constraint, batch.states[row], logits[row], request, generator)
    if state is not None:
        batch.states[row] = state
    return token


def _redraw(
    constraint: TokenConstraint, state: GrammarState, logits: Any, request: SampleRequest, generator: Any
) -> tuple[int, GrammarState | None]:
    """A token the grammar allows after `state`, from the distribution restricted to the allowed
    tokens. Drawing without replacement until a token is allowed samples exactly that, and costs a
    few grammar steps where the model mostly agrees with the grammar; only after `REDRAWS` refusals
    is the allowed set listed (a scan of the whole vocabulary, cached per grammar state)."""
    import torch

    weights = _probabilities(logits.unsqueeze(0), request)[0].clone()
    for _ in range(REDRAWS):
        if float(weights.sum()) <= 0.0:
            break
        if request.temperature <= 0:
            token = int(weights.argmax())
        else:
            token = int(torch.multinomial(weights, 1, generator=generator))
        after = constraint.step(state, token)
        if after is not None:
            return token, after
        weights[token] = 0.0
    allowed = constraint.allowed(state)
    if not allowed:
        return STOP, None
    ids = torch.tensor(allowed, device=logits.device)
    token = allowed[int(_next_tokens(logits[ids].unsqueeze(0), request, generator)[0])]
    return token, constraint.step(state, token)


def memory_hint() -> str:
    """Why loading may run out of memory: the address-space limit of this process, if any."""
    limit = resource.getrlimit(resource.RLIMIT_AS)[0]
    if limit == resource.RLIM_INFINITY:
        return ""
    return (
        f" (this process may map at most {limit >> 20} MB: raise the memory limit, or serve the model "
        "with `quokka serve-model DIR` and use --endpoint)"
    )


def _load(directory: Path, dtype: str, device: str, adapter: Path | None = None) -> LocalModel:
    try:
        from transformers import AutoModelForCausalLM, AutoTokenizer
    except ImportError as exc:
        raise ModelError(
            f"the local model backend needs torch and transformers (the [llm] extra): {exc}"
        ) from exc
    from .registry import apply_adapter, quiet_transformers

    try:
        dev = choose_device(device)
        with quiet_transformers():
            tokenizer: Any = AutoTokenizer.from_pretrained(str(directory), local_files_only=True)
            model: Any = AutoModelForCausalLM.from_pretrained(
                str(directory), dtype=choose_dtype(dtype, dev), local_files_only=True
            )
            if adapter is not None:
                model = apply_adapter(model, adapter)
        model.to(dev)
    except (OSError, ValueError, KeyError) as exc:
        raise ModelError(f"cannot load a causal language model from {directory}: {exc}") from exc
    except (MemoryError, RuntimeError) as exc:
        raise ModelError(f"cannot load the model in {directory}: {exc}{memory_hint()}") from exc
    model.eval()
    return LocalModel(model, tokenizer, dev)


@cache
def _cached(directory: Path, dtype: str, device: str, adapter: Path | None) -> LocalModel:
    return _load(directory, dtype, device, adapter)


def load_model(
    directory: str | Path, dtype: str = "auto", device: str = "auto", adapter: Path | None = None
) -> LocalModel:
    """The model in `directory`, with the LoRA adapter in `adapter` merged in if given, loaded once
    per process (cached by resolved paths, dtype, device)."""
    path = Path(directory).expanduser().resolve()
    if not path.is_dir():
        raise ModelError(f"model directory not found: {directory}")
    lora = None if adapter is None else Path(adapter).expanduser().resolve()
    if lora is not None and not lora.is_dir():
        raise ModelError(f"adapter directory not found: {adapter}")
    return _cached(path, dtype, device, lora)


class LocalBackend:
    """A `Backend` over a model directory; the model is loaded at the first request.

    `threads` sets torch's CPU threads first (0: half the cores; None: leave torch's setting);
    `adapter`, a LoRA adapter folder, is merged into the model when it is loaded.
    """

    constrains = True  # honours `SampleRequest.grammar`

    def __init__(
        self,
        directory: str | Path,
        dtype: str = "auto",
        device: str = "auto",
        threads: int | None = None,
        adapter: Path | None = None,
    ) -> None:
        self.directory = directory
        self.dtype = dtype
        self.device = device
        self.threads = threads
        self.adapter = adapter

    def sample(self, messages: Sequence[Message], request: SampleRequest) -> list[str]:
        return self._model().sample(messages, request)

    def sample_shares(
        self, messages: Sequence[Message], requests: Sequence[SampleRequest]
    ) -> list[list[str]]:
        """The answers to each request, decoded together (`LocalModel.sample_shares`)."""
        return self._model().sample_shares(messages, requests)

    def _model(self) -> LocalModel:
        if self.threads is not None:
            set_threads(self.threads)
        return load_model(self.directory, self.dtype, self.device, self.adapter)
