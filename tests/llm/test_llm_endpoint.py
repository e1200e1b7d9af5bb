import json
import socket
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import pytest
from llm_programs import LINE, SOURCE
from quokka.invariants.llm import LLMConfig, LLMProposer, ModelSettings, endpoint, make_llm_proposer
from quokka.invariants.llm.backend import EndpointError, ModelError, SampleRequest
from quokka.invariants.llm.endpoint import EndpointBackend, EndpointUnreachable, api_base
from quokka.invariants.llm.serve import ChatServer
from quokka.invariants.protocol import ProposalContext, loop_contexts
from quokka.verifier.errors import QuokkaError

GOOD = f"After line {LINE}, insert assume(s == 3*i);\nAfter line {LINE}, insert assume(i <= n);"
SCRIPTED = [
    GOOD,
    f"After line {LINE}, insert assume(s = 0);",
    f"After line {LINE}, insert assume(abort());",
    f"After line {LINE}, insert assume(__VERIFIER_nondet_int() == s);",
    f"After line {LINE}, insert assume((s == 3*i);",
    f"After line {LINE}, insert assume(" + "s + " * 1000 + "0);",
    "x" * 10_000,
    f"After line {LINE}, insert assume(i-- > 0);",
]


class Script:
    """A sampler that returns scripted answers and remembers what it was asked."""

    def __init__(self, answers, per_request=None):
        self.answers = answers
        self.per_request = per_request
        self.requests = []

    def __call__(self, messages, request):
        self.requests.append((messages, request))
        k = request.n if self.per_request is None else min(request.n, self.per_request)
        return [self.answers[i % len(self.answers)] for i in range(k)]


def context(program, seed=0, ctis=None):
    return ProposalContext(program, SOURCE, loop_contexts(program), ctis or {}, 30.0, seed)


def test_api_base_accepts_the_usual_spellings():
    assert api_base("http://127.0.0.1:8000") == "http://127.0.0.1:8000/v1"
    assert api_base("http://h:1/v1/") == "http://h:1/v1"
    assert api_base("https://h/api/v1/chat/completions") == "https://h/api/v1"
    for bad in ["file:///etc/passwd", "127.0.0.1:8000", "ftp://h/v1"]:
        with pytest.raises(EndpointError, match="http"):
            api_base(bad)


def test_scripted_server_answers_are_parsed_and_rejected_with_reasons(program):
    script = Script(SCRIPTED)
    with ChatServer(script) as server:
        proposer = LLMProposer(EndpointBackend(server.url), LLMConfig(samples=len(SCRIPTED), temperature=0.5))
        out = proposer.propose(context(program))
    assert [c.text for c in out if not c.rejected] == ["s == 3*i", "i <= n"]
    rejected = {c.sample: c.rejected for c in out if c.rejected}
    assert "assignment" in rejected[1]
    assert "function call" in rejected[2] and "function call" in rejected[3]
    assert rejected[4] == "unbalanced parentheses"
    assert "longer than" in rejected[5]
    assert "answer too long" in rejected[6]
    assert "--" in rejected[7]
    messages, request = script.requests[0]
    assert request.n == len(SCRIPTED) and request.temperature == 0.5
    assert messages[-1]["role"] == "user" and "// line 11" in messages[-1]["content"]


def test_model_name_comes_from_the_server_listing():
    with ChatServer(Script([GOOD]), model="my-model") as server:
        assert EndpointBackend(server.url).model_name() == "my-model"
        assert EndpointBackend(server.url, model="other").model_name() == "other"


def test_servers_that_ignore_n_are_asked_again():
    script = Script([GOOD], per_request=1)
    with ChatServer(script) as server:
        answers = EndpointBackend(server.url).sample([{"role": "user", "content": "hi"}], SampleRequest(n=3))
    assert answers == [GOOD] * 3
    assert [r.n for _, r in script.requests] == [3, 2, 1]
    assert [r.seed for _, r in script.requests] == [0, 1, 2]


def test_unreachable_endpoint_is_a_clear_error():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    backend = EndpointBackend(f"http://127.0.0.1:{port}", model="m")
    with pytest.raises(EndpointError, match="cannot reach"):
        backend.sample([{"role": "user", "content": "hi"}], SampleRequest(n=1, timeout_s=5))


class _Raw(BaseHTTPRequestHandler):
    status = 200
    body = b"{}"
    seen: ClassVar[list] = []
    raw: ClassVar[list[bytes]] = []

    def log_message(self, *args):
        pass

    def do_POST(self):
        data = self.rfile.read(int(self.headers["Content-Length"]))
        _Raw.raw.append(data)
        _Raw.seen.append((dict(self.headers), json.loads(data)))
        self.send_response(self.status)
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)


