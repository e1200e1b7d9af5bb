"""End-to-end over stdio with a stand-in verifier: scheduling, cancellation, bursts, processes, cache."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import time
from contextlib import AbstractAsyncContextManager
from pathlib import Path

import pytest
from lsp_client import (
    RecordingClient,
    change_doc,
    open_doc,
    open_new,
    running_server,
    server_pid,
    start_server,
    wait_for_publication,
    wait_until,
)
from lsp_samples import LINEAR
from lsprotocol import types as lsp
from proctree import alive, descendants
from pygls.exceptions import JsonRpcContentModified, JsonRpcException

pytestmark = pytest.mark.asyncio

FAKE_SETTINGS = {"timeout": 20}


def started_runs(tmp_path: Path) -> list[tuple[int, dict]]:
    return [(int(p.stem), json.loads(p.read_text())) for p in sorted((tmp_path / "fake-log").glob("*.start"))]


def all_pids(tmp_path: Path) -> list[int]:
    return [pid for pid, record in started_runs(tmp_path) for pid in [pid, *record["children"]]]


def fake_server(tmp_path: Path, **settings: object) -> AbstractAsyncContextManager[RecordingClient]:
    """A server running the stand-in verifier, with FAKE_SETTINGS and `settings`."""
    return running_server(tmp_path, {**FAKE_SETTINGS, **settings}, fake=True)


async def test_burst_of_50_edits_publishes_only_the_last_version_and_leaves_no_process(tmp_path):
    async with fake_server(tmp_path, verifyOn="change", debounceMs=0) as client:
        text = "// FAKE sleep=0.6 child=1\n" + LINEAR
        uri = open_new(client, tmp_path / "linear.c", text)
        for version in range(2, 52):
            await asyncio.sleep(0.005)
            change_doc(client, uri, version, text + f"// edit {version}\n")
        published = await wait_for_publication(client, uri, 51)
        await asyncio.sleep(1.0)  # anything stale would arrive by now
        assert [p.version for p in client.published] == [51]
        assert published.diagnostics and published.diagnostics[0].severity == lsp.DiagnosticSeverity.Hint
        assert await wait_until(lambda: descendants(server_pid(client)) == [], 5)
        assert all_pids(tmp_path) and not any(alive(p) for p in all_pids(tmp_path))
        assert started_runs(tmp_path)[-1][1]["text"].endswith("// edit 51\n")
        hints = await client.text_document_inlay_hint_async(lsp.InlayHintParams(
            lsp.TextDocumentIdentifier(uri), lsp.Range(lsp.Position(0, 0), lsp.Position(100, 0))))
        assert hints is not None and [h.label for h in hints] == ["⊢ fake_10 >= 0"]


async def test_cancel_request_kills_a_long_quokka_verify(tmp_path):
    async with fake_server(tmp_path, verifyOn="manual") as client:
        uri = open_new(client, tmp_path / "slow.c", "// FAKE sleep=60 child=1\n" + LINEAR)
        future = client.protocol.send_request("quokka/verify", {"textDocument": {"uri": uri}}, msg_id="v-1")
        assert await wait_until(lambda: [r["children"] for _, r in started_runs(tmp_path)] not in ([], [[]]))
        pids = all_pids(tmp_path)
        assert all(alive(p) for p in pids)
        client.protocol.notify("$/cancelRequest", lsp.CancelParams(id="v-1"))
        with pytest.raises(JsonRpcException) as raised:
            await asyncio.wait_for(asyncio.wrap_future(future), 10)
        assert raised.value.code == -32800  # RequestCancelled
        assert await wait_until(lambda: not any(alive(p) for p in pids), 5)
        assert descendants(server_pid(client)) == []
        assert client.published == []


async def test_a_server_killed_with_sigkill_takes_its_running_verifier_with_it(tmp_path):
    client = await start_server(tmp_path, {**FAKE_SETTINGS, "verifyOn": "manual"}, fake=True)
    try:
        uri = open_new(client, tmp_path / "slow.c", "// FAKE sleep=60\n" + LINEAR)
        client.protocol.send_request("quokka/verify", {"textDocument": {"uri": uri}}, msg_id="v-1")
        assert await wait_until(lambda: started_runs(tmp_path) != [])
        ((verifier, _),) = started_runs(tmp_path)
        assert alive(verifier)
        os.kill(server_pid(client), signal.SIGKILL)
        assert await wait_until(lambda: not alive(verifier), 5)
    finally:
        with contextlib.suppress(Exception):
            await client.stop()


async def test_quokka_verify_returns_the_result_json_and_content_modified_when_superseded(tmp_path):
    async with fake_server(tmp_path, verifyOn="manual") as client:
        uri = open_new(client, tmp_path / "prog.c", LINEAR)
        answer = await client.protocol.send_request_async("quokka/verify", {"textDocument": {"uri": uri}})
        result = answer._asdict() if hasattr(answer, "_asdict") else answer
        assert result["verdict"] == "true" and result["status"] == "ok" and result["cached"] is False
        assert (await wait_for_publication(client, uri, 1)).diagnostics
        change_doc(client, uri, 2, "// FAKE sleep=5\n" + LINEAR)
        pending = client.protocol.send_request("quokka/verify", {"textDocument": {"uri": uri}, "force": True})
        assert await wait_until(lambda: len(started_runs(tmp_path)) == 2)
        change_doc(client, uri, 3, "// FAKE sleep=5\n" + LINEAR + "\n")
        client.workspace_execute_command(lsp.ExecuteCommandParams("quokka.verify", [uri]))
        with pytest.raises(JsonRpcException) as raised:
            await asyncio.wait_for(asyncio.wrap_future(pending), 10)
        assert raised.value.code == JsonRpcContentModified.CODE


async def test_progress_is_reported_and_cancellable(tmp_path):
    async with fake_server(tmp_path) as client:
        open_new(client, tmp_path / "slow.c", "// FAKE sleep=60\n" + LINEAR)
        assert await wait_until(lambda: any(client.progress_reports.values()) and started_runs(tmp_path))
        token, reports = next(iter(client.progress_reports.items()))
        begin = reports[0]
        assert isinstance(begin, lsp.WorkDoneProgressBegin) and begin.cancellable and begin.title == "Quokka"
        (pid, _), = started_runs(tmp_path)
        client.window_work_done_progress_cancel(lsp.WorkDoneProgressCancelParams(token))
        assert await wait_until(lambda: not alive(pid), 5)
        ended = lambda: isinstance(client.progress_reports[token][-1], lsp.WorkDoneProgressEnd)  # noqa: E731
        assert await wait_until(ended, 5)
        assert client.published == []


async def test_several_documents_close_and_a_text_that_is_no_program(tmp_path):
    async with fake_server(tmp_path) as client:
        uris = [open_new(client, tmp_path / name, "// FAKE sleep=0.3\n" + LINEAR) for name in ("a.c", "b.c")]
        notes_uri = open_new(client, tmp_path / "notes.c", "int helper(int x) { return x + 1; }\n")
        for uri in uris:
            assert (await wait_for_publication(client, uri)).diagnostics
        (skipped,) = (await wait_for_publication(client, notes_uri)).diagnostics
        assert skipped.severity == lsp.DiagnosticSeverity.Information
        assert "not an SV-COMP program" in skipped.message
        assert len(started_runs(tmp_path)) == 2  # nothing was run for notes.c
        client.text_document_did_close(lsp.DidCloseTextDocumentParams(lsp.TextDocumentIdentifier(uris[0])))
        assert await wait_until(lambda: len(client.diagnostics.get(uris[0], [None])) == 0)
        hover = await client.text_document_hover_async(lsp.HoverParams(
            lsp.TextDocumentIdentifier(uris[0]), lsp.Position(9, 5)))
        assert hover is None


async def test_verifier_crash_is_a_warning_and_the_cache_makes_reopening_instant(tmp_path):
    async with fake_server(tmp_path) as client:
        crash = open_new(client, tmp_path / "crash.c", "// FAKE exit=3\n" + LINEAR)
        (warning,) = (await wait_for_publication(client, crash)).diagnostics
        assert warning.severity == lsp.DiagnosticSeverity.Warning and "code 3" in warning.message
        good = tmp_path / "good.c"
        uri = open_new(client, good, "// FAKE sleep=0.5\n" + LINEAR)
        await wait_for_publication(client, uri)
        client.text_document_did_close(lsp.DidCloseTextDocumentParams(lsp.TextDocumentIdentifier(uri)))
        client.published.clear()
        started = time.monotonic()
        open_doc(client, good)
        await wait_for_publication(client, uri)
        assert time.monotonic() - started < 0.3
        assert len(started_runs(tmp_path)) == 2  # crash.c and the first good.c only


async def test_verify_on_save_edits_cancel_and_settings_changes_republish(tmp_path):
    async with fake_server(tmp_path) as client:
        path = tmp_path / "prog.c"
        uri = open_new(client, path, "// FAKE sleep=30\n" + LINEAR)
        assert await wait_until(lambda: len(started_runs(tmp_path)) == 1)
        (first_pid, _), = started_runs(tmp_path)
        change_doc(client, uri, 2, LINEAR)  # an edit kills the run of version 1, and starts nothing
        assert await wait_until(lambda: not alive(first_pid), 5)
        await asyncio.sleep(0.5)
        assert len(started_runs(tmp_path)) == 1 and client.published == []
        path.write_text(LINEAR)
        client.text_document_did_save(lsp.DidSaveTextDocumentParams(lsp.TextDocumentIdentifier(uri)))
        published = await wait_for_publication(client, uri, 2)
        assert [d.severity for d in published.diagnostics] == [lsp.DiagnosticSeverity.Hint]
        assert started_runs(tmp_path)[-1][1]["argv"][1] == str(path)  # unchanged on disk: the file itself

        client.set_configuration({**FAKE_SETTINGS, "provenDiagnostics": False, "showProvenHints": False},
                                 section="quokka")
        client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(settings=None))
        assert await wait_until(lambda: len(client.published) == 2)
        # the same result, republished without the proven-assertion Hint (the only diagnostic before)
        assert client.published[-1].uri == uri and list(client.published[-1].diagnostics) == []
        hints = await client.text_document_inlay_hint_async(lsp.InlayHintParams(
            lsp.TextDocumentIdentifier(uri), lsp.Range(lsp.Position(0, 0), lsp.Position(100, 0))))
        assert not hints

        await client.workspace_execute_command_async(
            lsp.ExecuteCommandParams("quokka.verifyWithModel", [uri]))
        assert await wait_until(lambda: any("quokka.model" in m for m in client.shown))
        copied = await client.workspace_execute_command_async(
            lsp.ExecuteCommandParams("quokka.copyInvariant", ["i <= n"]))
        assert copied == "i <= n"
        assert len(started_runs(tmp_path)) == 2
