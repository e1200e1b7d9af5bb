"""The core's options: frozen defaults, overlaid by `[tool.quokka]`, the CLI and editor settings.

Each layer declares its own options; the core knows nothing of models (the model layer's are
`invariants.llm.settings.ModelSettings`). A `[tool.quokka]` table is read once (`read_config`) and
each layer takes its own keys from it (`options_from`: the core's).
"""

from __future__ import annotations

import dataclasses
import tomllib
from collections.abc import Collection, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .cli_args import MEMORY_MB, NON_NEGATIVE_INT, SECONDS, SEED, Bounds
from .errors import InputError
from .properties import READINGS

# the readings of an uninitialised local (`definedness`), here so that `quokka verify --help`
# names them without importing the IR
STRICT = "strict"  # reading an uninitialised local is undefined: no verdict may depend on it
NONDET = "nondet"  # an uninitialised local holds an arbitrary value of its type (SV-COMP)
UNINITIALISED_READINGS = (NONDET, STRICT)

ENGINES = (
    "houdini", "bmc", "spacer", "testing", "bitblast", "fuzz", "execute", "algebra", "twoquery", "inductive",
    "kind",
)  # fmt: skip
DATA_MODELS = ("ILP32", "LP64")
NUMBERS: tuple[tuple[str, Bounds], ...] = (
    ("timeout_s", SECONDS),
    ("memory_mb", MEMORY_MB),
    ("seed", SEED),
)


class SettingError(InputError):
    """A setting's value out of range or of the wrong kind: `name: problem` (`problem` ends in
    `got VALUE`; the editor shows it under its own name for the setting)."""

    def __init__(self, name: str, problem: str) -> None:
        self.name = name
        self.problem = problem
        super().__init__(None, f"{name}: {problem}")


def check_number(name: str, bounds: Bounds, value: object) -> None:
    """SettingError unless `value` is in `bounds` (settings' values come from TOML and JSON, not argparse)."""
    try:
        bounds.check(value)
    except ValueError as exc:
        raise SettingError(name, f"{exc}, got {value!r}") from None


@dataclass(frozen=True)
class Options:
    """Everything a verification run can be told. Overlay with `with_(**changes)`."""

    timeout_s: float = 60.0
    data_model: str | None = None  # None: from the task file, else LP64
    property: str | None = None  # "unreach-call" | "assert"; None: the task's (unreach-call), else assert
    # reading an uninitialised local: "nondet" (an arbitrary value, SV-COMP) | "strict" (undefined);
    # None: nondet for a task file, strict for a C file
    uninitialised: str | None = None
    # bitblast: loop-free programs only; fuzz: when there is a C file to compile
    engines: tuple[str, ...] = (
        "houdini", "bmc", "spacer", "testing", "bitblast", "fuzz", "execute", "algebra"
    )  # fmt: skip
    proposers: tuple[str, ...] = ("dynamic", "arrays", "annotations", "accel")
    invariants: tuple[tuple[int, str], ...] = ()  # user-given (line, C expression)
    memory_mb: int = 4096
    seed: int = 0
    dump_dir: Path | None = None
    replay_with_compiler: bool = True
    all_invariants: bool = False  # the whole certificate, not the conjuncts that carry the proof
    witness_in: Path | None = None  # a witness to validate: invariants checked, violations replayed
    double_check: bool = False  # every certificate re-checked by cvc5 over a second encoding
    # at most this many strategies at once, cheap ones first (`schedule`); 0: all at once (the race
    # of old); None: the cores this process may use
    cores: int | None = None

    def with_(self, **changes: Any) -> Options:
        """A copy with `changes` applied; unknown names are an error, None values are ignored."""
        known = {f.name for f in dataclasses.fields(self)}
        unknown = set(changes) - known
        if unknown:
            raise InputError(None, f"unknown option(s): {', '.join(sorted(unknown))}")
        updates = {k: v for k, v in changes.items() if v is not None}
        result = dataclasses.replace(self, **updates)
        result.validate()
        return result

    def validate(self) -> None:
        self._validate_numbers()
        if self.data_model is not None and self.data_model not in DATA_MODELS:
            raise InputError(None, f"data model must be ILP32 or LP64, got {self.data_model!r}")
        if self.property is not None and self.property not in READINGS:
            raise InputError(None, f"property must be {' or '.join(READINGS)}, got {self.property!r}")
        if self.uninitialised is not None and self.uninitialised not in UNINITIALISED_READINGS:
            expected = " or ".join(UNINITIALISED_READINGS)
            raise InputError(None, f"uninitialised must be {expected}, got {self.uninitialised!r}")
        bad = [e for e in self.engines if e not in ENGINES]
        if bad:
            raise InputError(None, f"unknown engine(s): {', '.join(bad)} (known: {', '.join(ENGINES)})")

    def _validate_numbers(self) -> None:
        for name, bounds in NUMBERS:
            check_number(name, bounds, getattr(self, name))
        if self.cores is not None:
            check_number("cores", NON_NEGATIVE_INT, self.cores)


def _coerce(name: str, value: Any) -> Any:
    if name in ("engines", "proposers") and isinstance(value, str):
        return tuple(p.strip() for p in value.split(",") if p.strip())
    if name in ("engines", "proposers") and isinstance(value, list):
        return tuple(value)
    if name == "dump_dir" and value is not None:
        return Path(value)
    return value


def overlay(base: Options, settings: Mapping[str, Any]) -> Options:
    """`base` with the settings of a config table (keys may use dashes: `timeout-s`)."""
    changes = {k.replace("-", "_"): v for k, v in settings.items()}
    return base.with_(**{k: _coerce(k, v) for k, v in changes.items()})


@dataclass(frozen=True)
class Config:
    """A `[tool.quokka]` table (its keys' dashes read as underscores: `timeout-s`) and its file."""

    path: Path | None = None
    table: Mapping[str, Any] = field(default_factory=dict)

    @contextmanager
    def blame(self, table: str = "[tool.quokka]") -> Iterator[None]:
        """An InputError raised inside names the file and `table`."""
        try:
            yield
        except InputError as exc:
            if self.path is None:
                raise
            raise InputError(None, f"{self.path}: {table}: {exc}") from None


def read_config(start: Path) -> Config:
    """The nearest `pyproject.toml` with a `[tool.quokka]` table at or above `start` (none: empty)."""
    for folder in [start, *start.parents]:
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            table = _quokka_table(candidate)
            if table is not None:
                return Config(candidate, {k.replace("-", "_"): v for k, v in table.items()})
    return Config()


def options_from(config: Config, base: Options | None = None, foreign: Collection[str] = ()) -> Options:
    """`base` overlaid by `config`; its keys in `foreign` are other layers' options, not looked at here
    (any other key Options lacks is an error)."""
    own = {k: v for k, v in config.table.items() if k not in foreign}
    with config.blame():
        return overlay(base or Options(), own)


def _quokka_table(path: Path) -> Mapping[str, Any] | None:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise InputError(None, f"{path}: cannot read [tool.quokka]: {exc}") from exc
    table = data.get("tool", {}).get("quokka")
    return table if isinstance(table, dict) else None
