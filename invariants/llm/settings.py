"""The model layer's settings: which model proposes invariants, how it samples, when it is asked.

From the command line (`--model`, `--endpoint`, `--samples`, `--temperature`), from `[tool.quokka]`
(`model`, `endpoint`, `samples`, `temperature`; every other field `NAME` as `llm_NAME` in
`[tool.quokka.extra]`, e.g. `llm_prompt`, `llm_constrained`) and from the editor's settings.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import NoneType
from typing import Any, get_args, get_type_hints

from quokka.verifier.cli_args import NON_NEGATIVE_INT, POSITIVE_INT, SECONDS, TEMPERATURE, Bounds
from quokka.verifier.errors import InputError
from quokka.verifier.options import Config, Options, SettingError, check_number, options_from, read_config

TOP_KEYS = ("model", "endpoint", "samples", "temperature")  # the fields with a key in [tool.quokka]
EXTRA = "extra"  # [tool.quokka.extra]: the other fields, `llm_` before their names
EXTRA_PREFIX = "llm_"
CONFIG_KEYS = (*TOP_KEYS, EXTRA)  # this layer's keys of [tool.quokka]
NUMBERS: dict[str, Bounds] = {
    "samples": POSITIVE_INT,
    "temperature": TEMPERATURE,
    "max_new_tokens": POSITIVE_INT,
    "timeout_s": SECONDS,
    "few_shot": NON_NEGATIVE_INT,
    "threads": NON_NEGATIVE_INT,
}
KINDS = {str: "a string", bool: "true or false"}


@dataclass(frozen=True)
class ModelSettings:
    """Everything the model layer can be told; checked when made. Overlay with `with_(**changes)`."""

    model: str | None = None  # a model directory or name (`quokka model list`), `auto` or `none`
    endpoint: str | None = None  # base URL of an OpenAI-compatible server
    samples: int = 8  # per prompt
    temperature: float = 0.8
    max_new_tokens: int = 384
    timeout_s: float = 120.0  # per request
    prompt: str = "quokka"  # or "quokka-cot"
    few_shot: int = 0
    completion: bool = True  # the answers' template completions join them (`invariants.completion`)
    api_key: str | None = None
    model_name: str | None = None  # the endpoint's model; None: the one it serves
    dtype: str = "auto"  # "auto", "bf16" or "fp32"
    device: str = "auto"
    threads: int = 0  # torch CPU threads; 0: half the cores
    constrained: bool = True  # a local model decodes only answers of the answer grammar (`llm.grammar`)
    per_loop: bool = True  # with constrained decoding, the samples shared out over the loops
    escalate: bool | None = None  # asked only from the second round on; None: only `--model auto` is
    auto: bool | None = None  # an installed quokka-smollm2 joins when no model is given; None: AUTO_MODEL

    def __post_init__(self) -> None:
        hints = _hints()
        for f in dataclasses.fields(self):
            _check(f.name, hints[f.name], getattr(self, f.name))

    def with_(self, **changes: Any) -> ModelSettings:
        """A copy with `changes` applied; unknown names are an error, None values are ignored."""
        unknown = set(changes) - {f.name for f in dataclasses.fields(self)}
        if unknown:
            raise InputError(None, f"unknown option(s): {', '.join(sorted(unknown))}")
        return dataclasses.replace(self, **{k: _coerce(k, v) for k, v in changes.items() if v is not None})


@cache
def _hints() -> dict[str, Any]:
    return get_type_hints(ModelSettings)


def key_of(name: str) -> str:
    """The name of field `name` in the config (`llm_prompt` for `prompt`)."""
    return name if name in TOP_KEYS else EXTRA_PREFIX + name


def _check(name: str, kind: Any, value: object) -> None:
    if name in NUMBERS:
        check_number(key_of(name), NUMBERS[name], value)
    elif not isinstance(value, kind):
        described = KINDS[next(k for k in (*get_args(kind), kind) if k is not NoneType)]
        raise SettingError(key_of(name), f"expected {described}, got {value!r}")


def _coerce(name: str, value: Any) -> Any:
    """A whole number where a float is wanted, as a float (TOML's `temperature = 1`)."""
    bounds = NUMBERS.get(name)
    if bounds is not None and not bounds.integer and type(value) is int:
        return float(value)
    return value


def settings_from(config: Config, base: ModelSettings | None = None) -> ModelSettings:
    """`base` overlaid by this layer's keys of `config` (`CONFIG_KEYS`)."""
    top = {k: config.table[k] for k in TOP_KEYS if k in config.table}
    with config.blame():
        settings = (base or ModelSettings()).with_(**top)
    with config.blame("[tool.quokka.extra]"):
        return settings.with_(**_extra_fields(config.table.get(EXTRA, {})))


def _extra_fields(table: object) -> dict[str, Any]:
    """The fields of `[tool.quokka.extra]`'s `llm_NAME` keys; any other key is an error."""
    if not isinstance(table, Mapping):
        raise InputError(None, f"expected a table, got {table!r}")
    names = {f.name for f in dataclasses.fields(ModelSettings)} - set(TOP_KEYS)
    unknown = [k for k in table if not (k.startswith(EXTRA_PREFIX) and k.removeprefix(EXTRA_PREFIX) in names)]
    if unknown:
        raise InputError(None, f"unknown option(s): {', '.join(sorted(unknown))}")
    return {k.removeprefix(EXTRA_PREFIX): v for k, v in table.items()}


def from_pyproject(start: Path) -> tuple[Options, ModelSettings]:
    """The core's options and the model's settings from the `[tool.quokka]` table above `start`."""
    config = read_config(start)
    return options_from(config, foreign=CONFIG_KEYS), settings_from(config)
