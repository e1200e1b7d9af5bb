"""A tiny causal LM built locally (no hub): a BPE tokenizer trained on C files and a ~0.3M-parameter
Llama, optionally trained for a few seconds to answer one prompt in the Quokka format."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from shared_data import BENCHMARKS, ROOT

CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
SPECIAL = ["<|pad|>", "<|bos|>", "<|im_start|>", "<|im_end|>"]


def corpus_files(limit: int = 120) -> list[Path]:
    """C files to train the tokenizer on: the shared benchmarks when present, else the examples."""
    found = sorted(BENCHMARKS.glob("*/*.c"))[:limit]
    return found or sorted((ROOT / "examples").glob("*.c"))


def train_tokenizer(texts: Sequence[str], directory: Path, chat_template: bool = True) -> object:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=1024, special_tokens=SPECIAL, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    tok.train_from_iterator(texts, trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, bos_token="<|bos|>", eos_token="<|im_end|>", pad_token="<|pad|>"
    )
    if chat_template:
        fast.chat_template = CHAT_TEMPLATE
    fast.save_pretrained(str(directory))
    return fast


def build_model(directory: Path, tokenizer: object, hidden: int = 64, layers: int = 2) -> object:
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden,
        intermediate_size=2 * hidden,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=4096,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        tie_word_embeddings=True,
    )
    return LlamaForCausalLM(config)


def teach(model: object, tokenizer: object, prompt: str, answer: str, steps: int = 100) -> float:
    """Train `model` to continue `prompt` with `answer` (+ end of turn); returns the last loss."""
    import torch

    p = tokenizer(prompt, add_special_tokens=False)["input_ids"]
    a = tokenizer(answer + "<|im_end|>", add_special_tokens=False)["input_ids"]
    ids = torch.tensor([p + a])
    labels = torch.tensor([[-100] * len(p) + a])
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    model.train()
    loss = torch.tensor(0.0)
    for _ in range(steps):
        loss = model(input_ids=ids, labels=labels).loss
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval()
    return float(loss.detach())
