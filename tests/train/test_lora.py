"""LoRA fine-tuning on a tiny model: the adapter is exported beside the merged model, small and in
bfloat16, naming its base; the answer-only loss equals the full next-token loss."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("peft")

PROMPT = "int main() {\n  int i = 0;\n  while (i < 10) {  // line 3\n    i++;\n  }\n}"
ANSWERS = ["After line 3, insert assume(i <= 10);", "After line 3, insert assume(0 <= i);"]


def rows(n: int) -> str:
    out = []
    for k in range(n):
        messages = [
            {"role": "system", "content": "You write loop invariants."},
            {"role": "user", "content": PROMPT + f"\n/* {k} */"},
            {"role": "assistant", "content": ANSWERS[k % 2]},
        ]
        out.append(json.dumps({"messages": messages, "meta": {"family": "f"}}) + "\n")
    return "".join(out)


@pytest.fixture(scope="module")
def lora_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import torch
    from quokka.invariants.train.finetune import FinetuneConfig, finetune

    torch.set_num_threads(1)
    data = tmp_path_factory.mktemp("data")
    (data / "train.jsonl").write_text(rows(8))
    (data / "val.jsonl").write_text(rows(2))
    out = tmp_path_factory.mktemp("lora")
    finetune(FinetuneConfig(data=data, out=out, init_small="tiny", lora=True, max_steps=3, batch_size=2,
                            save_steps=100, progress=False, base_name="tiny-base"))  # fmt: skip
    return out


def test_the_adapter_is_exported_in_bfloat16_naming_its_base(lora_run: Path) -> None:
    from safetensors.torch import load_file

    adapter = lora_run / "adapter"
    config = json.loads((adapter / "adapter_config.json").read_text())
    assert config["base_model_name_or_path"] == "tiny-base" and config["r"] == 8
    weights = load_file(str(adapter / "adapter_model.safetensors"))
    assert weights and {str(w.dtype) for w in weights.values()} == {"torch.bfloat16"}
    assert any("lora_A" in k for k in weights) and any("mlp" in k for k in weights)


def test_the_merged_model_loads_and_the_adapter_applies_to_its_base(lora_run: Path) -> None:
    from quokka.invariants.llm.registry import apply_adapter
    from transformers import AutoModelForCausalLM

    merged = AutoModelForCausalLM.from_pretrained(str(lora_run), local_files_only=True)
    base = AutoModelForCausalLM.from_pretrained(str(lora_run / "init"), local_files_only=True)
    again = apply_adapter(base, lora_run / "adapter")
    name = "model.layers.0.self_attn.q_proj.weight"
    ours, theirs = again.state_dict()[name], merged.state_dict()[name]
    assert ours.shape == theirs.shape and float((ours - theirs).abs().max()) < 0.05


def test_the_answer_loss_equals_the_full_next_token_loss(lora_run: Path) -> None:
    import torch
    from quokka.invariants.train.finetune import answer_loss, collate, encode_all
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(lora_run), local_files_only=True)
    model = AutoModelForCausalLM.from_pretrained(str(lora_run), local_files_only=True)
    encoded, _ = encode_all(tok, [json.loads(r) for r in rows(3).splitlines()], 2048)
    encoded[0] = {k: v[:-3] + v[-1:] for k, v in encoded[0].items()}  # rows of different lengths
    batch = collate(tok.pad_token_id)(encoded)
    with torch.no_grad():
        ours, _ = answer_loss(model, batch)
        full = model(**{k: v for k, v in batch.items() if k != "labels"}).logits[:, :-1].float()
        target = batch["labels"][:, 1:]
        reference = torch.nn.functional.cross_entropy(full.reshape(-1, full.shape[-1]), target.reshape(-1))
    assert abs(float(ours) - float(reference)) < 1e-4


def test_training_goes_on_from_a_shipped_adapter(lora_run: Path, tmp_path: Path) -> None:
    """`--adapter`: the adapter's weights are the start (trainable, in float32), not fresh ones."""
    from quokka.invariants.train.finetune import FinetuneConfig, finetune
    from safetensors.torch import load_file

    data = tmp_path / "data"
    data.mkdir()
    (data / "train.jsonl").write_text(rows(4))
    config = FinetuneConfig(data=data, out=tmp_path / "on", base=lora_run / "init", lora=True,
                            adapter=lora_run / "adapter", max_steps=1, batch_size=2, lr=1e-9,
                            save_steps=100, progress=False)  # fmt: skip
    finetune(config)
    before = load_file(str(lora_run / "adapter" / "adapter_model.safetensors"))
    after = load_file(str(tmp_path / "on" / "adapter" / "adapter_model.safetensors"))
    assert before.keys() == after.keys()
    b_keys = [k for k in before if "lora_B" in k]
    assert any(float(before[k].abs().max()) > 0 for k in b_keys)  # fresh adapters start with B = 0
    assert all(float((before[k].float() - after[k].float()).abs().max()) < 1e-3 for k in b_keys)
