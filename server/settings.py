"""The editor's `quokka.*` settings and the `quokka verify` arguments they stand for.

What they tell `quokka verify` is held as the layers' own settings (the core's `Options`, the model's
`ModelSettings`), each editor value checked by them as a command line or `[tool.quokka]` value is.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from quokka.invariants.llm.settings import ModelSettings
from quokka.verifier.cli_args import NON_NEGATIVE_INT, POSITIVE_INT, Bounds
from quokka.verifier.errors import InputError
from quokka.verifier.options import Options, SettingError

VERIFY_ON = ("save", "change", "manual")  # "save": on open and on save; "change": on every edit too
DEFAULT_COMMAND = (sys.executable, "-m", "quokka.server.verify_main")
WALL_GRACE_S = 15.0  # beyond the verifier's own timeout, before the server kills it
CORE = Options()
EDITOR_OPTIONS = CORE.with_(timeout_s=30.0)
MODEL = ModelSettings()


@dataclass(frozen=True)
class Settings:
    # what `quokka verify` is told: the timeout and proposers, and what differs from its defaults
    # (unset: `[tool.quokka]` or the verifier's default); data_model None: the task file's, else LP64
    options: Options = EDITOR_OPTIONS
    model: ModelSettings = MODEL  # for "Verify with model": a local model (directory, name) or an endpoint
    verify_on: str = "save"
    debounce_ms: int = 500
    show_proven_hints: bool = True  # inlay hints with the proven invariants
    proven_diagnostics: bool = True  # the quiet Hint on proven assertions
    max_parallel: int = 1
    # the verifier's command line, before the file: set by `quokka lsp --verifier`, never by the editor's
    # settings (a workspace's settings must not choose what the server executes)
    command: tuple[str, ...] = DEFAULT_COMMAND

    @property
    def has_model(self) -> bool:
        return bool(self.model.model or self.model.endpoint)

    @property
    def wall_limit_s(self) -> float:
        return self.options.timeout_s + WALL_GRACE_S

    def verify_args(self, with_model: bool = False, data_model: str | None = None) -> tuple[str, ...]:
        """The options of `quokka verify` (after the file), `--json` included."""
        options = self.options
        args = ["--json", "--timeout", f"{options.timeout_s:g}"]
        proposers = list(options.proposers)
        if with_model and "llm" not in proposers:
            proposers.append("llm")
        args += ["--proposers", ",".join(proposers) or "none"]
        if options.engines != CORE.engines:
            args += ["--engines", ",".join(options.engines)]
        if options.data_model or data_model:
            args += ["--data-model", options.data_model or data_model or ""]
        if with_model:
            args += _model_args(self.model)
        return tuple(args)


def _model_args(model: ModelSettings) -> list[str]:
    args = []
    if model.model:
        args += ["--model", model.model]
    if model.endpoint:
        args += ["--endpoint", model.endpoint]
    if model.samples != MODEL.samples:
        args += ["--samples", str(model.samples)]
    return args


def _names(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        value = value.split(",")
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise ValueError("expected a list of names or a comma-separated string")
    return tuple(v.strip() for v in value if v.strip() and v.strip() != "none")


def _number(bounds: Bounds, kind: type) -> Callable[[Any], Any]:
    """A check of a number setting: finite and in `bounds` (JSON allows Infinity and NaN)."""

    def check(value: Any) -> Any:
        return kind(bounds.check(value))

    return check


def _choice(options: tuple[str, ...]) -> Callable[[Any], str]:
    def check(value: Any) -> str:
        if value not in options:
            raise ValueError(f"expected one of {', '.join(options)}")
        return str(value)

    return check


def _flag(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError("expected true or false")
    return value


def _text(value: Any) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise ValueError("expected a string")
    return value


def _engines(value: Any) -> tuple[str, ...]:
    """The engines; none named: the verifier's default."""
    return _names(value) or CORE.engines


def _as_is(value: Any) -> Any:
    return value


# editor key -> (field, the editor's value as the field's, checked by the settings the field is in)
_OPTIONS: dict[str, tuple[str, Callable[[Any], Any]]] = {
    "timeout": ("timeout_s", _as_is),
    "proposers": ("proposers", _names),
    "engines": ("engines", _engines),
    "dataModel": ("data_model", _text),
}
_MODEL: dict[str, tuple[str, Callable[[Any], Any]]] = {
    "model": ("model", _text),
    "endpoint": ("endpoint", _text),
    "samples": ("samples", _as_is),
}
_EDITOR: dict[str, tuple[str, Callable[[Any], Any]]] = {
    "verifyOn": ("verify_on", _choice(VERIFY_ON)),
    "debounceMs": ("debounce_ms", _number(NON_NEGATIVE_INT, int)),
    "showProvenHints": ("show_proven_hints", _flag),
    "provenDiagnostics": ("proven_diagnostics", _flag),
    "maxParallel": ("max_parallel", _number(POSITIVE_INT, int)),
}
_FIELDS = {**_OPTIONS, **_MODEL, **_EDITOR}


def parse_settings(raw: Any, base: Settings | None = None) -> tuple[Settings, tuple[str, ...]]:
    """Settings from the `quokka` configuration section; bad values are reported and left at `base`."""
    settings = base or Settings()
    if isinstance(raw, Mapping) and isinstance(raw.get("quokka"), Mapping):
        raw = raw["quokka"]
    if not isinstance(raw, Mapping):
        return settings, ()
    problems = []
    for key, value in raw.items():
        if key not in _FIELDS:
            problems.append(f"quokka.{key}: unknown setting (ignored)")
            continue
        try:
            settings = _set(settings, key, value)
        except ValueError as exc:
            problems.append(f"quokka.{key}: {exc}, got {value!r} (ignored)")
        except SettingError as exc:
            problems.append(f"quokka.{key}: {exc.problem} (ignored)")
        except InputError as exc:
            problems.append(f"quokka.{key}: {exc} (ignored)")
    return settings, tuple(problems)


def _set(settings: Settings, key: str, value: Any) -> Settings:
    """`settings` with the editor's `key` set to `value`; ValueError or InputError when it is bad."""
    name, convert = _FIELDS[key]
    change = {name: convert(value)}
    if key in _OPTIONS:
        options = dataclasses.replace(settings.options, **change)
        options.validate()
        return dataclasses.replace(settings, options=options)
    if key in _MODEL:
        return dataclasses.replace(settings, model=dataclasses.replace(settings.model, **change))  # checked
    return dataclasses.replace(settings, **change)
