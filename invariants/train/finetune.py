"""`quokka finetune`: supervised fine-tuning of a causal LM on `quokka dataset build` output.

The loss is on the answer tokens only (prompt tokens are labelled -100); the prompt text is rendered
exactly as the local LLM backend renders it (`render_prompt`), so training matches sampling.
Checkpoints go to `OUT/checkpoints` and a rerun resumes from the last one; the final model (LoRA
adapters merged) and its tokenizer go to `OUT`, with `OUT/summary.json`.

The learning rate decays linearly to zero over the steps, or, with `max_minutes`, over the time
budget (`budget_schedule`): the number of steps that fit is not known in advance, and a rate still
high when the clock stops leaves a noisier model (Li et al., 2020, "Budgeted Training").
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from quokka.verifier.errors import QuokkaError

from ..llm.local import cpu_has_bf16, render_prompt


class FinetuneError(QuokkaError):  # type: ignore[misc]  # mypy cannot follow the editable install
    """Fine-tuning cannot start (missing data, missing optional dependency, bad model)."""

    def __init__(self, message: str) -> None:
        super().__init__(None, message)


@dataclass(frozen=True)
class FinetuneConfig:
    data: Path
    out: Path
    base: Path | None = None
    init_small: str | None = None
    lora: bool = False
    epochs: float = 1.0
    max_steps: int = -1
    bf16: bool = False
    lr: float | None = None
    batch_size: int = 4
    max_len: int = 2048
    threads: int = 1
    seed: int = 0
    save_steps: int = 50
    progress: bool = True
    max_minutes: float | None = None  # stop (and export) after this much training time
    device: str = "auto"  # "cpu", "cuda" or "auto" (cuda when there is one)
    base_name: str | None = None  # the base's model name (`quokka model list`), when --base gave one
    adapter: Path | None = None  # a LoRA adapter to train on from (with `lora`), instead of fresh ones


@dataclass(frozen=True)
class FinetuneSummary:
    steps: int
    seconds: float
    tokens_per_s: float
    train_loss_first: float | None
    train_loss_last: float | None
    val_loss_before: float | None
    val_loss_after: float | None
    train_examples: int
    val_examples: int
    too_long: int
    parameters: int


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def encode_example(tokenizer: Any, messages: Sequence[dict[str, str]]) -> tuple[list[int], list[int]]:
    """(input ids, labels): the prompt as `render_prompt` gives it, then the answer and end of turn."""
    prompt, special = render_prompt(tokenizer, messages[:-1])
    p = tokenizer(prompt, add_special_tokens=special)["input_ids"]
    answer = messages[-1]["content"] if not special else " " + messages[-1]["content"]
    a = [*tokenizer(answer, add_special_tokens=False)["input_ids"], tokenizer.eos_token_id]
    return p + a, [-100] * len(p) + a


def encode_all(
    tokenizer: Any, rows: Sequence[dict[str, Any]], max_len: int
) -> tuple[list[dict[str, Any]], int]:
    out = []
    for row in rows:
        ids, labels = encode_example(tokenizer, row["messages"])
        if len(ids) <= max_len:
            out.append({"input_ids": ids, "labels": labels})
    return out, len(rows) - len(out)


def collate(pad_id: int) -> Any:
    """Batches padded on the left, so that every row's answer ends at the last position (the loss
    needs logits only for the last positions: `answer_loss`)."""

    def collate_fn(batch: Sequence[dict[str, list[int]]]) -> dict[str, Any]:
        import torch

        width = max(len(b["input_ids"]) for b in batch)
        pads = [width - len(b["input_ids"]) for b in batch]
        ids = [[pad_id] * n + b["input_ids"] for n, b in zip(pads, batch, strict=True)]
        labels = [[-100] * n + b["labels"] for n, b in zip(pads, batch, strict=True)]
        mask = torch.tensor([[0] * n + [1] * (width - n) for n in pads])
        return {
            "input_ids": torch.tensor(ids),
            "labels": torch.tensor(labels),
            "attention_mask": mask,
            "position_ids": (mask.cumsum(-1) - 1).clamp(min=0),
        }

    return collate_fn


def answer_loss(model: Any, inputs: dict[str, Any]) -> tuple[Any, Any]:
    """(loss, outputs): the next-token loss on the labelled (answer) tokens, with logits computed
    only for the positions from the first answer token on. The answers are the last tokens of
    left-padded rows and a few percent of them, and the output head over a 49k vocabulary costs
    as much as a fifth of the model."""
    import torch

    labels = inputs["labels"]
    labelled = (labels != -100).any(dim=0).nonzero()
    keep = int(labels.shape[1] - labelled[0, 0]) if len(labelled) else 1
    args = {k: v for k, v in inputs.items() if k != "labels"}
    outputs = model(**args, logits_to_keep=keep + 1)
    logits = outputs.logits[:, :-1, :].float()
    loss = torch.nn.functional.cross_entropy(
        logits.reshape(-1, logits.shape[-1]), labels[:, -keep:].reshape(-1), ignore_index=-100
    )
    return loss, outputs


def setup_threads(threads: int) -> None:
    """Passive OpenMP waiting and `threads` torch threads (oversubscribed cores spin: 10x slower)."""
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    import torch

    if threads > 0:
        torch.set_num_threads(threads)


def load_base(config: FinetuneConfig, train_rows: list[dict[str, Any]]) -> tuple[Any, Any]:
    """(model, tokenizer): from `--base`, from `OUT/init` (a resumed `--init-small`), or from scratch."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    source = config.base or (config.out / "init" if (config.out / "init" / "config.json").is_file() else None)
    if source is not None:
        try:
            tok = AutoTokenizer.from_pretrained(str(source), local_files_only=True)
            model = AutoModelForCausalLM.from_pretrained(
                str(source), local_files_only=True, dtype=_base_dtype(config)
            )
        except (OSError, ValueError) as exc:
            raise FinetuneError(f"cannot load a causal LM from {source}: {exc}") from exc
        if tok.pad_token_id is None:
            tok.pad_token = tok.eos_token
        return model, tok
    from .smallmodel import PRESETS, init_small

    if config.init_small not in PRESETS:
        raise FinetuneError(
            f"unknown --init-small preset {config.init_small!r} (known: {', '.join(PRESETS)})"
        )
    model, tok = init_small(config.init_small, train_rows)
    model.save_pretrained(str(config.out / "init"))
    tok.save_pretrained(str(config.out / "init"))
    return model, tok


