from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from .conftest import DEV, FILES, tiny_config


def test_loss_falls_and_summary(tiny_finetuned: Path) -> None:
    s = json.loads((tiny_finetuned / "summary.json").read_text())
    assert s["steps"] == 6 and s["tokens_per_s"] > 0
    assert s["val_loss_after"] < s["val_loss_before"]
    assert s["train_loss_last"] < s["train_loss_first"]
    assert list((tiny_finetuned / "checkpoints").glob("checkpoint-6"))


def test_reloads_with_automodel(tiny_finetuned: Path) -> None:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model = AutoModelForCausalLM.from_pretrained(str(tiny_finetuned), local_files_only=True)
    tok = AutoTokenizer.from_pretrained(str(tiny_finetuned), local_files_only=True)
    assert model.config.model_type == "llama" and "<|im_start|>" in tok.get_vocab()
    assert tok.chat_template


def test_masks_prompt_tokens(tiny_finetuned: Path, dataset_dir: Path) -> None:
    from quokka.invariants.train.finetune import encode_example, read_jsonl
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(tiny_finetuned), local_files_only=True)
    row = read_jsonl(dataset_dir / "train.jsonl")[0]
    ids, labels = encode_example(tok, row["messages"])
    answer = [t for t in labels if t != -100]
    assert labels[0] == -100 and answer == ids[-len(answer) :]
    assert tok.decode(answer, skip_special_tokens=True) == row["messages"][-1]["content"]


def test_quokka_verify_runs_the_model(tiny_finetuned: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from quokka.verifier.cli import main

    code = main(
        [
            "verify",
            str(DEV / FILES[0]),
            "--model",
            str(tiny_finetuned),
            "--proposers",
            "llm",
            "--engines",
            "houdini",
            "--samples",
            "2",
            "--timeout",
            "30",
            "--json",
        ]
    )
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert code in (0, 1) and out["verdict"] in ("true", "unknown")  # the program is correct


def test_resume_continues_from_checkpoint(tiny_finetuned: Path, dataset_dir: Path) -> None:
    from quokka.invariants.train.finetune import finetune

    s = finetune(tiny_config(dataset_dir, tiny_finetuned, max_steps=7, save_steps=100))
    assert s.steps == 7  # resumed at 6, one more step


def test_lora_without_peft_is_a_clear_error(
    dataset_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("transformers")
    monkeypatch.setitem(sys.modules, "peft", None)  # `import peft` fails, as when it is not installed
    from quokka.invariants.train.finetune import FinetuneConfig, FinetuneError, finetune

    with pytest.raises(FinetuneError, match="--lora needs the optional package `peft`"):
        finetune(FinetuneConfig(data=dataset_dir, out=tmp_path, init_small="tiny", lora=True, max_steps=1))


def test_lora_trains_adapters_only_and_exports_them_merged(dataset_dir: Path, tmp_path: Path) -> None:
    pytest.importorskip("peft")
    torch = pytest.importorskip("torch")
    from quokka.invariants.train.finetune import LORA_RANK, finetune
    from safetensors.torch import load_file
    from transformers import AutoModelForCausalLM

    s = finetune(tiny_config(dataset_dir, tmp_path, lora=True, max_steps=2, save_steps=100))
    assert s.steps == 2
    adapter = json.loads((tmp_path / "adapter" / "adapter_config.json").read_text())
    assert adapter["peft_type"] == "LORA" and adapter["r"] == LORA_RANK
    weights = load_file(str(tmp_path / "adapter" / "adapter_model.safetensors"))
    assert weights and all("lora_" in k and v.dtype == torch.bfloat16 for k, v in weights.items())
    tuned = AutoModelForCausalLM.from_pretrained(str(tmp_path), local_files_only=True)
    init = AutoModelForCausalLM.from_pretrained(str(tmp_path / "init"), local_files_only=True)
    assert not any("lora" in name for name, _ in tuned.named_parameters())  # merged, not wrapped
    t, i = dict(tuned.named_parameters()), dict(init.named_parameters())
    assert torch.equal(t["model.embed_tokens.weight"], i["model.embed_tokens.weight"])  # frozen, no adapter
    name = "model.layers.0.self_attn.q_proj.weight"
    assert not torch.equal(t[name], i[name])  # its adapter, trained and merged, changed it


def test_time_limit_stops_training_and_still_exports(dataset_dir: Path, tmp_path: Path) -> None:
    pytest.importorskip("transformers")
    from quokka.invariants.train.finetune import finetune

    s = finetune(tiny_config(dataset_dir, tmp_path, max_steps=10_000, save_steps=10_000, max_minutes=1e-9))
    assert s.steps == 1  # the limit is checked after every step
    assert (tmp_path / "config.json").is_file() and (tmp_path / "summary.json").is_file()


def test_the_budget_schedule_decays_the_rate_to_zero_with_the_clock() -> None:
    torch = pytest.importorskip("torch")
    from quokka.invariants.train.finetune import budget_schedule

    now = [100.0]
    weight = torch.nn.Parameter(torch.zeros(1))
    optimizer = torch.optim.SGD([weight], lr=0.5)
    schedule = budget_schedule(optimizer, 60.0, clock=lambda: now[0])
    rates = []
    for t in (0.0, 15.0, 30.0, 60.0, 90.0):
        now[0] = 100.0 + t
        optimizer.step()
        schedule.step()
        rates.append(optimizer.param_groups[0]["lr"])
    assert rates == [0.5, 0.375, 0.25, 0.0, 0.0]


def test_an_adapter_without_lora_or_config_is_refused(
    dataset_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from quokka.verifier.cli import main

    base = ["finetune", "--init-small", "tiny", "--data", str(dataset_dir), "--out", str(tmp_path / "o")]
    assert main([*base, "--adapter", str(tmp_path)]) == 2
    assert main([*base, "--lora", "--adapter", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("needs --lora and a folder with adapter_config.json") == 2
    assert not (tmp_path / "o").exists()
