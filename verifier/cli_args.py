"""Numbers from the command line and from settings: finite, in a sensible range, or one clear message.

Every command's numeric options use the functions below as argparse `type=` (a bad value is then
argparse's usage error, exit 2: `argument --timeout: expected a number of seconds > 0 and <= 1000000,
got 'inf'`). The layers' settings (`Options`, the model layer's `ModelSettings`), whose values also come
from `[tool.quokka]` and the editor's JSON, check them against the same `Bounds` (`options.check_number`).
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass

MAX_SECONDS = 1e6  # about 11.6 days: a longer budget is a typo, and overflows timers (Z3's are in ms)
MIN_MEMORY_MB = 256  # below this the interpreter and Z3 do not even load: every engine would crash
MAX_MEMORY_MB = 1 << 24  # 16 TiB
MAX_COUNT = 1_000_000
MAX_TEMPERATURE = 10.0  # as `quokka-serve` accepts; 0 is greedy decoding
MAX_SEED = 2**32 - 1  # numpy's limit (transformers' set_seed seeds numpy)


@dataclass(frozen=True)
class Bounds:
    """The numbers [low, high] (low excluded when `open_low`); whole numbers only when `integer`."""

    what: str
    low: float
    high: float
    integer: bool = False
    open_low: bool = False

    def describe(self) -> str:
        low = f"> {_show(self.low)}" if self.open_low else f">= {_show(self.low)}"
        return f"{self.what} {low} and <= {_show(self.high)}"

    def check(self, value: object) -> int | float:
        """`value` when it is in range (a bool is not a number here); else ValueError('expected ...')."""
        if not isinstance(value, int | float) or isinstance(value, bool) or not self._fits(value):
            raise ValueError(f"expected {self.describe()}")
        return value

    def _fits(self, value: float) -> bool:
        if isinstance(value, float) and not math.isfinite(value):
            return False
        if self.integer and not isinstance(value, int):
            return False
        above = value > self.low if self.open_low else value >= self.low
        return above and value <= self.high

    def parse(self, text: str) -> int | float:
        """`text` as a number in range; else argparse.ArgumentTypeError (argparse's usage error)."""
        try:
            return self.check(int(text) if self.integer else float(text))
        except ValueError as exc:
            raise argparse.ArgumentTypeError(f"expected {self.describe()}, got {text!r}") from exc


def _show(bound: float) -> str:
    return str(int(bound)) if float(bound).is_integer() else f"{bound:g}"


SECONDS = Bounds("a number of seconds", 0.0, MAX_SECONDS, open_low=True)
MINUTES = Bounds("a number of minutes", 0.0, MAX_SECONDS / 60, open_low=True)
MEMORY_MB = Bounds("a whole number of MB", MIN_MEMORY_MB, MAX_MEMORY_MB, integer=True)
POSITIVE_INT = Bounds("a whole number", 1, MAX_COUNT, integer=True)
NON_NEGATIVE_INT = Bounds("a whole number", 0, MAX_COUNT, integer=True)
POSITIVE_FLOAT = Bounds("a number", 0.0, MAX_COUNT, open_low=True)
TEMPERATURE = Bounds("a temperature", 0.0, MAX_TEMPERATURE)
SEED = Bounds("a seed", 0, MAX_SEED, integer=True)
PORT = Bounds("a port number (0: any free one)", 0, 65535, integer=True)


def seconds(text: str) -> float:
    """A time limit in seconds: finite, > 0, at most `MAX_SECONDS`."""
    return float(SECONDS.parse(text))


def minutes(text: str) -> float:
    """A time limit in minutes (`MAX_SECONDS` / 60 at most)."""
    return float(MINUTES.parse(text))


def memory_mb(text: str) -> int:
    """A memory limit in MB: whole, at least `MIN_MEMORY_MB`."""
    return int(MEMORY_MB.parse(text))


def positive_int(text: str) -> int:
    """A count of at least 1 (samples, jobs, steps, ...)."""
    return int(POSITIVE_INT.parse(text))


def non_negative_int(text: str) -> int:
    """A count where 0 has a meaning of its own (threads: all cores; limit: none)."""
    return int(NON_NEGATIVE_INT.parse(text))


def positive_float(text: str) -> float:
    """A finite number > 0 (epochs, learning rate)."""
    return float(POSITIVE_FLOAT.parse(text))


def temperature(text: str) -> float:
    """A sampling temperature: finite, 0 (greedy) to `MAX_TEMPERATURE`."""
    return float(TEMPERATURE.parse(text))


def port(text: str) -> int:
    return int(PORT.parse(text))


def seed(text: str) -> int:
    """A random seed, 0 to 2**32 - 1."""
    return int(SEED.parse(text))
