"""A failing proposer (an unreachable endpoint) is said once: on standard error, as one rejected
candidate, and in the reason of the UNKNOWN answer."""

from __future__ import annotations

import json
import logging
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from corpus import CORPUS
from quokka.invariants.llm.backend import SampleRequest
from quokka.invariants.llm.endpoint import EndpointBackend, EndpointUnreachable
from quokka.invariants.protocol import Candidate, ProposalContext
from quokka.invariants.quokka_loop import QuokkaLoop
from quokka.verifier.engines.base import Budget
from quokka.verifier.errors import QuokkaError
from quokka.verifier.options import Options

UNSAFE = next(e for e in CORPUS if e.expected == "unsafe" and e.c_source is None and e.program.loops)
PROGRAM = """\
void reach_error(void);
int __VERIFIER_nondet_int(void);
int main(void) {
  int n = __VERIFIER_nondet_int();
  int i = 0;
  while (i < n) { i = i + 1; }
  if (i < 0) { reach_error(); }
  return 0;
}
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class _Failing:
    name = "llm"

    def __init__(self) -> None:
        self.calls = 0

    def propose(self, context: ProposalContext) -> list[Candidate]:
        self.calls += 1
        raise QuokkaError("cannot reach the endpoint http://127.0.0.1:1/v1/models: refused")


def test_a_proposer_failing_every_round_is_reported_once(caplog: pytest.LogCaptureFixture) -> None:
    proposer = _Failing()
    with caplog.at_level(logging.WARNING):
        result = QuokkaLoop([proposer], Options(), None).run(UNSAFE.program, Budget.of(20))
    assert proposer.calls >= 2
    assert result.reason == ("no proposed candidate proved the property (the llm proposer failed: cannot "
                             "reach the endpoint http://127.0.0.1:1/v1/models: refused)")
    rejected = [c for c in result.stats["candidates"] if c.status == "rejected"]
    assert [(c.proposer, c.reason) for c in rejected] == [
        ("llm", "proposer failed: cannot reach the endpoint http://127.0.0.1:1/v1/models: refused")]
    assert [r.getMessage() for r in caplog.records] == [
        "quokka: the llm proposer failed: cannot reach the endpoint http://127.0.0.1:1/v1/models: refused"]


def test_an_unreachable_endpoint_is_not_asked_again_at_once() -> None:
    backend = EndpointBackend(f"http://127.0.0.1:{_free_port()}", model="m")
    opened: list[str] = []
    backend.client.event_hooks = {"request": [lambda request: opened.append(str(request.url))]}
    for _ in range(3):
        with pytest.raises(EndpointUnreachable, match="cannot reach the endpoint"):
            backend.sample([{"role": "user", "content": "hi"}], SampleRequest(n=1, timeout_s=5))
    assert len(opened) == 1


def test_verify_with_an_unreachable_endpoint_says_so_once_on_stderr_and_in_the_reason(tmp_path: Path) -> None:
    program = tmp_path / "p.c"
    program.write_text(PROGRAM)
    url = f"http://127.0.0.1:{_free_port()}"
    proc = subprocess.run(
        [sys.executable, "-m", "quokka.verifier.cli", "verify", str(program), "--json", "--endpoint", url,
         "--engines", "houdini", "--proposers", "llm", "--timeout", "20"],
        capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 1, proc.stderr
    out = json.loads(proc.stdout)
    assert out["verdict"] == "unknown"
    assert "the llm proposer failed: cannot reach the endpoint " + url in out["reason"]
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    said = "quokka: the llm proposer failed: cannot reach the endpoint " + url
    assert len(lines) == 1 and lines[0].startswith(said), proc.stderr
