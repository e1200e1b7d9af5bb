"""The C frontend: cpp with Quokka's libc headers, pycparser, lowering to the IR.

Only this package imports pycparser.
"""

from .invariant import find_acsl_invariants, parse_invariant
from .lower import lower, lower_source

__all__ = ["find_acsl_invariants", "lower", "lower_source", "parse_invariant"]
