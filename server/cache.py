"""Outcomes cached by content hash in a small sqlite file (a `KeyedTable` of the results store), so
that reopening a verified file is instant.

The key covers the program text, the verifier's arguments and a fingerprint of the installed verifier
(its version and its source files' sizes and times), so a changed verifier never serves an old verdict.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
from collections.abc import Sequence
from functools import lru_cache
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from quokka.verifier.errors import MalformedRecord, decoded
from quokka.verifier.infra.store import KeyedTable
from quokka.verifier.verdict.results import Verdict

from .model import STATUS_ERROR, STATUS_OK, Outcome

VERIFIER_PACKAGES = ("quokka.verifier", "quokka.invariants")


def default_cache_path() -> Path:
    """`$QUOKKA_CACHE_DIR/lsp.sqlite`, else under `$XDG_CACHE_HOME` or `~/.cache`."""
    folder = os.environ.get("QUOKKA_CACHE_DIR")
    if folder:
        return Path(folder) / "lsp.sqlite"
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "quokka" / "lsp.sqlite"


@lru_cache(maxsize=1)
def verifier_fingerprint() -> str:
    """Changes whenever the installed verifier's code changes (editable installs included)."""
    digest = hashlib.sha256()
    try:
        digest.update(version("quokka-verifier").encode())
    except PackageNotFoundError:
        digest.update(b"unknown")
    for package in VERIFIER_PACKAGES:
        spec = importlib.util.find_spec(package)
        for folder in (spec.submodule_search_locations or []) if spec else []:
            for path in sorted(Path(folder).rglob("*.py")):
                stat = path.stat()
                digest.update(f"{path}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    return digest.hexdigest()


def cache_key(text: str, command: Sequence[str], args: Sequence[str]) -> str:
    payload = json.dumps([verifier_fingerprint(), list(command), list(args), text])
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def cacheable(outcome: Outcome) -> bool:
    """Verdicts, unsupported features and bad input are facts of the text; timeouts and crashes are not."""
    if outcome.status == STATUS_ERROR:
        return True
    if outcome.status != STATUS_OK:
        return False
    return outcome.verdict is not Verdict.UNKNOWN or outcome.result.cause is not None


class ResultCache:
    """A sqlite table of outcomes by key; every failure to read or write is a miss, never an error."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._table = KeyedTable(path, "outcomes", value="outcome")

    def get(self, key: str) -> Outcome | None:
        text = self._table.get(key)
        if text is None:
            return None
        try:
            return decoded(lambda: Outcome.from_json(json.loads(text), from_cache=True), "a cached outcome")
        except MalformedRecord:
            return None

    def put(self, key: str, outcome: Outcome) -> bool:
        return cacheable(outcome) and self._table.put(key, json.dumps(outcome.to_json()))
