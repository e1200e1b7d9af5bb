"""Proving engines: inductive check, Houdini, Spacer, two-query check (and BMC).

Every engine returns a `base.EngineResult` and honours a `base.Budget`.
"""

from .base import Budget, EngineResult, Status

__all__ = ["Budget", "EngineResult", "Status"]
