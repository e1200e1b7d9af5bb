"""The editor's `quokka.*` settings and the `quokka verify` arguments they stand for."""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from quokka.verifier.cli_args import NON_NEGATIVE_INT, POSITIVE_INT, SECONDS, Bounds

VERIFY_ON = ("save", "change", "manual")  # "save": on open and on save; "change": on every edit too
DATA_MODELS = ("ILP32", "LP64")
DEFAULT_COMMAND = (sys.executable, "-m", "quokka.server.verify_main")
WALL_GRACE_S = 15.0  # beyond the verifier's own timeout, before the server kills it


@dataclass(frozen=True)
class Settings:
    timeout_s: float = 30.0
    proposers: tuple[str, ...] = ("dynamic", "annotations")
    engines: tuple[str, ...] = ()  # empty: the verifier's default
    model: str | None = None  # a local model directory for "Verify with model"
    endpoint: str | None = None  # or an OpenAI-compatible endpoint
    samples: int | None = None
    verify_on: str = "save"
    debounce_ms: int = 500
    show_proven_hints: bool = True  # inlay hints with the proven invariants
    proven_diagnostics: bool = True  # the quiet Hint on proven assertions
    max_parallel: int = 1
    data_model: str | None = None  # None: the task file's (a `.yml` beside the program), else LP64
    # the verifier's command line, before the file: set by `quokka lsp --verifier`, never by the editor's
    # settings (a workspace's settings must not choose what the server executes)
    command: tuple[str, ...] = DEFAULT_COMMAND

    @property
    def has_model(self) -> bool:
        return bool(self.model or self.endpoint)

    @property
    def wall_limit_s(self) -> float:
        return self.timeout_s + WALL_GRACE_S

    def verify_args(self, with_model: bool = False, data_model: str | None = None) -> tuple[str, ...]:
        """The options of `quokka verify` (after the file), `--json` included."""
        args = ["--json", "--timeout", f"{self.timeout_s:g}"]
        proposers = list(self.proposers)
        if with_model and "llm" not in proposers:
            proposers.append("llm")
        args += ["--proposers", ",".join(proposers) or "none"]
        if self.engines:
            args += ["--engines", ",".join(self.engines)]
        if self.data_model or data_model:
            args += ["--data-model", self.data_model or data_model or ""]
        if with_model:
            args += _model_args(self)
        return tuple(args)


def _model_args(settings: Settings) -> list[str]:
    args = []
    if settings.model:
        args += ["--model", settings.model]
    if settings.endpoint:
        args += ["--endpoint", settings.endpoint]
    if settings.samples:
        args += ["--samples", str(settings.samples)]
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


_FIELDS: dict[str, tuple[str, Callable[[Any], Any]]] = {
    "timeout": ("timeout_s", _number(SECONDS, float)),
    "proposers": ("proposers", _names),
    "engines": ("engines", _names),
    "model": ("model", _text),
    "endpoint": ("endpoint", _text),
    "samples": ("samples", _number(POSITIVE_INT, int)),
    "verifyOn": ("verify_on", _choice(VERIFY_ON)),
    "debounceMs": ("debounce_ms", _number(NON_NEGATIVE_INT, int)),
    "showProvenHints": ("show_proven_hints", _flag),
    "provenDiagnostics": ("proven_diagnostics", _flag),
    "maxParallel": ("max_parallel", _number(POSITIVE_INT, int)),
    "dataModel": ("data_model", lambda v: _choice(DATA_MODELS)(v) if v else None),
}


def parse_settings(raw: Any, base: Settings | None = None) -> tuple[Settings, tuple[str, ...]]:
    """Settings from the `quokka` configuration section; bad values are reported and left at `base`."""
    base = base or Settings()
    if isinstance(raw, Mapping) and isinstance(raw.get("quokka"), Mapping):
        raw = raw["quokka"]
    if not isinstance(raw, Mapping):
        return base, ()
    changes: dict[str, Any] = {}
    problems = []
    for key, value in raw.items():
        if key not in _FIELDS:
            problems.append(f"quokka.{key}: unknown setting (ignored)")
            continue
        name, convert = _FIELDS[key]
        try:
            changes[name] = convert(value)
        except ValueError as exc:
            problems.append(f"quokka.{key}: {exc}, got {value!r} (ignored)")
    return dataclasses.replace(base, **changes), tuple(problems)
