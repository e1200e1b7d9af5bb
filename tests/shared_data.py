"""The one way tests reach `../shared`, the data laid beside the project (a relative path, never an
absolute one: the project also runs without it, and tests that need it skip)."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
BENCHMARKS = SHARED / "benchmarks"
