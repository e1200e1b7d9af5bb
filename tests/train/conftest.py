"""Fixtures of the training tests: a tiny dataset (3 quokka-dev files + synthetic) and a tiny model."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from shared_data import BENCHMARKS

if TYPE_CHECKING:
    from quokka.invariants.train.finetune import FinetuneConfig

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

DEV = BENCHMARKS / "quokka-dev"  # ../shared
FILES = ("benchmark25_linear_1.c", "benchmark17_conjunctive_1.c", "benchmark09_conjunctive_1.c")


@pytest.fixture(scope="session")
def dataset_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not (DEV / "invariants.jsonl").is_file():
        pytest.skip(f"needs {DEV}")
    from quokka.invariants.train.dataset import build

    root = tmp_path_factory.mktemp("ds")
    rows = [json.loads(line) for line in (DEV / "invariants.jsonl").read_text().splitlines() if line.strip()]
    picked = [dict(r, file=str(DEV / r["file"])) for r in rows if r["file"] in FILES]
    picked.append({"file": str(DEV / FILES[0]), "after_line": 26, "invariant": "x <= 9"})  # not inductive
    src = root / "invariants.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in picked))
    out = root / "out"
    build([src], out, jobs=1, synthetic=4, val_fraction=0.34)
    return out


@pytest.fixture(scope="session")
def tiny_finetuned(dataset_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    pytest.importorskip("accelerate")
    from quokka.invariants.train.finetune import finetune

    out = tmp_path_factory.mktemp("model")
    finetune(tiny_config(dataset_dir, out, max_steps=6, save_steps=3, bf16=True))
    return out


def tiny_config(data: Path, out: Path, **changes: Any) -> FinetuneConfig:
    """A new tiny model's training settings: two examples a batch, no progress display."""
    from quokka.invariants.train.finetune import FinetuneConfig

    return FinetuneConfig(data=data, out=out, init_small="tiny", batch_size=2, progress=False, **changes)
