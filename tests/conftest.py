"""Put tests/ on sys.path so that test modules can `from corpus import CORPUS`; every TRUE a test
sees is double-checked (issue 20)."""

import dataclasses
import sys
from pathlib import Path

import pytest
from quokka.verifier.portfolio import Portfolio

sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture(autouse=True)
def _every_certificate_double_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every TRUE a test sees has passed cvc5's independent check of its certificate
    (`doublecheck`: a refuted certificate is rejected, so the verdict is not TRUE), as every FALSE
    has passed the replay (interpreter, and gcc where there is one)."""
    original = Portfolio.__init__

    def init(self: Portfolio, program, config, *args, **kwargs):  # type: ignore[no-untyped-def]
        original(self, program, dataclasses.replace(config, double_check=True), *args, **kwargs)

    monkeypatch.setattr(Portfolio, "__init__", init)