LORA_RANK = 8


def _base_dtype(config: FinetuneConfig) -> Any:
    """bfloat16 for the frozen weights of a LoRA run with --bf16 (no cast at every use: about
    a third faster on a CPU with native bf16), else float32; adapters train in float32."""
    import torch

    return torch.bfloat16 if config.lora and config.bf16 else torch.float32


def apply_lora(model: Any, adapter: Path | None = None) -> Any:
    """Rank-8 adapters on every linear layer but the output head (about 2 % of SmolLM2-135M); or
    `adapter`'s, trainable and in float32 (a shipped adapter is stored in bfloat16)."""
    try:
        from peft import LoraConfig, get_peft_model
    except ImportError as exc:
        raise FinetuneError("--lora needs the optional package `peft` (pip install peft)") from exc
    if adapter is not None:
        return _trainable_adapter(model, adapter)
    lora = LoraConfig(
        r=LORA_RANK,
        lora_alpha=2 * LORA_RANK,
        lora_dropout=0.0,  # dropout copies every layer's input for each adapter: 25% slower on a CPU
        task_type="CAUSAL_LM",
        target_modules="all-linear",
    )
    return get_peft_model(model, lora)


def _trainable_adapter(model: Any, adapter: Path) -> Any:
    import torch
    from peft import PeftModel

    try:
        tuned = PeftModel.from_pretrained(model, str(adapter), is_trainable=True)
    except (OSError, ValueError) as exc:
        raise FinetuneError(f"cannot load a LoRA adapter from {adapter}: {exc}") from exc
    for param in tuned.parameters():
        if param.requires_grad:
            param.data = param.data.to(torch.float32)
    return tuned