@pytest.fixture
def raw_server():
    servers = []

    def start(status, body):
        handler = type("H", (_Raw,), {"status": status, "body": body})
        server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}"

    _Raw.seen = []
    _Raw.raw = []
    yield start
    for s in servers:
        s.shutdown()
        s.server_close()


@pytest.mark.parametrize(
    ("status", "body", "match"),
    [
        (500, b"model crashed", "HTTP 500.*model crashed"),
        (200, b"<html>not json</html>", "not JSON"),
        (200, b'{"object": "error"}', "no 'choices'"),
    ],
)
def test_bad_server_answers_are_endpoint_errors(raw_server, status, body, match):
    backend = EndpointBackend(raw_server(status, body), model="m")
    with pytest.raises(EndpointError, match=match):
        backend.sample([{"role": "user", "content": "hi"}], SampleRequest(n=1, timeout_s=5))


def test_request_carries_key_model_and_sampling_settings(raw_server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    body = json.dumps({"choices": [{"message": {"content": GOOD}}, {"message": {"content": None}}]}).encode()
    backend = EndpointBackend(raw_server(200, body), model="m")
    answers = backend.sample([{"role": "user", "content": "hi"}], SampleRequest(n=2, temperature=0.3, seed=7))
    assert answers == [GOOD, ""]
    headers, request = _Raw.seen[0]
    assert headers["Authorization"] == "Bearer sk-test"
    assert request["model"] == "m" and request["n"] == 2 and request["temperature"] == 0.3
    assert request["seed"] == 7 and request["messages"] == [{"role": "user", "content": "hi"}]


def test_the_request_body_is_the_json_of_the_settings_in_this_order(raw_server):
    body = json.dumps({"choices": [{"message": {"content": GOOD}}]}).encode()
    backend = EndpointBackend(raw_server(200, body), model="m")
    backend.sample([{"role": "user", "content": "hï"}], SampleRequest(n=1, temperature=0.3, seed=7))
    expected = {"model": "m", "messages": [{"role": "user", "content": "hï"}], "n": 1, "temperature": 0.3,
                "top_p": 1.0, "max_tokens": 384, "seed": 7}  # fmt: skip
    assert _Raw.raw == [json.dumps(expected).encode("utf-8")]
    headers, _ = _Raw.seen[0]
    assert headers["Content-Type"] == "application/json" and headers["Accept"] == "application/json"
    assert "Authorization" not in headers


@pytest.mark.parametrize(
    ("status", "body", "message"),
    [
        (503, b"x" * 1000, "HTTP 503 Service Unavailable: " + "x" * 300),
        (404, b"", "HTTP 404 Not Found"),
    ],
)
def test_http_errors_name_the_status_and_the_start_of_the_body(raw_server, status, body, message):
    url = raw_server(status, body)
    with pytest.raises(EndpointError) as info:
        EndpointBackend(url, model="m").sample([{"role": "user", "content": "hi"}], SampleRequest(n=1))
    assert str(info.value) == f"{url}/v1/chat/completions: {message}"
    assert not isinstance(info.value, EndpointUnreachable)


def test_an_answer_over_the_size_limit_is_refused(raw_server, monkeypatch):
    monkeypatch.setattr(endpoint, "MAX_RESPONSE_BYTES", 100)
    url = raw_server(200, json.dumps({"choices": [], "pad": "x" * 500}).encode())
    with pytest.raises(EndpointError, match="answer larger than 100 bytes"):
        EndpointBackend(url, model="m").sample([{"role": "user", "content": "hi"}], SampleRequest(n=1))


def test_a_refused_connection_is_unreachable_and_names_the_url():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(EndpointUnreachable) as info:
        EndpointBackend(f"http://127.0.0.1:{port}", model="m").sample([], SampleRequest(n=1, timeout_s=5))
    url = f"http://127.0.0.1:{port}/v1/chat/completions"
    assert str(info.value).startswith(f"cannot reach the endpoint {url}: ") and "refused" in str(info.value)


def test_a_silent_server_is_a_timeout_and_is_asked_again():
    with socket.socket() as silent:  # listens, so connections are made, but never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        backend = EndpointBackend(f"http://127.0.0.1:{silent.getsockname()[1]}", model="m")
        for _ in range(2):
            with pytest.raises(EndpointError, match=r"completions: no answer within 0\.\d s") as info:
                backend.sample([{"role": "user", "content": "hi"}], SampleRequest(n=1, timeout_s=0.5))
            assert not isinstance(info.value, EndpointUnreachable)


def test_a_server_that_hangs_up_is_a_failed_connection_not_an_unreachable_one():
    with socket.socket() as rude:
        rude.bind(("127.0.0.1", 0))
        rude.listen(8)

        def hang_up() -> None:
            conn, _ = rude.accept()
            conn.recv(65536)
            conn.close()

        threading.Thread(target=hang_up, daemon=True).start()
        backend = EndpointBackend(f"http://127.0.0.1:{rude.getsockname()[1]}", model="m")
        with pytest.raises(EndpointError, match="/v1/chat/completions: connection failed: ") as info:
            backend.sample([{"role": "user", "content": "hi"}], SampleRequest(n=1, timeout_s=5))
    assert not isinstance(info.value, EndpointUnreachable)


def test_a_local_endpoint_is_asked_without_the_environments_proxy(raw_server, monkeypatch):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}"
    for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.setenv(name, dead)
    for name in ("NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    body = json.dumps({"choices": [{"message": {"content": GOOD}}]}).encode()
    for host in ("127.0.0.1", "localhost"):
        url = raw_server(200, body).replace("127.0.0.1", host)
        assert EndpointBackend(url, model="m").sample([], SampleRequest(n=1, timeout_s=5)) == [GOOD]


def test_without_httpx_the_backend_names_the_extra_it_needs(monkeypatch):
    monkeypatch.setitem(sys.modules, "httpx", None)
    with pytest.raises(EndpointError, match=r"needs httpx \(the \[llm\] extra\)"):
        EndpointBackend("http://127.0.0.1:9", model="m")


def test_endpoint_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv("QUOKKA_ENDPOINT", "http://127.0.0.1:9/v1")
    assert EndpointBackend().base == "http://127.0.0.1:9/v1"
    monkeypatch.delenv("QUOKKA_ENDPOINT")
    with pytest.raises(EndpointError, match="QUOKKA_ENDPOINT"):
        EndpointBackend()


def test_chat_server_rejects_bad_requests():
    import urllib.error
    import urllib.request

    with ChatServer(Script([GOOD])) as server:
        for payload in [
            b"[]",
            b'{"messages": []}',
            b'{"messages": [{"role": "user", "content": "x"}], "n": 1000}',
        ]:
            req = urllib.request.Request(f"{server.url}/v1/chat/completions", data=payload, method="POST")
            with pytest.raises(urllib.error.HTTPError) as info:
                urllib.request.build_opener(urllib.request.ProxyHandler({})).open(req, timeout=5)
            assert info.value.code == 400


def test_proposer_asks_again_only_with_new_counterexamples(program):
    script = Script([GOOD])
    with ChatServer(script) as server:
        proposer = LLMProposer(EndpointBackend(server.url), LLMConfig(samples=2))
        first = proposer.propose(context(program))
        again = proposer.propose(context(program, seed=1))
        loop = program.loops[0].id
        feedback = proposer.propose(context(program, seed=2, ctis={loop: ({"n": 4, "i": 1, "s": 5},)}))
    assert [c.text for c in first] == ["s == 3*i", "i <= n"]
    assert again == [] and feedback == []  # the same answers again: nothing new
    assert len(script.requests) == 2
    assert "i = 1, s = 5" in script.requests[1][0][-1]["content"]
    assert script.requests[1][1].seed == 2


def test_make_llm_proposer_from_settings(tmp_path, monkeypatch):
    monkeypatch.delenv("QUOKKA_ENDPOINT", raising=False)
    with pytest.raises(ModelError, match="not found"):
        make_llm_proposer(ModelSettings(model=str(tmp_path / "missing")))
    with pytest.raises(QuokkaError, match="either"):
        make_llm_proposer(ModelSettings(model=str(tmp_path), endpoint="http://127.0.0.1:9"))
    with pytest.raises(EndpointError):
        make_llm_proposer(ModelSettings())
    proposer = make_llm_proposer(ModelSettings(endpoint="http://127.0.0.1:9", completion=False))
    assert isinstance(proposer, LLMProposer) and proposer.name == "llm"
    wrapped = make_llm_proposer(ModelSettings(endpoint="http://127.0.0.1:9", samples=3, prompt="quokka-cot"))
    assert wrapped.name == "llm" and wrapped.inner.config.samples == 3
    assert wrapped.inner.config.prompt.variant == "quokka-cot"
    with pytest.raises(QuokkaError, match="llm_few_shot"):
        ModelSettings(endpoint="http://127.0.0.1:9").with_(few_shot="two")
