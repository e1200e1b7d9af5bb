"""The pygls wiring: LSP messages in, the pure presentation functions' answers out."""

from __future__ import annotations

import asyncio
import itertools
import logging
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcContentModified, JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer

from .actions import (
    CMD_COPY_INVARIANT,
    CMD_SHOW_RESULT,
    CMD_VERIFY,
    CMD_VERIFY_WITH_MODEL,
    code_actions,
    code_lenses,
)
from .cache import ResultCache
from .diagnostics import diagnostics
from .hints import hover, inlay_hints, resolve_inlay_hint
from .model import Outcome
from .runner import Runner
from .scheduler import Scheduler, uri_to_path
from .settings import DEFAULT_COMMAND, Settings, parse_settings
from .text import SourceText
from .view import DocView, summary

log = logging.getLogger(__name__)
VERIFY_METHOD = "quokka/verify"
PROGRESS_CREATE_WAIT_S = 2.0


def _version() -> str:
    try:
        return version("quokka-verifier")
    except PackageNotFoundError:
        return "unknown"


class QuokkaServer(LanguageServer):
    """A LanguageServer that owns a scheduler, which owns the verifier processes."""

    def __init__(self, cache: ResultCache | None, command: tuple[str, ...]) -> None:
        super().__init__("quokka", _version(), text_document_sync_kind=lsp.TextDocumentSyncKind.Incremental)
        self.runner = Runner()
        self.scheduler = Scheduler(self.runner, cache, LspHooks(self))
        self.base_settings = Settings(command=command)
        self.exiting = False  # after `exit` the output stream is closed: nothing may be sent
        self._tokens = itertools.count(1)

    def report_server_error(self, error: Exception, source: Any) -> None:
        if self.exiting:
            log.info("after exit: %s", error)
            return
        super().report_server_error(error, source)

    @property
    def encoding(self) -> str:
        kind = self.workspace.position_encoding
        return str(kind.value if isinstance(kind, lsp.PositionEncodingKind) else kind or "utf-16")

    @property
    def settings(self) -> Settings:
        return self.scheduler.settings

    def view(self, uri: str) -> DocView | None:
        return self.scheduler.view(uri, self.encoding)

    def next_token(self) -> str:
        return f"quokka-verify-{next(self._tokens)}"

    def capability(self, *path: str) -> bool:
        """Whether the client announced the capability at `path` (e.g. "window", "work_done_progress")."""
        node: Any = self.client_capabilities
        for name in path:
            node = getattr(node, name, None)
            if node is None:
                return False
        return bool(node)


class LspHooks:
    """The scheduler's way to talk to the client."""

    def __init__(self, server: QuokkaServer) -> None:
        self.server = server

    def publish(self, uri: str, version: int, text: str, outcome: Outcome) -> None:
        if self.server.exiting:
            return
        source = SourceText(text, self.server.encoding)
        found = diagnostics(uri, source, outcome, self.server.settings.proven_diagnostics)
        self.server.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri, found, version))
        self.refresh()

    def refresh(self) -> None:
        if self.server.capability("workspace", "inlay_hint", "refresh_support"):
            self.server.workspace_inlay_hint_refresh(None)
        self.state_changed("")

    def state_changed(self, uri: str) -> None:
        if not self.server.exiting and self.server.capability("workspace", "code_lens", "refresh_support"):
            self.server.workspace_code_lens_refresh(None)

    async def progress_begin(self, uri: str) -> str | None:
        if not self.server.capability("window", "work_done_progress"):
            return None
        token = self.server.next_token()
        try:
            # shielded: a run cancelled meanwhile must not cancel pygls' future for the client's answer
            created = asyncio.ensure_future(self.server.work_done_progress.create_async(token))
            await asyncio.wait_for(asyncio.shield(created), PROGRESS_CREATE_WAIT_S)
        except asyncio.CancelledError:
            created.add_done_callback(lambda _: self.server.work_done_progress.tokens.pop(token, None))
            raise
        except Exception:
            log.warning("the client did not create progress token %s", token)
            return None
        name = uri.rsplit("/", 1)[-1]
        self.server.work_done_progress.begin(token, lsp.WorkDoneProgressBegin(
            title="Quokka", message=f"verifying {name}", cancellable=True))
        return token

    def progress_end(self, token: str | None, message: str) -> None:
        if token is not None and not self.server.exiting:
            self.server.work_done_progress.end(token, lsp.WorkDoneProgressEnd(message=message))
            self.server.work_done_progress.tokens.pop(token, None)


def build_server(cache: ResultCache | None, command: tuple[str, ...] = DEFAULT_COMMAND) -> QuokkaServer:
    server = QuokkaServer(cache, command)
    _register_lifecycle(server)
    _register_sync(server)
    _register_features(server)
    _register_commands(server)
    return server