def training_args(config: FinetuneConfig, use_bf16: bool) -> Any:
    from transformers import TrainingArguments

    lr = config.lr or (1e-3 if config.init_small else 2e-4 if config.lora else 5e-5)
    return TrainingArguments(
        output_dir=str(config.out / "checkpoints"),
        num_train_epochs=config.epochs,
        max_steps=config.max_steps,
        per_device_train_batch_size=config.batch_size,
        train_sampling_strategy="group_by_length",  # batches of like lengths: less padding (~25% here)
        per_device_eval_batch_size=config.batch_size,
        learning_rate=lr,
        warmup_steps=0,
        lr_scheduler_type="linear",
        logging_steps=1,
        save_steps=config.save_steps,
        save_total_limit=2,
        eval_strategy="no",
        bf16=use_bf16,
        use_cpu=config.device == "cpu" or (config.device == "auto" and not _cuda()),
        seed=config.seed,
        data_seed=config.seed,
        report_to=[],
        disable_tqdm=not config.progress,
        remove_unused_columns=False,
        dataloader_num_workers=0,
    )


def _cuda() -> bool:
    import torch

    return bool(torch.cuda.is_available())


def last_checkpoint(out: Path) -> str | None:
    found = sorted((out / "checkpoints").glob("checkpoint-*"), key=lambda p: int(p.name.split("-")[-1]))
    return str(found[-1]) if found else None


def finetune(config: FinetuneConfig) -> FinetuneSummary:
    """Train, export and summarise; see the module docstring."""
    setup_threads(config.threads)
    import torch

    train_rows, val_rows = read_jsonl(config.data / "train.jsonl"), read_jsonl(config.data / "val.jsonl")
    if not train_rows:
        raise FinetuneError(f"no training examples in {config.data / 'train.jsonl'}")
    config.out.mkdir(parents=True, exist_ok=True)
    model, tok = load_base(config, train_rows)
    max_len = min(config.max_len, int(getattr(model.config, "max_position_embeddings", 0) or config.max_len))
    train, long_train = encode_all(tok, train_rows, max_len)
    val, long_val = encode_all(tok, val_rows, max_len)
    if config.lora:
        model = apply_lora(model, config.adapter)
    if config.device == "cuda" and not torch.cuda.is_available():
        raise FinetuneError("--device cuda: no CUDA device is available")
    use_bf16 = config.bf16 and (torch.cuda.is_available() or cpu_has_bf16())
    torch.manual_seed(config.seed)
    budget_s = config.max_minutes * 60 if config.max_minutes else None
    trainer = trainer_class(budget_s)(
        model=model,
        args=training_args(config, use_bf16),
        train_dataset=train,
        eval_dataset=val or None,
        data_collator=collate(tok.pad_token_id),
        callbacks=[time_limit(budget_s)] if budget_s else None,
    )
    before = _eval_loss(trainer, val)
    start = time.monotonic()
    trainer.train(resume_from_checkpoint=last_checkpoint(config.out))
    seconds = time.monotonic() - start
    after = _eval_loss(trainer, val)
    _export(trainer.model, tok, config)
    summary = _summary(trainer, train, val, seconds, before, after, long_train + long_val)
    (config.out / "summary.json").write_text(json.dumps(asdict(summary), indent=2) + "\n", encoding="utf-8")
    return summary


def budget_schedule(optimizer: Any, seconds: float, clock: Callable[[], float] = time.monotonic) -> Any:
    """A scheduler whose rate falls linearly from the optimizer's to zero over `seconds` of wall
    time from now (a resumed run gets a fresh budget, as `time_limit` does)."""
    from torch.optim.lr_scheduler import LambdaLR

    start = clock()
    return LambdaLR(optimizer, lambda _step: max(0.0, 1.0 - (clock() - start) / seconds))


