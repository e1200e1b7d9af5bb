"""The C frontend: cpp with Quokka's libc headers, pycparser, lowering to the IR.

Only this package imports pycparser.
"""

from .assertions import Assertion, Outline, assertions_in_text, find_assertions, outline_text
from .invariant import find_acsl_invariants, parse_invariant
from .lower import lower, lower_source

__all__ = [
    "Assertion",
    "Outline",
    "assertions_in_text",
    "find_acsl_invariants",
    "find_assertions",
    "lower",
    "lower_source",
    "outline_text",
    "parse_invariant",
]