def serve_stdio(cache: ResultCache | None, command: tuple[str, ...] = DEFAULT_COMMAND) -> None:
    server = build_server(cache, command)
    try:
        server.start_io()
    finally:
        server.runner.kill_all()


# --------------------------------------------------------------------------------- lifecycle


def _register_lifecycle(server: QuokkaServer) -> None:
    @server.feature(lsp.INITIALIZE)
    def initialize(ls: QuokkaServer, params: lsp.InitializeParams) -> None:
        ls.base_settings, problems = parse_settings(params.initialization_options, ls.base_settings)
        ls.scheduler.settings = ls.base_settings  # until `initialized` pulls workspace/configuration
        _report_problems(ls, problems)

    @server.feature(lsp.INITIALIZED)
    async def initialized(ls: QuokkaServer, params: lsp.InitializedParams) -> None:
        await _load_settings(ls)

    @server.feature(lsp.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def changed_configuration(ls: QuokkaServer, params: lsp.DidChangeConfigurationParams) -> None:
        await _load_settings(ls, params.settings)
        for uri in list(ls.scheduler.docs):
            doc = ls.scheduler.docs[uri]
            if doc.outcome is not None and doc.outcome_text == doc.text:
                ls.scheduler.hooks.publish(uri, doc.version, doc.text, doc.outcome)

    @server.feature(lsp.SHUTDOWN)
    def shutdown(ls: QuokkaServer, params: None) -> None:
        ls.scheduler.cancel_all()

    @server.feature(lsp.EXIT)
    def on_exit(ls: QuokkaServer, params: None) -> None:
        ls.exiting = True
        ls.scheduler.cancel_all()

    @server.feature(lsp.WINDOW_WORK_DONE_PROGRESS_CANCEL)
    def cancel_progress(ls: QuokkaServer, params: lsp.WorkDoneProgressCancelParams) -> None:
        ls.scheduler.cancel_token(str(params.token))


async def _load_settings(ls: QuokkaServer, pushed: Any = None) -> None:
    raw: Any = pushed
    if ls.capability("workspace", "configuration"):
        try:
            answer = await ls.workspace_configuration_async(
                lsp.ConfigurationParams(items=[lsp.ConfigurationItem(section="quokka")]))
            raw = answer[0] if answer else None
        except Exception:
            log.warning("workspace/configuration failed; keeping the current settings")
    settings, problems = parse_settings(raw, ls.base_settings)
    ls.scheduler.set_settings(settings)
    _report_problems(ls, problems)


def _report_problems(ls: QuokkaServer, problems: tuple[str, ...]) -> None:
    for problem in problems:
        ls.window_show_message(lsp.ShowMessageParams(lsp.MessageType.Warning, f"Quokka: {problem}"))


# --------------------------------------------------------------------------------- text sync


def _register_sync(server: QuokkaServer) -> None:
    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: QuokkaServer, params: lsp.DidOpenTextDocumentParams) -> None:
        doc = params.text_document
        ls.scheduler.opened(doc.uri, doc.version, doc.text)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: QuokkaServer, params: lsp.DidChangeTextDocumentParams) -> None:
        doc = ls.workspace.get_text_document(params.text_document.uri)
        ls.scheduler.changed(doc.uri, params.text_document.version, doc.source)

    @server.feature(lsp.TEXT_DOCUMENT_DID_SAVE, lsp.SaveOptions(include_text=False))
    def did_save(ls: QuokkaServer, params: lsp.DidSaveTextDocumentParams) -> None:
        ls.scheduler.saved(params.text_document.uri)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: QuokkaServer, params: lsp.DidCloseTextDocumentParams) -> None:
        ls.scheduler.closed(params.text_document.uri)
        ls.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(params.text_document.uri, []))


# --------------------------------------------------------------------------------- features


