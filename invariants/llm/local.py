"""A local `transformers` causal LM as a backend: Best-of-N sampling over one shared prompt prefill.

The prompt is run through the model once, on one row, and kept while the next requests repeat it
(the per-loop shares of a proposal round); a new prompt runs only its tokens after the part it
shares with the last one (the instructions before the program). The forced answer starts (one per
share) run together, one row each, and the N answers are then sampled together, token by token,
in a preallocated KV cache. Rows whose answers so far are equal share one row of that cache, so a
step runs the model once per distinct answer prefix (a fine-tuned model is confident: 8 samples
are mostly 2 or 3 distinct prefixes). Under the answer grammar the output layer scores only the
tokens an answer can contain (`decoding.Head`), and on a CPU a decoding step's attention is plain
matrix products (`attention`). On a CPU the prompt (hundreds of tokens) costs far more than one
decoding step, so this is close to N times cheaper than prefilling N copies. torch and
transformers are imported here, lazily.
"""

from __future__ import annotations

import inspect
import os
import resource
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from .attention import use_decode_attention
from .backend import Message, ModelError, SampleRequest
from .decoding import STOP, Head, constrained, head_of, next_columns
from .grammar import AnswerGrammar, GrammarState, TokenConstraint, Vocabulary, answer_start

PLAIN_ROLES = {"system": "System", "user": "User", "assistant": "Assistant"}
CONSTRAINTS_KEPT = 64  # answer grammars whose token constraints a model keeps (then it starts afresh)


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
    """The rows being sampled: tokens so far, which rows still run, each row's grammar (None:
    unconstrained) and state in it, and the tokens the logits score. Rows with the same tokens
    so far share one row of the KV cache (`slots[row]`; the cache holds `length` positions):
    the model runs once per distinct running answer prefix."""

    tokens: list[list[int]]
    active: list[bool]
    slots: list[int]
    cache: Any
    length: int
    states: list[GrammarState]
    constraints: list[TokenConstraint | None]
    head: Head


def _shared_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """How many tokens `a` and `b` start with in common."""
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return i
    return min(len(a), len(b))


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


def _linear_output(model: Any) -> bool:
    """The model's output layer is a linear layer (`_output_restricted` can restrict it)."""
    import torch

    return isinstance(model.get_output_embeddings(), torch.nn.Linear)


