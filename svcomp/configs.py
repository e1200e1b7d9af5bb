"""Named verifier configurations for `quokka batch --config` and `quokka bench --configs`.

A configuration is a name and the `quokka verify` arguments it stands for. The built-in ones
cover the engines and proposers; `--define NAME=ARGS` adds or replaces one for a command.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from quokka.verifier.errors import InputError
from quokka.verifier.verdict.contract import DEFAULT_COMMAND

DEFAULT_VERIFIER: tuple[str, ...] = DEFAULT_COMMAND

BUILTIN: Mapping[str, tuple[str, ...]] = {
    "default": (),
    "race": ("--cores", "0"),  # every strategy at once, the schedule before stages (`verify --cores`)
    "houdini": ("--engines", "houdini"),
    "spacer": ("--engines", "spacer"),
    "bmc": ("--engines", "bmc"),
    "testing": ("--engines", "testing"),
    "no-proposers": ("--proposers", "none"),
    "dynamic": ("--proposers", "dynamic"),
    "no-accel": ("--proposers", "dynamic,arrays,annotations"),  # the default without loop acceleration
    "absint": ("--proposers", "dynamic,arrays,annotations,accel,absint"),  # the default with abstract interp.
    "annotations": ("--proposers", "annotations"),
    "no-model": ("--model", "none"),
    "default+model": ("--model", "auto"),  # the installed quokka-smollm2, escalating
    "model-first": ("--model", "quokka-smollm2"),  # asked in the first round, its report awaited
    # with --invariant arguments (batch --invariants-from): only the given invariants can prove TRUE
    "check-invariants": ("--engines", "houdini", "--proposers", "none"),
}


@dataclass(frozen=True)
class Config:
    name: str
    args: tuple[str, ...] = ()


def parse_definitions(definitions: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """`NAME=ARGS` strings (ARGS split like a shell) as a name -> arguments table."""
    table: dict[str, tuple[str, ...]] = {}
    for text in definitions:
        name, sep, args = text.partition("=")
        if not sep or not name.strip():
            raise InputError(None, f"--define wants NAME=ARGS, got {text!r}")
        try:
            table[name.strip()] = tuple(shlex.split(args))
        except ValueError as exc:
            raise InputError(None, f"--define {name}: {exc}") from exc
    return table


def resolve(names: Iterable[str], definitions: Iterable[str] = ()) -> tuple[Config, ...]:
    """The configurations called `names` (built-in or defined)."""
    table = {**BUILTIN, **parse_definitions(definitions)}
    configs = []
    for name in names:
        if name not in table:
            known = ", ".join(sorted(table))
            raise InputError(None, f"unknown configuration {name!r} (known: {known}; add one with --define)")
        configs.append(Config(name, table[name]))
    return tuple(configs)