def trainer_class(budget_s: float | None) -> Any:
    """transformers' `Trainer` with `answer_loss`, and `budget_schedule` as its scheduler when there
    is a time budget."""
    from transformers import Trainer

    class AnswerTrainer(Trainer):  # type: ignore[misc]
        def compute_loss(
            self, model: Any, inputs: Any, return_outputs: bool = False, num_items_in_batch: Any = None
        ) -> Any:
            loss, outputs = answer_loss(model, inputs)
            return (loss, outputs) if return_outputs else loss

    if budget_s is None:
        return AnswerTrainer
    seconds = budget_s

    class BudgetTrainer(AnswerTrainer):
        def create_scheduler(self, num_training_steps: int, optimizer: Any = None) -> Any:
            if self.lr_scheduler is None:
                self.lr_scheduler = budget_schedule(optimizer or self.optimizer, seconds)
            return self.lr_scheduler

    return BudgetTrainer


def time_limit(seconds: float) -> Any:
    """A callback that ends training (it is exported as usual) once `seconds` have passed."""
    from transformers import TrainerCallback

    class TimeLimit(TrainerCallback):  # type: ignore[misc]
        def __init__(self) -> None:
            self.deadline = time.monotonic() + seconds

        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
            if time.monotonic() >= self.deadline:
                control.should_training_stop = True
            return control

    return TimeLimit()


def _eval_loss(trainer: Any, val: list[Any]) -> float | None:
    return float(trainer.evaluate()["eval_loss"]) if val else None


def _export(model: Any, tok: Any, config: FinetuneConfig) -> None:
    """The model (adapters merged) in OUT; with LoRA also the adapters alone, in bfloat16, in
    OUT/adapter (a few MB: what `quokka-smollm2` ships)."""
    if config.lora:
        _save_adapter(model, config.out / "adapter", config.base_name)
        model = model.merge_and_unload()
    model.generation_config.eos_token_id = tok.eos_token_id
    model.generation_config.pad_token_id = tok.pad_token_id
    model.save_pretrained(str(config.out))
    tok.save_pretrained(str(config.out))


def _save_adapter(model: Any, out: Path, base_name: str | None) -> None:
    """The adapter in bfloat16; its config names the base by its model name when there is one
    (a path on the training machine means nothing elsewhere)."""
    import torch
    from safetensors.torch import load_file, save_file

    model.save_pretrained(str(out))
    weights = out / "adapter_model.safetensors"
    if weights.is_file():
        tensors = {k: v.to(torch.bfloat16) for k, v in load_file(str(weights)).items()}
        save_file(tensors, str(weights), metadata={"format": "pt"})
    config = out / "adapter_config.json"
    if base_name and config.is_file():
        data = json.loads(config.read_text(encoding="utf-8"))
        data["base_model_name_or_path"] = base_name
        config.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


def _summary(
    trainer: Any,
    train: list[dict[str, Any]],
    val: list[Any],
    seconds: float,
    before: float | None,
    after: float | None,
    too_long: int,
) -> FinetuneSummary:
    losses = [h["loss"] for h in trainer.state.log_history if "loss" in h]
    steps = int(trainer.state.global_step)
    mean_len = sum(len(t["input_ids"]) for t in train) / len(train) if train else 0.0
    tokens = mean_len * steps * trainer.args.per_device_train_batch_size
    params = sum(p.numel() for p in trainer.model.parameters())
    return FinetuneSummary(
        steps,
        round(seconds, 2),
        round(tokens / seconds, 1) if seconds > 0 else 0.0,
        losses[0] if losses else None,
        losses[-1] if losses else None,
        before,
        after,
        len(train),
        len(val),
        too_long,
        int(params),
    )
