"""The document store and the background verification of its snapshots.

Handlers only record edits here. Each document has at most one verification task: a newer version
or a cancel kills the running one, and a finished run whose document changed in the meantime is
dropped (its outcome still goes to the cache: it is right for the text it verified).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol
from urllib.parse import unquote, urlparse

from .cache import ResultCache, cache_key
from .model import STATUS_SKIPPED, Outcome, failed
from .runner import Job, Runner, task_data_model
from .settings import Settings
from .text import SourceText, main_function
from .view import DocView

log = logging.getLogger(__name__)
SETTINGS_WAIT_S = 3.0
NOT_A_PROGRAM = "no `main` function: not an SV-COMP program, nothing to verify"


class Hooks(Protocol):
    """What the scheduler tells the editor (implemented by the LSP layer)."""

    def publish(self, uri: str, version: int, text: str, outcome: Outcome) -> None: ...

    def state_changed(self, uri: str) -> None: ...

    def progress_begin(self, uri: str) -> Awaitable[str | None]: ...

    def progress_end(self, token: str | None, message: str) -> None: ...


@dataclass
class DocState:
    uri: str
    version: int
    text: str
    outcome: Outcome | None = None
    outcome_text: str | None = None
    task: asyncio.Task[Outcome | None] | None = None

    @property
    def running(self) -> bool:
        return self.task is not None and not self.task.done()


def uri_to_path(uri: str) -> Path | None:
    parsed = urlparse(uri)
    return Path(unquote(parsed.path)) if parsed.scheme == "file" else None


class Scheduler:
    def __init__(self, runner: Runner, cache: ResultCache | None, hooks: Hooks) -> None:
        self.runner = runner
        self.cache = cache
        self.hooks = hooks
        self.docs: dict[str, DocState] = {}
        self.settings = Settings()
        self._settings_ready = asyncio.Event()
        self._slots: tuple[int, asyncio.Semaphore] | None = None
        self._tokens: dict[str, str] = {}

    # ----------------------------------------------------------------- settings and views

    def set_settings(self, settings: Settings) -> None:
        self.settings = settings
        self._settings_ready.set()

    def view(self, uri: str, encoding: str = "utf-16") -> DocView | None:
        doc = self.docs.get(uri)
        if doc is None:
            return None
        return DocView(uri, SourceText(doc.text, encoding), doc.outcome, doc.outcome_text, doc.running)

    # ----------------------------------------------------------------- document events

    def opened(self, uri: str, version: int, text: str) -> None:
        self.cancel(uri)
        self.docs[uri] = DocState(uri, version, text)
        if self.settings.verify_on != "manual":
            self.schedule(uri)

    def changed(self, uri: str, version: int, text: str) -> None:
        doc = self.docs.get(uri)
        if doc is None:
            return
        doc.version, doc.text = version, text
        if self.settings.verify_on == "change":
            self.schedule(uri, delay_s=self.settings.debounce_ms / 1000)
        else:
            self.cancel(uri)

    def saved(self, uri: str, text: str | None = None) -> None:
        doc = self.docs.get(uri)
        if doc is None:
            return
        if text is not None and text != doc.text:
            doc.text = text
        if self.settings.verify_on != "manual":
            self.schedule(uri)

    def closed(self, uri: str) -> None:
        self.cancel(uri)
        self.docs.pop(uri, None)

    # ----------------------------------------------------------------- tasks

    def schedule(self, uri: str, delay_s: float = 0.0, force: bool = False,
                 with_model: bool = False) -> asyncio.Task[Outcome | None]:
        """Start verifying the current version of `uri`, replacing any run in progress."""
        doc = self.docs[uri]
        self.cancel(uri)
        job = self._guarded(doc.uri, doc.version, doc.text, delay_s, force, with_model)
        task = asyncio.ensure_future(job)
        doc.task = task
        task.add_done_callback(lambda done: self._finished(uri, done))
        return task

    def cancel(self, uri: str) -> None:
        doc = self.docs.get(uri)
        if doc is not None and doc.task is not None and not doc.task.done():
            doc.task.cancel()

    def cancel_token(self, token: str) -> bool:
        uri = self._tokens.get(token)
        if uri is None:
            return False
        self.cancel(uri)
        return True

    def cancel_all(self) -> None:
        for uri in list(self.docs):
            self.cancel(uri)
        self.runner.kill_all()

    def _finished(self, uri: str, task: asyncio.Task[Outcome | None]) -> None:
        doc = self.docs.get(uri)
        if doc is not None and doc.task is task:
            doc.task = None
            self.hooks.state_changed(uri)

    async def _guarded(self, uri: str, version: int, text: str, delay_s: float, force: bool,
                       with_model: bool) -> Outcome | None:
        try:
            if delay_s > 0:
                await asyncio.sleep(delay_s)
            outcome = await self.outcome_for(uri, text, force, with_model)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.exception("verification of %s failed", uri)
            outcome = failed(f"internal error in the language server: {exc!r}", uri)
        return self._deliver(uri, version, text, outcome)

    def _deliver(self, uri: str, version: int, text: str, outcome: Outcome) -> Outcome:
        doc = self.docs.get(uri)
        if doc is None or doc.version != version or doc.text != text:
            log.info("dropping the outcome for %s version %s: the document changed", uri, version)
            return outcome
        doc.outcome, doc.outcome_text = outcome, text
        self.hooks.publish(uri, version, text, outcome)
        return outcome

    async def outcome_for(self, uri: str, text: str, force: bool = False,
                          with_model: bool = False) -> Outcome:
        """Verify `text` (the contents of `uri`): from the cache, or by running the verifier."""
        await self._wait_for_settings()
        path = uri_to_path(uri)
        if main_function(SourceText(text)) is None:
            return failed(NOT_A_PROGRAM, str(path or uri), status=STATUS_SKIPPED)
        settings = self.settings
        args = settings.verify_args(with_model, task_data_model(path))
        key = cache_key(text, settings.command, args)
        cached = None if force or self.cache is None else self.cache.get(key)
        if cached is not None:
            return cached
        async with self._slot(), self._progress(uri):
            outcome = await self.runner.run(Job(text, path, settings.command, args, settings.wall_limit_s))
        if self.cache is not None:
            self.cache.put(key, outcome)
        return outcome

    async def _wait_for_settings(self) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._settings_ready.wait(), SETTINGS_WAIT_S)

    def _slot(self) -> asyncio.Semaphore:
        wanted = self.settings.max_parallel
        if self._slots is None or self._slots[0] != wanted:
            self._slots = (wanted, asyncio.Semaphore(wanted))
        return self._slots[1]

    @contextlib.asynccontextmanager
    async def _progress(self, uri: str) -> AsyncIterator[None]:
        self.hooks.state_changed(uri)
        token = await self.hooks.progress_begin(uri)
        if token is not None:
            self._tokens[token] = uri
        message = "cancelled"
        try:
            yield
            message = "done"
        finally:
            if token is not None:
                self._tokens.pop(token, None)
            self.hooks.progress_end(token, message)

