"""How fast a local model samples: `quokka model bench` (8 samples per program, the proposer's
prompt and answer grammar, timed per program after one warm-up).

Per program it records the prompt's tokens, the answer tokens decoded and the wall time of one
proposal round's sampling (`LLMConfig.sample`: the shares over the loops, one shared prefill).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from quokka.verifier.frontend import lower

from .local import LocalBackend, load_model
from .prompt import build_messages
from .proposer import LLMConfig


@dataclass(frozen=True)
class ProgramSpeed:
    program: str
    lines: int
    loops: int
    prompt_tokens: int
    answer_tokens: int
    seconds: float
    answers: tuple[str, ...]


@dataclass(frozen=True)
class SpeedReport:
    programs: tuple[ProgramSpeed, ...]

    @property
    def median_s(self) -> float:
        return statistics.median(p.seconds for p in self.programs) if self.programs else 0.0

    @property
    def max_s(self) -> float:
        return max((p.seconds for p in self.programs), default=0.0)

    @property
    def answer_tokens_per_s(self) -> float:
        seconds = sum(p.seconds for p in self.programs)
        return sum(p.answer_tokens for p in self.programs) / seconds if seconds else 0.0

    @property
    def prompt_tokens_median(self) -> float:
        return statistics.median(p.prompt_tokens for p in self.programs) if self.programs else 0.0

    def to_json(self) -> dict[str, object]:
        return {
            "median_s": round(self.median_s, 3),
            "max_s": round(self.max_s, 3),
            "answer_tokens_per_s": round(self.answer_tokens_per_s, 1),
            "prompt_tokens_median": self.prompt_tokens_median,
            "programs": [vars(p) | {"answers": list(p.answers)} for p in self.programs],
        }


def measure(
    backend: LocalBackend, paths: Sequence[Path], config: LLMConfig, data_model: str = "LP64"
) -> SpeedReport:
    """Time one proposal round's sampling per program (the first program is sampled once before,
    untimed, so that loading the model and its token table is not counted)."""
    if paths:
        _round(backend, paths[0], config, data_model)
    return SpeedReport(tuple(_round(backend, p, config, data_model) for p in paths))


def _round(backend: LocalBackend, path: Path, config: LLMConfig, data_model: str) -> ProgramSpeed:
    source = path.read_text(encoding="utf-8", errors="replace")
    program = lower(path, data_model)
    messages = build_messages(program, source, config=config.prompt)
    request = config.request(program)
    model = load_model(backend.directory, backend.dtype, backend.device, backend.adapter)
    start = time.monotonic()
    answers = config.sample(backend, messages, request)
    seconds = time.monotonic() - start
    prompt_tokens = int(model.encode(messages).shape[1])
    answer_tokens = sum(len(model.tokenizer(a, add_special_tokens=False)["input_ids"]) for a in answers)
    return ProgramSpeed(str(path), source.count("\n") + 1, len(program.loops), prompt_tokens,
                        answer_tokens, round(seconds, 3), tuple(answers))  # fmt: skip
