"""Put tests/ on sys.path so that test modules can `from corpus import CORPUS`; every TRUE a test
sees is double-checked, and every FALSE was reached by gcc's build of the program (of its C file,
or of its IR written as C) (issue 20)."""

import dataclasses
import sys
from pathlib import Path

import pytest
from quokka.verifier.exec.replay import gcc_available
from quokka.verifier.verdict.portfolio import Portfolio
from quokka.verifier.verdict.results import Result, Verdict

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


# the known limits of a compiled replay: this machine cannot build the program's data model
# (`gcc -m32` does not link), the path reads an uninitialised value the build cannot be given, or
# the IR of a program without a C file has something C would compute otherwise (`emit_c`)
_UNFOLLOWABLE = ("does not link here", "uninitialised", "no faithful C form")


def _compiler_cannot_follow(note: str) -> bool:
    return any(reason in note for reason in _UNFOLLOWABLE)


@pytest.fixture(autouse=True)
def _every_false_compiled(monkeypatch: pytest.MonkeyPatch) -> None:
    """A FALSE verdict was also reached by the compiled program, not only by the interpreter: the
    C file's, or, for a program a test builds as IR, its IR written as C."""
    original = Portfolio.run

    def run(self: Portfolio, *args, **kwargs) -> Result:  # type: ignore[no-untyped-def]
        result = original(self, *args, **kwargs)
        source = self.config.source
        compiled = self.config.replay_with_compiler and (source is None or source.suffix in (".c", ".i"))
        if result.verdict is Verdict.FALSE and compiled and gcc_available():
            cex = result.counterexample
            assert cex is not None
            excused = cex.replay_notes and all(_compiler_cannot_follow(note) for note in cex.replay_notes)
            assert "gcc" in cex.confirmed_by or excused, (result.reason, cex.replay_notes)
        return result

    monkeypatch.setattr(Portfolio, "run", run)
