"""Test decorators shared by the test modules."""

import pytest
from quokka.verifier.exec.replay import gcc_available


def needs_gcc(test):  # type: ignore[no-untyped-def]
    """Run `test` only where there is a C compiler; marked `needs_gcc` for selection."""
    return pytest.mark.needs_gcc(pytest.mark.skipif(not gcc_available(), reason="no C compiler")(test))
