"""A minimal OpenAI-compatible chat-completions server (stdlib `http.server`) over any sampler.

`ChatServer(generate)` serves `POST /v1/chat/completions` and `GET /v1/models`; `model_server(DIR)`
serves a local transformers model (`quokka serve-model DIR`). Requests are handled one at a time
by the model (a lock), and bounded: body size, `n`, `max_tokens`.
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from collections.abc import Callable, Sequence
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from quokka.verifier.errors import QuokkaError

from .backend import Message, SampleRequest

Generate = Callable[[Sequence[Message], SampleRequest], list[str]]
MAX_BODY_BYTES = 4 << 20
MAX_N = 64
MAX_TOKENS = 4096


class BadRequest(QuokkaError):  # type: ignore[misc]  # mypy cannot follow the editable install
    """A chat-completions request the server cannot serve."""


def _number(body: dict[str, Any], key: str, default: float, low: float, high: float) -> float:
    value = body.get(key, default)
    if value is None:
        return default
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not low <= value <= high:
        raise BadRequest(f"'{key}' must be a number in [{low}, {high}]")
    return float(value)


def parse_request(body: Any) -> tuple[list[Message], SampleRequest]:
    """The messages and sampling settings of a request body (raises `BadRequest`)."""
    if not isinstance(body, dict):
        raise BadRequest("the request body must be a JSON object")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise BadRequest("'messages' must be a non-empty list")
    if not all(isinstance(m, dict) and isinstance(m.get("role"), str) and isinstance(m.get("content"), str)
               for m in messages):  # fmt: skip
        raise BadRequest("each message needs string 'role' and 'content'")
    request = SampleRequest(
        n=int(_number(body, "n", 1, 1, MAX_N)),
        temperature=_number(body, "temperature", 1.0, 0.0, 10.0),
        max_new_tokens=int(_number(body, "max_tokens", 256, 1, MAX_TOKENS)),
        seed=int(_number(body, "seed", 0, -(2**63), 2**63 - 1)),
        top_p=_number(body, "top_p", 1.0, 0.0, 1.0),
    )
    return [{"role": m["role"], "content": m["content"]} for m in messages], request


def completion_body(model: str, answers: Sequence[str]) -> dict[str, Any]:
    choices = [
        {"index": i, "message": {"role": "assistant", "content": a}, "finish_reason": "stop"}
        for i, a in enumerate(answers)
    ]
    return {"id": f"chatcmpl-{time.time_ns()}", "object": "chat.completion", "created": int(time.time()),
            "model": model, "choices": choices}  # fmt: skip


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], generate: Generate, model: str) -> None:
        super().__init__(address, _Handler)
        self.generate = generate
        self.model = model
        self.lock = threading.Lock()


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        return

    def _send(self, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _error(self, status: int, message: str) -> None:
        self._send(status, {"error": {"message": message, "type": "invalid_request_error"}})

    def do_GET(self) -> None:
        if self.path.rstrip("/") == "/v1/models":
            self._send(
                HTTPStatus.OK, {"object": "list", "data": [{"id": self.server.model, "object": "model"}]}
            )
        else:
            self._error(HTTPStatus.NOT_FOUND, f"no such path: {self.path}")

    def do_POST(self) -> None:
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._error(HTTPStatus.NOT_FOUND, f"no such path: {self.path}")
            return
        try:
            messages, request = parse_request(self._body())
            with self.server.lock:
                answers = self.server.generate(messages, request)
        except BadRequest as exc:
            self._error(HTTPStatus.BAD_REQUEST, str(exc))
            return
        except QuokkaError as exc:
            self._error(HTTPStatus.INTERNAL_SERVER_ERROR, str(exc))
            return
        self._send(HTTPStatus.OK, completion_body(self.server.model, answers))

    def _body(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        if not 0 < length <= MAX_BODY_BYTES:
            raise BadRequest(f"the request body must have 1..{MAX_BODY_BYTES} bytes")
        try:
            return json.loads(self.rfile.read(length).decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise BadRequest(f"the request body is not JSON: {exc}") from exc


class ChatServer:
    """A chat-completions server on `host:port` (port 0: any free one); `start()` runs it in a thread."""

    def __init__(
        self, generate: Generate, model: str = "quokka-local", host: str = "127.0.0.1", port: int = 0
    ) -> None:
        self._server = _Server((host, port), generate, model)
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> ChatServer:
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), name="quokka-chat-server", daemon=True
        )
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        self._server.serve_forever()

    def close(self) -> None:
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join()
        self._server.server_close()

    def __enter__(self) -> ChatServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()


def model_server(directory: str, host: str = "127.0.0.1", port: int = 0, dtype: str = "auto") -> ChatServer:
    """A `ChatServer` over the transformers model in `directory`, or the model of that name
    (`quokka model pull`), loaded now."""
    from .local import load_model
    from .registry import resolve_model

    found = resolve_model(directory)
    model = load_model(found.directory, dtype, adapter=found.adapter)
    return ChatServer(model.sample, model=str(directory), host=host, port=port)


def serve_command(args: argparse.Namespace) -> int:
    """`quokka serve-model` (its arguments: `cli_model.register_serve`)."""
    import sys

    try:
        server = model_server(args.directory, args.host, args.port, args.dtype)
    except QuokkaError as exc:
        sys.stderr.write(f"quokka serve-model: {exc}\n")
        return 2
    sys.stderr.write(f"serving {args.directory} at {server.url}/v1/chat/completions\n")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
    return 0
