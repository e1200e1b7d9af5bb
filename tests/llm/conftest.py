"""Fixtures of the language-model tests: a small C program and a tiny local model (built once)."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from llm_programs import SOURCE, TAUGHT


@pytest.fixture(scope="session")
def program():
    from quokka.verifier.frontend import lower_source

    return lower_source(SOURCE, "tiny.c", "LP64")


@dataclass(frozen=True)
class TinyModel:
    directory: Path
    final_loss: float


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory: pytest.TempPathFactory, program) -> TinyModel:
    """A ~0.3M-parameter Llama with a BPE tokenizer trained on C files, taught `TAUGHT`."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")
    torch.set_num_threads(1)  # two shared cores: more threads only spin against each other
    from quokka.invariants.llm.local import render_prompt
    from quokka.invariants.llm.prompt import build_messages
    from tinymodel import build_model, corpus_files, teach, train_tokenizer

    directory = tmp_path_factory.mktemp("tiny-model")
    texts = [p.read_text(encoding="utf-8", errors="replace") for p in corpus_files()]
    tokenizer = train_tokenizer([*texts, SOURCE], directory)
    model = build_model(directory, tokenizer)
    prompt, _ = render_prompt(tokenizer, build_messages(program, SOURCE))
    loss = teach(model, tokenizer, prompt, TAUGHT, steps=200)
    model.save_pretrained(str(directory))
    return TinyModel(directory, loss)