def _register_features(server: QuokkaServer) -> None:
    @server.feature(lsp.TEXT_DOCUMENT_INLAY_HINT, lsp.InlayHintOptions(resolve_provider=True))
    def inlay_hint(ls: QuokkaServer, params: lsp.InlayHintParams) -> list[lsp.InlayHint]:
        view = ls.view(params.text_document.uri)
        if view is None or not ls.settings.show_proven_hints:
            return []
        return inlay_hints(view, params.range)

    @server.feature(lsp.INLAY_HINT_RESOLVE)
    def inlay_hint_resolve(ls: QuokkaServer, hint: lsp.InlayHint) -> lsp.InlayHint:
        data: Any = hint.data
        uri = data.get("uri") if isinstance(data, dict) else None
        view = ls.view(uri) if isinstance(uri, str) else None
        return resolve_inlay_hint(view, hint) if view is not None else hint

    @server.feature(lsp.TEXT_DOCUMENT_HOVER)
    def on_hover(ls: QuokkaServer, params: lsp.HoverParams) -> lsp.Hover | None:
        view = ls.view(params.text_document.uri)
        return hover(view, params.position) if view is not None else None

    @server.feature(lsp.TEXT_DOCUMENT_CODE_ACTION, lsp.CodeActionOptions(
        code_action_kinds=[lsp.CodeActionKind.RefactorRewrite]))
    def on_code_action(ls: QuokkaServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction | lsp.Command]:
        view = ls.view(params.text_document.uri)
        return code_actions(view, params.range) if view is not None else []

    @server.feature(lsp.TEXT_DOCUMENT_CODE_LENS)
    def on_code_lens(ls: QuokkaServer, params: lsp.CodeLensParams) -> list[lsp.CodeLens]:
        view = ls.view(params.text_document.uri)
        return code_lenses(view) if view is not None else []

    @server.feature(VERIFY_METHOD)
    async def verify_request(ls: QuokkaServer, params: Any) -> dict[str, Any]:
        return await _verify_request(ls, params)


async def _verify_request(ls: QuokkaServer, params: Any) -> dict[str, Any]:
    """`quokka/verify {textDocument: {uri}, force?, withModel?}` → the Result JSON (+ status, cached)."""
    uri = _param_uri(params)
    force, with_model = bool(_get(params, "force")), bool(_get(params, "withModel"))
    doc = ls.scheduler.docs.get(uri)
    if doc is None:
        outcome = await ls.scheduler.outcome_for(uri, _read(uri), force, with_model)
    else:
        version = doc.version
        task = ls.scheduler.schedule(uri, force=force, with_model=with_model)
        try:
            done = await task
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None and current.cancelling():
                raise
            raise JsonRpcContentModified(f"{uri} changed while it was verified") from None
        current_doc = ls.scheduler.docs.get(uri)
        if done is None or current_doc is None or current_doc.version != version:
            raise JsonRpcContentModified(f"{uri} changed while it was verified")
        outcome = done
    return {**outcome.result.to_json(), "status": outcome.status, "cached": outcome.from_cache, "uri": uri}


def _get(params: Any, name: str) -> Any:
    return params.get(name) if isinstance(params, dict) else getattr(params, name, None)


def _param_uri(params: Any) -> str:
    uri = _get(_get(params, "textDocument"), "uri") or _get(params, "uri")
    if not isinstance(uri, str):
        raise JsonRpcInvalidParams("quokka/verify expects {textDocument: {uri}}")
    return uri


def _read(uri: str) -> str:
    path = uri_to_path(uri)
    try:
        return Path(path).read_text(encoding="utf-8") if path is not None else ""
    except (OSError, UnicodeDecodeError) as exc:
        raise JsonRpcInvalidParams(f"{uri} is not open and cannot be read: {exc}") from exc


# --------------------------------------------------------------------------------- commands


def _register_commands(server: QuokkaServer) -> None:
    @server.command(CMD_VERIFY)
    def verify(ls: QuokkaServer, *args: Any) -> None:
        _schedule_command(ls, args, with_model=False)

    @server.command(CMD_VERIFY_WITH_MODEL)
    def verify_with_model(ls: QuokkaServer, *args: Any) -> None:
        if not ls.settings.has_model:
            _show(ls, "Quokka: set quokka.model (a model directory) or quokka.endpoint to verify with a "
                  "model", lsp.MessageType.Warning)
            return
        _schedule_command(ls, args, with_model=True)

    @server.command(CMD_COPY_INVARIANT)
    def copy_invariant(ls: QuokkaServer, *args: Any) -> str:
        text = str(args[0]) if args else ""
        _show(ls, f"Quokka invariant: {text}", lsp.MessageType.Info)
        return text

    @server.command(CMD_SHOW_RESULT)
    def show_result(ls: QuokkaServer, *args: Any) -> str:
        view = ls.view(str(args[0])) if args else None
        outcome = view.outcome if view is not None else None
        message = summary(outcome) if outcome is not None else "not verified yet"
        _show(ls, f"Quokka: {message}", lsp.MessageType.Info)
        return message


def _schedule_command(ls: QuokkaServer, args: tuple[Any, ...], with_model: bool) -> None:
    uri = str(args[0]) if args else ""
    if uri not in ls.scheduler.docs:
        raise JsonRpcInvalidParams(f"not an open document: {uri!r}")
    ls.scheduler.schedule(uri, force=True, with_model=with_model)


def _show(ls: QuokkaServer, message: str, kind: lsp.MessageType) -> None:
    ls.window_show_message(lsp.ShowMessageParams(kind, message))