@contextmanager
def _output_restricted(model: Any, tokens: list[int] | None) -> Iterator[None]:
    """While inside, the model's output layer (a linear layer) scores only `tokens`, in that order
    (all tokens when None): a copy of those rows of its weights replaces it."""
    import torch

    whole = model.get_output_embeddings()
    if tokens is None:
        yield
        return
    index = torch.tensor(tokens, device=whole.weight.device)
    part = torch.nn.Linear(whole.in_features, len(tokens), bias=whole.bias is not None, device="meta")
    part.weight = torch.nn.Parameter(whole.weight.index_select(0, index), requires_grad=False)
    if whole.bias is not None:
        part.bias = torch.nn.Parameter(whole.bias.index_select(0, index), requires_grad=False)
    model.set_output_embeddings(part)
    try:
        yield
    finally:
        model.set_output_embeddings(whole)


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
        self._vocabulary: Vocabulary | None = None
        self._constraints: dict[AnswerGrammar, TokenConstraint] = {}
        self._prompt: _Prompt | None = None
        self.restrictable = _linear_output(model)  # may score only the tokens an answer can contain
        pad = tokenizer.pad_token_id
        self.pad = int(pad if pad is not None else min(self.eos, default=0))

    def constraint(self, request: SampleRequest) -> TokenConstraint | None:
        """The grammar of `request` over this tokenizer (kept per grammar: its allowed tokens per
        state and its support are computed once)."""
        if request.grammar is None:
            return None
        found = self._constraints.get(request.grammar)
        if found is None:
            if len(self._constraints) >= CONSTRAINTS_KEPT:
                self._constraints.clear()
            found = TokenConstraint(request.grammar, self.vocabulary())
            self._constraints[request.grammar] = found
        return found

    def vocabulary(self) -> Vocabulary:
        """The tokens' texts, indexed for the answer grammar (built at the first use)."""
        if self._vocabulary is None:
            self._vocabulary = Vocabulary(token_texts(self.tokenizer), self.eos)
        return self._vocabulary

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

        When a request's grammar names one insertion line, its answers' fixed start `After line X,
        insert assume(` is forced, not sampled (the forced starts of one call must be equally
        long): run once on one row per request, after the prompt. The rows' keys and values are
        copied into a preallocated cache of all rows (a growing cache copies itself at every
        step, which costs more than the model on a CPU). Under the answer grammar, the output
        layer scores only the tokens an answer can contain (`decoding.Head`).
        """
        import torch

        first = requests[0] if requests else SampleRequest(n=0)
        forced = [f for r in requests for f in [tuple(self.forced_ids(r.grammar))] * r.n]
        if not forced:
            return []
        self._check_length(int(prompt_ids.shape[1]) + len(forced[0]), first.max_new_tokens)
        deadline = time.monotonic() + first.timeout_s
        generator = torch.Generator(device=self.device).manual_seed(first.seed)
        constraints = [c for r in requests for c in [self.constraint(r)] * r.n]
        head = head_of(constraints, first) if self.restrictable else Head()
        with torch.inference_mode():
            prompt = self._prefill(prompt_ids)
            with _output_restricted(self.model, head.tokens):
                batch, logits = self._start(prompt, forced, first, constraints, head)
                for _ in range(first.max_new_tokens):
                    logits = self._step(batch, logits, first, generator)
                    if logits is None or time.monotonic() > deadline:
                        break
        return [[*f, *tokens] for f, tokens in zip(forced, batch.tokens, strict=True)]

    def forced_ids(self, grammar: AnswerGrammar | None) -> list[int]:
        """The tokens of `After line X, insert assume(` when `grammar` allows one line X, else []."""
        if grammar is None or len(grammar.lines) != 1:
            return []
        text = answer_start(grammar.lines[0])
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def _start(
        self,
        prompt: _Prompt,
        forced: list[tuple[int, ...]],
        request: SampleRequest,
        constraints: list[TokenConstraint | None],
        head: Head,
    ) -> tuple[_Batch, Any]:
        """The batch of all rows, each holding the prompt and its forced start, and the logits
        after each distinct start (run once, on one row of the cache)."""
        n = len(forced)
        starts = list(dict.fromkeys(forced))
        layers, logits = self._extend(prompt, starts, head)
        length = len(prompt.ids) + len(forced[0]) + request.max_new_tokens
        cache = self._static_cache(layers, length)
        slots = [starts.index(f) for f in forced]
        texts = [self.tokenizer.decode(f) for f in forced]
        states = [_forced_state(c, t) for c, t in zip(constraints, texts, strict=True)]
        batch = _Batch([[] for _ in range(n)], [True] * n, slots, cache, length, states, constraints, head)
        return batch, logits

    def _prefill(self, prompt_ids: Any) -> _Prompt:
        """The prompt run through the model on one row: reused when the last prompt repeats, and
        only its tokens after the part it shares with the last prompt are run (the prompts of
        one run share the instructions before the program, later rounds' prompts the program)."""
        from transformers import DynamicCache

        ids = tuple(int(i) for i in prompt_ids[0].tolist())
        last = self._prompt
        if last is not None and last.ids == ids:
            return last
        kept = 0 if last is None else min(_shared_prefix(last.ids, ids), len(ids) - 1)
        cache = DynamicCache(config=self.model.config)
        if last is not None and kept > 0:
            for i, (keys, values) in enumerate(last.layers):
                cache.update(keys[:, :, :kept], values[:, :, :kept], i)
        out = self.model(input_ids=prompt_ids[:, kept:], use_cache=True, **{self.cache_arg: cache},
                         **self.prefill_args)  # fmt: skip
        layers = [(layer.keys, layer.values) for layer in cache.layers]  # type: ignore[union-attr]
        self._prompt = _Prompt(ids, layers, out.logits[:, -1, :])
        return self._prompt

    def _extend(
        self, prompt: _Prompt, starts: list[tuple[int, ...]], head: Head
    ) -> tuple[list[tuple[Any, Any]], Any]:
        """Each layer's keys and values after `prompt` and each of the (equally long) `starts`, one
        row per start, and the logits after them (`head`'s columns): the starts run together."""
        import torch
        from transformers import DynamicCache

        if not starts[0]:
            return prompt.layers, head.select(prompt.logits)
        rows = len(starts)
        cache = DynamicCache(config=self.model.config)
        for i, (keys, values) in enumerate(prompt.layers):  # copied: the prompt's own stay as they are
            cache.update(keys.expand(rows, -1, -1, -1), values.expand(rows, -1, -1, -1), i)
        feed = torch.tensor(starts, device=self.device)
        out = self.model(input_ids=feed, use_cache=True, **{self.cache_arg: cache}, **self.prefill_args)
        layers = [(layer.keys, layer.values) for layer in cache.layers]  # type: ignore[union-attr]
        return layers, out.logits[:, -1, :]

    def _static_cache(self, layers: list[tuple[Any, Any]], length: int) -> Any:
        """A preallocated cache of `length` positions holding `layers`' keys and values."""
        from transformers import StaticCache

        cache = StaticCache(config=self.model.config, max_cache_len=length)
        for i, (keys, values) in enumerate(layers):
            cache.update(keys, values, i)
        return cache

    def _cache_rows(self, cache: Any, rows: list[int], length: int) -> Any:
        """A new preallocated cache of `length` positions holding the given rows of `cache`."""
        import torch

        filled = int(cache.get_seq_length())
        index = torch.tensor(rows, device=self.device)
        kept = [(layer.keys[:, :, :filled], layer.values[:, :, :filled]) for layer in cache.layers]
        picked = [(keys.index_select(0, index), values.index_select(0, index)) for keys, values in kept]
        return self._static_cache(picked, length)

    def _step(self, batch: _Batch, logits: Any, request: SampleRequest, generator: Any) -> Any:
        """Sample one token per running row (from its cache row's logits), end the rows that
        finish, run the model once more on each distinct running answer prefix."""
        import torch

        rows = [row for row, active in enumerate(batch.active) if active]
        logits = logits.index_select(0, torch.tensor([batch.slots[row] for row in rows], device=self.device))
        chosen = next_columns(logits, request, generator).tolist()
        for i, (row, column) in enumerate(zip(rows, chosen, strict=True)):
            self._take(batch, row, batch.head.token(column), logits[i], request, generator)
        return self._advance(batch, rows)

    def _advance(self, batch: _Batch, rows: list[int]) -> Any:
        """Run the model on each distinct answer prefix of the running `rows` (a cache row's
        prefix plus the token taken), after rebuilding the cache when a prefix split or ended;
        None when no row runs."""
        import torch

        running = len(set(batch.slots[row] for row in rows))
        after: dict[tuple[int, int], int] = {}  # (cache row, token taken) -> row in the next cache
        for row in rows:
            if batch.active[row]:
                key = (batch.slots[row], batch.tokens[row][-1])
                batch.slots[row] = after.setdefault(key, len(after))
        if not after:
            return None
        parents = [slot for slot, _ in after]
        if parents != list(range(running)):
            batch.cache = self._cache_rows(batch.cache, parents, batch.length)
        feed = torch.tensor([[token] for _, token in after], device=self.device)
        return self.model(input_ids=feed, use_cache=True, **{self.cache_arg: batch.cache}).logits[:, -1, :]

    def _take(self, batch: _Batch, row: int, token: int, logits: Any, request: SampleRequest,
              generator: Any) -> None:  # fmt: skip
        """Row `row` takes `token` (redrawn when its grammar refuses it) or ends: at an end token,
        or when its grammar allows nothing more."""
        constraint = batch.constraints[row]
        if constraint is not None:
            token, state = constrained(constraint, batch.states[row], token, logits, request, generator,
                                       batch.head)  # fmt: skip
            if state is not None:
                batch.states[row] = state
        if token in self.eos or token == STOP:
            batch.active[row] = False
            return
        batch.tokens[row].append(token)
        if constraint is not None and constraint.grammar.must_stop(batch.states[row]):
            batch.active[row] = False

    def _check_length(self, prompt_tokens: int, new_tokens: int) -> None:
        if self.context and prompt_tokens + new_tokens > self.context:
            raise ModelError(
                f"prompt of {prompt_tokens} tokens + {new_tokens} new tokens exceeds the model's "
                f"context of {self.context} tokens"
            )


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
    if dev == "cpu":
        use_decode_attention(model)
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
