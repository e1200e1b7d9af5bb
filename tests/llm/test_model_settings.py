"""The model layer's settings (issue 21): typed, checked when made, read from `[tool.quokka]` beside
the core's options, which know nothing of models."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from quokka.invariants.llm import LLMConfig
from quokka.invariants.llm.settings import ModelSettings, from_pyproject
from quokka.verifier.cli import main
from quokka.verifier.errors import InputError
from quokka.verifier.options import Options, SettingError

LOOP = "int main() {\n  int x = 0;\n  while (x < 3) {\n    x++;\n  }\n  return 0;\n}\n"
EXTRA = """[tool.quokka]
timeout_s = 7
model = "some-model"
samples = 3
[tool.quokka.extra]
llm_prompt = "quokka-cot"
llm_few_shot = 2
llm_max_new_tokens = 72
llm_timeout_s = 9
llm_api_key = "key"
llm_model_name = "served"
llm_dtype = "fp32"
llm_device = "cpu"
llm_threads = 1
llm_completion = false
llm_constrained = false
llm_per_loop = false
llm_escalate = true
llm_auto = true
"""


def test_the_core_options_hold_no_model_settings() -> None:
    names = {f.name for f in dataclasses.fields(Options)}
    assert not names & {"model", "endpoint", "samples", "temperature", "extra"}


def test_every_documented_key_lands_on_its_typed_field(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(EXTRA)
    options, model = from_pyproject(tmp_path)
    assert options.timeout_s == 7
    assert model == ModelSettings(
        model="some-model", samples=3, prompt="quokka-cot", few_shot=2, max_new_tokens=72, timeout_s=9.0,
        api_key="key", model_name="served", dtype="fp32", device="cpu", threads=1, completion=False,
        constrained=False, per_loop=False, escalate=True, auto=True,
    )
    config = LLMConfig.from_settings(model)
    assert (config.prompt.variant, config.prompt.few_shot, config.escalate) == ("quokka-cot", 2, True)


def test_no_pyproject_is_the_defaults(tmp_path: Path) -> None:
    assert from_pyproject(tmp_path) == (Options(), ModelSettings())


EXTRA_TABLE = "[tool.quokka.extra]"


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ("[tool.quokka]\nmodels = 'x'", "[tool.quokka]: unknown option(s): models"),
        ("[tool.quokka]\nsamples = 0", "[tool.quokka]: samples: expected a whole number >= 1"),
        ("[tool.quokka]\nmodel = 3", "[tool.quokka]: model: expected a string, got 3"),
        (f"{EXTRA_TABLE}\nllm_constraned = false", f"{EXTRA_TABLE}: unknown option(s): llm_constraned"),
        (f"{EXTRA_TABLE}\nllm_samples = 3", f"{EXTRA_TABLE}: unknown option(s): llm_samples"),
        (f"{EXTRA_TABLE}\nllm_few_shot = 'two'", f"{EXTRA_TABLE}: llm_few_shot: expected a whole number"),
        (f"{EXTRA_TABLE}\nllm_per_loop = 1", f"{EXTRA_TABLE}: llm_per_loop: expected true or false, got 1"),
        ("[tool.quokka]\nextra = 3", f"{EXTRA_TABLE}: expected a table, got 3"),
    ],
)
def test_bad_model_settings_are_one_line_naming_file_and_key(tmp_path: Path, table: str,
                                                             message: str) -> None:
    (tmp_path / "pyproject.toml").write_text(table + "\n")
    with pytest.raises(InputError) as info:
        from_pyproject(tmp_path)
    assert str(info.value).startswith(f"{tmp_path / 'pyproject.toml'}: {message}")
    assert "\n" not in str(info.value)


def test_verify_reports_a_bad_model_setting_as_bad_input(tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.quokka.extra]\nllm_prmpt = 'quokka'\n")
    (tmp_path / "p.c").write_text(LOOP)
    assert main(["verify", str(tmp_path / "p.c"), "--json"]) == 2
    out = json.loads(capsys.readouterr().out)
    assert out["status"] == "error" and "unknown option(s): llm_prmpt" in out["reason"]


def test_settings_are_checked_when_made_and_overlaid() -> None:
    with pytest.raises(SettingError, match="temperature: expected a temperature >= 0 and <= 10, got 11"):
        ModelSettings(temperature=11)
    with pytest.raises(SettingError, match="llm_threads: expected a whole number >= 0"):
        ModelSettings().with_(threads=-1)
    with pytest.raises(InputError, match="unknown option"):
        ModelSettings().with_(extra={})
    assert ModelSettings(model="m").with_(model=None, samples=2) == ModelSettings(model="m", samples=2)
    assert isinstance(ModelSettings().with_(temperature=1).temperature, float)
