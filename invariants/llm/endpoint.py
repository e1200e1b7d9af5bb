"""Any OpenAI-compatible server (vLLM, SGLang, llama.cpp, OpenAI) as a backend, over httpx.

`POST {base}/v1/chat/completions` with `n` samples; servers that return fewer choices than asked
(llama.cpp ignores `n`) are asked again, at most `n` times in all. The base URL and the key come
from the arguments or from `QUOKKA_ENDPOINT` / `OPENAI_API_KEY`; the model name from the argument,
`QUOKKA_MODEL_NAME`, or else the first model the server lists under `/v1/models`.

An endpoint that cannot be reached (no connection: refused, unknown host, connect timeout) is
not tried again by the same backend for `RETRY_UNREACHABLE_S`: calls in between raise the failure
at once, so a verify run spends its budget on other proposers, not on the network once per round.

httpx comes with the [llm] extra; it is imported when a backend is made, so that a plain install
can still load this module (and says what is missing when an endpoint is asked for).
"""

from __future__ import annotations

import json
import os
import ssl
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from .backend import EndpointError, Message, SampleRequest

if TYPE_CHECKING:
    import httpx

ENV_ENDPOINT = "QUOKKA_ENDPOINT"
ENV_KEY = "OPENAI_API_KEY"
ENV_MODEL = "QUOKKA_MODEL_NAME"
MAX_RESPONSE_BYTES = 16 << 20
ERROR_EXCERPT = 300
LOOPBACK = ("127.0.0.1", "localhost", "::1")
RETRY_UNREACHABLE_S = 60.0


def api_base(url: str) -> str:
    """The `.../v1` base of an endpoint given as `http://host:port`, `.../v1` or `.../v1/chat/completions`."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise EndpointError(f"endpoint must be an http(s) URL, got {url!r}")
    path = parts.path.rstrip("/").removesuffix("/chat/completions")
    if not path.endswith("/v1"):
        path += "/v1"
    return f"{parts.scheme}://{parts.netloc}{path}"


def _client(base: str) -> httpx.Client:
    try:
        import httpx
    except ImportError as exc:
        raise EndpointError(f"the endpoint backend needs httpx (the [llm] extra): {exc}") from exc
    # As urllib did: a connection per request (no idle sockets left to a server that closes them),
    # the system's CA certificates (not certifi's), and a local server asked directly, never
    # through the environment's proxy.
    return httpx.Client(
        follow_redirects=True,
        limits=httpx.Limits(max_keepalive_connections=0),
        verify=ssl.create_default_context(),
        trust_env=urlsplit(base).hostname not in LOOPBACK,
    )


def _read(response: httpx.Response, limit: int) -> bytes:
    """The first `limit` + 1 bytes of the body at most (so that a longer one shows)."""
    data = bytearray()
    for chunk in response.iter_bytes():
        data += chunk
        if len(data) > limit:
            break
    return bytes(data[: limit + 1])


def _json(data: bytes, url: str) -> Any:
    if len(data) > MAX_RESPONSE_BYTES:
        raise EndpointError(f"{url}: answer larger than {MAX_RESPONSE_BYTES} bytes")
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise EndpointError(f"{url}: the answer is not JSON: {exc}") from exc


def _http_error(url: str, response: httpx.Response) -> EndpointError:
    body = _read(response, ERROR_EXCERPT)[:ERROR_EXCERPT].decode("utf-8", "replace")
    return EndpointError(f"{url}: HTTP {response.status_code} {response.reason_phrase}: {body}".rstrip(": "))


def _choices(answer: Any, url: str) -> list[str]:
    """The `message.content` texts of a chat-completions answer."""
    if not isinstance(answer, dict) or not isinstance(answer.get("choices"), list):
        raise EndpointError(f"{url}: the answer has no 'choices' list")
    out = []
    for choice in answer["choices"]:
        message = choice.get("message") if isinstance(choice, dict) else None
        content = message.get("content") if isinstance(message, dict) else None
        out.append(content if isinstance(content, str) else "")
    return out


class EndpointUnreachable(EndpointError):
    """No connection to the endpoint could be made (as opposed to an error answer)."""


class EndpointBackend:
    """A `Backend` that asks an OpenAI-compatible chat-completions endpoint."""

    constrains = False  # `SampleRequest.grammar` is not sent

    def __init__(self, url: str | None = None, api_key: str | None = None, model: str | None = None) -> None:
        url = url or os.environ.get(ENV_ENDPOINT)
        if not url:
            raise EndpointError(f"no endpoint given (set --endpoint or {ENV_ENDPOINT})")
        self.base = api_base(url)
        self.api_key = api_key or os.environ.get(ENV_KEY)
        self.model = model or os.environ.get(ENV_MODEL)
        self.client = _client(self.base)
        self._unreachable: tuple[str, float] | None = None  # (failure, when)

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        return headers

    def _call(self, path: str, body: Mapping[str, Any] | None, timeout_s: float) -> Any:
        if self._unreachable is not None and time.monotonic() - self._unreachable[1] < RETRY_UNREACHABLE_S:
            raise EndpointUnreachable(self._unreachable[0])
        try:
            return self._request(path, body, timeout_s)
        except EndpointUnreachable as exc:
            self._unreachable = (str(exc), time.monotonic())
            raise

    def _request(self, path: str, body: Mapping[str, Any] | None, timeout_s: float) -> Any:
        import httpx

        url = f"{self.base}{path}"
        data = None if body is None else json.dumps(body).encode("utf-8")
        method = "GET" if body is None else "POST"
        try:
            with self.client.stream(
                method, url, content=data, headers=self._headers(), timeout=max(timeout_s, 0.1)
            ) as response:
                if not response.is_success:
                    raise _http_error(url, response)
                return _json(_read(response, MAX_RESPONSE_BYTES), url)
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            raise EndpointUnreachable(f"cannot reach the endpoint {url}: {exc}") from exc
        except httpx.TimeoutException as exc:
            raise EndpointError(f"{url}: no answer within {timeout_s:.1f} s") from exc
        except httpx.HTTPError as exc:
            raise EndpointError(f"{url}: connection failed: {exc}") from exc

    def model_name(self, timeout_s: float = 10.0) -> str:
        """The configured model name, else the first one the server lists, else "default"."""
        if self.model is None:
            listing = self._call("/models", None, timeout_s)
            models = listing.get("data") if isinstance(listing, dict) else None
            first = models[0] if isinstance(models, list) and models else None
            self.model = str(first["id"]) if isinstance(first, dict) and "id" in first else "default"
        return self.model

    def _body(self, messages: Sequence[Message], request: SampleRequest, n: int, seed: int) -> dict[str, Any]:
        return {
            "model": self.model_name(request.timeout_s),
            "messages": list(messages),
            "n": n,
            "temperature": request.temperature,
            "top_p": request.top_p,
            "max_tokens": request.max_new_tokens,
            "seed": seed,
        }

    def sample(self, messages: Sequence[Message], request: SampleRequest) -> list[str]:
        """`request.n` answers; fewer only when the time runs out."""
        deadline = time.monotonic() + request.timeout_s
        answers: list[str] = []
        for attempt in range(request.n):
            remaining = deadline - time.monotonic()
            if len(answers) >= request.n or (answers and remaining <= 0):
                break
            body = self._body(messages, request, request.n - len(answers), request.seed + attempt)
            answers += _choices(
                self._call("/chat/completions", body, remaining), f"{self.base}/chat/completions"
            )
        return answers[: request.n]
