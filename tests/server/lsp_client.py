"""A pytest-lsp client for `quokka lsp` that records every publication (process-tree helpers: `proctree`)."""

from __future__ import annotations

import asyncio
import os
import shlex
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from pygls.protocol import default_converter
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

FAKE_VERIFY = (sys.executable, str(Path(__file__).with_name("fake_verify.py")))
SERVER = (sys.executable, "-m", "quokka.server")


class RecordingClient(LanguageClient):
    published: list[lsp.PublishDiagnosticsParams]
    shown: list[str]


def _publish(client: RecordingClient, params: lsp.PublishDiagnosticsParams) -> None:
    client.published.append(params)
    client.diagnostics[params.uri] = params.diagnostics


def _show_message(client: RecordingClient, params: lsp.ShowMessageParams) -> None:
    client.shown.append(params.message)


def _refresh(client: RecordingClient, params: None) -> None:
    return None


def make_client() -> RecordingClient:
    client = RecordingClient(converter_factory=default_converter)
    client.published, client.shown = [], []
    features: dict[str, Any] = {
        **DEFAULT_CLIENT_FEATURES,
        lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS: _publish,
        lsp.WINDOW_SHOW_MESSAGE: _show_message,
        lsp.WORKSPACE_INLAY_HINT_REFRESH: _refresh,
        lsp.WORKSPACE_CODE_LENS_REFRESH: _refresh,
    }
    register_lsp_features(client, features)
    return client


async def start_server(tmp_path: Path, settings: dict[str, Any], cache: bool = True,
                       fake: bool = False) -> RecordingClient:
    """A server on stdio, initialized with Neovim 0.11's capabilities and `quokka.*` = `settings`."""
    logs = tmp_path / "fake-log"
    logs.mkdir(exist_ok=True)
    env = {**os.environ, "FAKE_VERIFY_LOG": str(logs)}
    args = ["--cache", str(tmp_path / "cache.sqlite")] if cache else ["--no-cache"]
    args += ["--log-file", str(tmp_path / "server.log"), "--log-level", "DEBUG"]
    if fake:
        args += ["--verifier", shlex.join(FAKE_VERIFY)]
    config = ClientServerConfig(server_command=[*SERVER, *args], client_factory=make_client, server_env=env)
    client = await config.start()
    assert isinstance(client, RecordingClient)
    client.set_configuration(settings, section="quokka")
    await client.initialize_session(lsp.InitializeParams(
        capabilities=client_capabilities("neovim@v0.11.0"), root_uri=tmp_path.as_uri()))
    return client


async def stop_server(client: LanguageClient) -> None:
    await client.shutdown_session()
    await client.stop()


@asynccontextmanager
async def running_server(tmp_path: Path, settings: dict[str, Any], cache: bool = True,
                         fake: bool = False) -> AsyncIterator[RecordingClient]:
    """`start_server`'s client for the block; the server is shut down when the block is left."""
    client = await start_server(tmp_path, settings, cache=cache, fake=fake)
    try:
        yield client
    finally:
        await stop_server(client)


def open_doc(client: LanguageClient, path: Path, text: str | None = None, version: int = 1) -> str:
    uri = path.as_uri()
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(
        uri=uri, language_id="c", version=version, text=text if text is not None else path.read_text())))
    return uri


def open_new(client: LanguageClient, path: Path, text: str) -> str:
    """Write `text` to `path` and open it (the server may read the file as well as the text)."""
    path.write_text(text)
    return open_doc(client, path)


def change_doc(client: LanguageClient, uri: str, version: int, text: str) -> None:
    client.text_document_did_change(lsp.DidChangeTextDocumentParams(
        lsp.VersionedTextDocumentIdentifier(uri=uri, version=version),
        [lsp.TextDocumentContentChangeWholeDocument(text=text)]))


async def wait_for_publication(client: RecordingClient, uri: str, version: int | None = None,
                               timeout: float = 30.0) -> lsp.PublishDiagnosticsParams:
    """The first publication for `uri` (at `version`, when given), waiting for it."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for params in client.published:
            if params.uri == uri and (version is None or params.version == version):
                return params
        await asyncio.sleep(0.01)
    raise AssertionError(f"no diagnostics for {uri} version {version} within {timeout} s: {client.published}")


def server_pid(client: LanguageClient) -> int:
    assert client._server is not None
    return client._server.pid


async def wait_until(predicate: Any, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        await asyncio.sleep(0.05)
    return bool(predicate())
