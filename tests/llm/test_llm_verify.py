"""`quokka verify --model/--endpoint` end to end: candidates are parsed, checked and reported."""

import json
import socket

import pytest
from llm_programs import LINE, SOURCE
from quokka.invariants.llm.serve import ChatServer
from quokka.verifier.cli import main

PYPROJECT = """[tool.quokka.extra]
llm_max_new_tokens = 72
llm_dtype = "fp32"
llm_threads = 1
"""


@pytest.fixture
def task(tmp_path):
    (tmp_path / "pyproject.toml").write_text(PYPROJECT)
    path = tmp_path / "tiny.c"
    path.write_text(SOURCE)
    return path


def verify(capsys, task, *args):
    argv = ["verify", str(task), "--proposers", "llm", "--engines", "houdini", "--json", "--timeout", "60"]
    code = main([*argv, *args])
    out = json.loads(capsys.readouterr().out)
    return code, out, {(c["proposer"], c["expr"]): c for c in out["candidates"]}


def test_verify_with_the_tiny_local_model(capsys, task, tiny_model):
    # greedy: the taught answer itself, whatever corpus the tokenizer was trained on
    code, out, cands = verify(
        capsys, task, "--model", str(tiny_model.directory), "--samples", "4", "--temperature", "0"
    )
    assert code == 0 and out["verdict"] == "true"
    assert cands[("llm", "s == 9*i")]["status"] == "rejected"
    assert "consecution" in cands[("llm", "s == 9*i")]["reason"]
    assert cands[("completion", "s == 3*i")]["status"] == "proven"
    assert cands[("llm", "i <= n")]["status"] == "proven"
    # decoded under the answer grammar (the default): the taught assignment `n = 3` cannot be written
    assert not any("assignment" in c["reason"] for c in out["candidates"] if c["status"] == "rejected")


MALICIOUS = [
    f"After line {LINE}, insert assume(s = 0);",
    f"After line {LINE}, insert assume(__VERIFIER_nondet_int() == 0);",
    f"After line {LINE}, insert assume(reach_error());",
    f"After line {LINE}, insert assume((s == 0);",
    f"After line {LINE}, insert assume(0);",
    "x" * 10_000,
]


def test_verify_with_an_endpoint_rejects_malicious_answers(capsys, task):
    good = f"After line {LINE}, insert assume(s == 3*i && i <= n);"

    def answers(messages, request):
        return [*MALICIOUS, good][: request.n]

    with ChatServer(answers) as server:
        code, out, cands = verify(
            capsys, task, "--endpoint", server.url, "--samples", str(len(MALICIOUS) + 1)
        )
    assert code == 0 and out["verdict"] == "true"
    assert cands[("llm", "s == 3*i")]["status"] == "proven"
    reasons = [c["reason"] for c in out["candidates"] if c["status"] == "rejected"]
    for expected in ["assignment", "function call", "unbalanced parentheses", "answer too long"]:
        assert any(expected in r for r in reasons), expected


def test_verify_with_an_unreachable_endpoint_is_unknown_not_a_crash(capsys, task):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    code, out, _ = verify(capsys, task, "--endpoint", f"http://127.0.0.1:{port}", "--timeout", "10")
    assert code == 1 and out["verdict"] == "unknown"
    assert any("cannot reach" in c["reason"] for c in out["candidates"])
