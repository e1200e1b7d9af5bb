"""Fault trials of `quokka torture`: faults are injected into real `quokka batch` and `quokka lsp`
processes, and what must hold afterwards is checked.

* **kill -9** of a small batch's whole process group at a random moment: no process of the batch
  is left a moment later, the store passes `PRAGMA integrity_check`, and the same command resumes
  the run: each task recorded exactly once, every result committed before the kill kept as it was;
* **a damaged store** (truncated, a page overwritten, a stale journal, garbage in the WAL): the next
  batch recovers (a consistent store, each task once) or stops with one line of error (exit 2);
* **a task that hangs** past the wall limit and **a task that exhausts memory**: recorded as
  `timeout` / `out of memory`, nothing left running, within the wall limit;
* **the language server**: 1,000 rapid edits (no stale version published), a document closed while
  it is verified, and a client that disconnects mid-verification (the server exits by itself);
  no verifier process outlives its run.

Every process started here carries a tag in its environment (`processes.tagged_environment`), so
that whatever a batch or a server leaves behind is found and counted.
"""

from __future__ import annotations

import asyncio
import contextlib
import csv
import os
import random
import shlex
import signal
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException
from pygls.lsp.client import LanguageClient
from quokka.svcomp.commands import EXIT_BAD_INPUT, EXIT_OK, EXIT_WRONG
from quokka.svcomp.configs import DEFAULT_VERIFIER
from quokka.svcomp.execution import Limits, Outcome, RunningProcess
from quokka.svcomp.tasks import Task
from quokka.verifier.infra.processes import tagged_environment, tagged_processes
from quokka.verifier.infra.store import StoreError, reading

QUOKKA = DEFAULT_VERIFIER[:-1]  # the `quokka` dispatcher of this Python
SERVER = (sys.executable, "-m", "quokka.server")
LEFTOVER_GRACE_S = 2.0  # "a moment later": SIGKILL is not instant
STARTUP_S = 15.0  # a batch's own start and end, beyond its tasks' limits
EDITS = 1000
ENGINES_SEEN = 3  # `quokka verify` and two of its engines: a fault now hits the whole tree

PROLOGUE = "extern int __VERIFIER_nondet_int(void);\nextern void reach_error(void);\n"
QUICK = PROLOGUE + """int main(void) {
  int n = __VERIFIER_nondet_int(), i = 0;
  if (n < 0 || n > 100) return 0;
  while (i < n) { i++; }
  if (i > 100) reach_error();
  return 0;
}
"""
HARD = PROLOGUE + """int main(void) {
  unsigned int x = (unsigned int) __VERIFIER_nondet_int(), y = x, n = 0;
  while (x != 1u && n < 1000000u) {
    if (x % 2u == 0u) x = x / 2u; else x = 3u * x + 1u;
    y = y * 2654435761u + x;
    n++;
  }
  if (y == 123456789u && n == 77u) reach_error();
  return 0;
}
"""


def memory_hog(terms: int = 60000) -> str:
    """A program whose parsing alone needs more than 256 MB."""
    expr = " + ".join(f"(x * {i % 97} ^ {i})" for i in range(terms))
    return PROLOGUE + f"int main(void) {{\n  int x = __VERIFIER_nondet_int();\n  int y = {expr};\n" \
        "  if (y == 12345) reach_error();\n  return 0;\n}\n"


@dataclass(frozen=True)
class Violation:
    kind: str  # as torture's findings: "wrong" (a result lost, doubled or misrecorded), "crash", "hang"
    detail: str


@dataclass
class Report:
    """What one fault trial injected and found; `log` is kept with its findings."""

    name: str
    injected: int = 0
    violations: list[Violation] = field(default_factory=list)
    log: list[str] = field(default_factory=list)

    def violated(self, kind: str, detail: str) -> None:
        self.violations.append(Violation(kind, detail))


@dataclass(frozen=True)
class Program:
    name: str
    text: str
    expected: bool | None = None


class FaultTrials:
    """The fault trials, in turn (`run(k)`), each in a folder of its own under `work`."""

    def __init__(self, work: Path, tasks: Sequence[Task], timeout_s: float, rng: random.Random,
                 verifier: Sequence[str] | None = None) -> None:
        self.work = work
        self.verifier = ("--verifier", shlex.join(verifier)) if verifier else ()
        # copied as bare programs, which are verified as LP64
        self.tasks = [t for t in tasks if t.program.is_file() and t.data_model in (None, "LP64")]
        self.timeout_s = min(timeout_s, 5.0)
        self.rng = rng
        self.kinds: list[Callable[[Path], Report]] = [
            self.kill_batch, self.damaged_store, self.hang, self.language_server, self.out_of_memory,
        ]

    def run(self, k: int) -> Report:
        trial = self.kinds[k % len(self.kinds)]
        folder = self.work / f"fault{k}-{trial.__name__}"
        folder.mkdir(parents=True)
        return trial(folder)

    # --------------------------------------------------------------------- batch faults

    def kill_batch(self, folder: Path) -> Report:
        report = Report("kill -9 of quokka batch")
        programs = self._programs()
        command = self._batch(folder, programs, "--jobs", "2")
        process = RunningProcess(command, self._limits(4))
        time.sleep(self.rng.uniform(0.5, 4.0))
        report.injected += _kill_group(process.pid)
        _wait_exit(process.pid, STARTUP_S)
        _leftovers(report, process.tag, "after kill -9 of the batch")
        _record(report, "killed batch", process.wait())
        before = _results(report, folder / "results.sqlite")
        self._resume(report, folder, command, before, len(programs))
        return report

    def _resume(self, report: Report, folder: Path, command: Sequence[str], before: list[Row],
                tasks: int) -> None:
        outcome = _run(report, command, self._limits(4), "resumed batch")
        if _crashed(report, outcome, "resumed batch"):
            return
        after = _results(report, folder / "results.sqlite")
        _each_task_once(report, after, tasks)
        lost = [row.task for row in set(before) - set(after)]
        if lost:
            report.violated("wrong", f"results committed before the kill are lost or changed: {lost}")

    def damaged_store(self, folder: Path, how: str = "") -> Report:
        report = Report("damaged store")
        command = self._batch(folder, [Program("quick.c", QUICK, True)])
        first = _run(report, command, self._limits(1), "first batch")
        if _crashed(report, first, "first batch"):
            return report
        report.log.append(_damage(folder / "results.sqlite", self.rng, how or self.rng.choice(DAMAGES)))
        report.injected += 1
        outcome = _run(report, command, self._limits(1), "batch on the damaged store")
        if outcome.exit_code == EXIT_BAD_INPUT:
            _one_line_error(report, outcome)
        elif not _crashed(report, outcome, "batch on the damaged store"):
            _each_task_once(report, _results(report, folder / "results.sqlite"), 1)
        return report

    def hang(self, folder: Path) -> Report:
        """A task that runs past the wall limit (its own budget is longer): killed, recorded as timeout."""
        wall = 3.0
        return self._limit_trial(folder, Program("hang.c", HARD), "timeout",
                                 ("--timeout", "30", "--wall-limit", f"{wall:g}"), wall)

    def out_of_memory(self, folder: Path) -> Report:
        wall = 40.0
        return self._limit_trial(folder, Program("hog.c", memory_hog()), "out of memory",
                                 ("--timeout", "8", "--memory", "256", "--wall-limit", f"{wall:g}"), wall)

    def _limit_trial(self, folder: Path, program: Program, status: str, options: tuple[str, ...],
                     wall_s: float) -> Report:
        report = Report(f"a task that ends in {status}", injected=1)
        command = self._batch(folder, [program], *options)
        started = time.monotonic()
        outcome = _run(report, command, Limits.for_timeout(wall_s, wall_s=wall_s + STARTUP_S), "batch")
        if _crashed(report, outcome, "batch"):
            return report
        if time.monotonic() - started > wall_s + STARTUP_S:
            report.violated("hang", f"the batch took {time.monotonic() - started:.0f} s, limit {wall_s:g} s")
        rows = _results(report, folder / "results.sqlite")
        if [r.status for r in rows] != [status]:
            report.violated("wrong", f"recorded {[r.status for r in rows]}, expected [{status!r}]")
        return report

    # --------------------------------------------------------------------- the language server

    def language_server(self, folder: Path) -> Report:
        report = Report("language server", injected=3)
        try:
            asyncio.run(asyncio.wait_for(_lsp_trials(folder, report), 180))
        except (TimeoutError, OSError, RuntimeError, JsonRpcException) as exc:
            report.violated("hang" if isinstance(exc, TimeoutError) else "crash", f"LSP session: {exc!r}")
        return report

    # --------------------------------------------------------------------- helpers

    def _programs(self) -> list[Program]:
        """A few tasks of the set (or built-in programs) and a quick program, each under a unique name."""
        chosen = self.rng.sample(self.tasks, min(2, len(self.tasks)))
        programs = [Program(f"t{n}_{t.program.name}", t.program.read_text(errors="replace"), t.expected)
                    for n, t in enumerate(chosen)]
        return [*programs, Program("quick.c", QUICK, True)]

    def _batch(self, folder: Path, programs: Sequence[Program], *options: str) -> list[str]:
        """The `quokka batch` command over `programs` (a `tasks.csv` in `folder`)."""
        with (folder / "tasks.csv").open("w", newline="", encoding="utf-8") as handle:
            out = csv.writer(handle)
            out.writerow(["file", "expected_verdict"])
            for p in programs:
                (folder / p.name).write_text(p.text, encoding="utf-8")
                out.writerow([p.name, "" if p.expected is None else str(p.expected).lower()])
        timeout = ("--timeout", f"{self.timeout_s:g}") if "--timeout" not in options else ()
        return [*QUOKKA, "batch", str(folder / "tasks.csv"), "--db", str(folder / "results.sqlite"),
                "--quiet", *self.verifier, *timeout, *options]

    def _limits(self, tasks: int) -> Limits:
        return Limits.for_timeout(self.timeout_s, wall_s=tasks * (self.timeout_s + 30) + STARTUP_S)


# ----------------------------------------------------------------------------- processes


def _kill_group(pid: int) -> int:
    """`kill -9 -PGID`: 1 when the group was there to kill."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        return 0
    return 1


def _wait_exit(pid: int, timeout_s: float) -> bool:
    """Wait until `pid` (a child) has ended, leaving it unreaped."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
            return True
        time.sleep(0.05)
    return False


def _leftovers(report: Report, tag: str, when: str) -> None:
    """A violation when processes carrying `tag` are still alive a moment later."""
    deadline = time.monotonic() + LEFTOVER_GRACE_S
    while (alive := tagged_processes(tag)) and time.monotonic() < deadline:
        time.sleep(0.1)
    if alive:
        report.violated("hang", f"{len(alive)} processes left {when}: {_describe(alive)}")


def _describe(pids: Sequence[int]) -> str:
    lines = []
    for pid in pids[:4]:
        words: list[bytes] = []
        with contextlib.suppress(OSError), open(f"/proc/{pid}/cmdline", "rb") as handle:
            words = handle.read().split(b"\0")
            lines.append(f"{pid} {b' '.join(words).decode(errors='replace')[:160]}")
    return "; ".join(lines)


def _run(report: Report, command: Sequence[str], limits: Limits, what: str) -> Outcome:
    """Run `command` to its end; what it leaves running once it has exited is a violation."""
    process = RunningProcess(command, limits)
    if _wait_exit(process.pid, limits.wall_s):
        _leftovers(report, process.tag, f"by the {what}")
    outcome = process.wait()
    _record(report, what, outcome)
    return outcome


def _record(report: Report, what: str, outcome: Outcome) -> None:
    ended = f"exit {outcome.exit_code} {outcome.signal_name} {outcome.killed_for} {outcome.wall_s:.1f} s"
    report.log.append(f"$ {' '.join(outcome.command)}\n{what}: {ended}\n{outcome.stderr_tail}")


def _crashed(report: Report, outcome: Outcome, what: str) -> bool:
    """A violation unless the batch ended normally (0: no wrong verdict; 1: some)."""
    if outcome.killed_for:
        why = f"killed for {outcome.killed_for} after {outcome.wall_s:.0f} s"
        report.violated("hang", f"the {what} was {why}")
    elif "Traceback" in outcome.stderr_tail or outcome.exit_code not in (EXIT_OK, EXIT_WRONG):
        report.violated("crash", f"the {what} ended with exit {outcome.exit_code} {outcome.signal_name}: "
                                 f"{outcome.stderr_tail[-300:]}")
    else:
        return False
    return True


def _one_line_error(report: Report, outcome: Outcome) -> None:
    lines = [line for line in outcome.stderr_tail.splitlines() if line.strip()]
    if len(lines) != 1 or "Traceback" in outcome.stderr_tail:
        report.violated("crash", f"exit 2 without a one-line error: {outcome.stderr_tail[-300:]}")


# ----------------------------------------------------------------------------- the store


@dataclass(frozen=True)
class Row:
    id: int
    run_id: int
    task: str
    status: str
    category: str
    finished_at: str


def _results(report: Report, db: Path) -> list[Row]:
    """The results in `db` (none when it does not exist), after `PRAGMA integrity_check`."""
    if not db.is_file():
        return []
    try:
        with reading(db) as store:
            problems = store.integrity_problems()
            if problems:
                report.violated("crash", f"{db.name} fails its integrity check: {problems[:3]}")
                return []
            rows = store.results()
    except StoreError as exc:
        report.violated("crash", f"{db.name} cannot be read: {exc}")
        return []
    return [Row(r.id or 0, r.run_id, r.task, r.status, r.category, r.finished_at) for r in rows]


def _each_task_once(report: Report, rows: Sequence[Row], tasks: int) -> None:
    runs = {r.run_id for r in rows}
    per_task = [r.task for r in rows]
    if len(runs) != 1 or len(per_task) != tasks or len(set(per_task)) != tasks:
        report.violated("wrong", f"{tasks} tasks, but {len(per_task)} results ({len(set(per_task))} tasks) "
                                 f"in {len(runs)} runs")
    wrong = [r.task for r in rows if r.category == "wrong"]
    if wrong:
        report.violated("wrong", f"wrong verdicts recorded for {wrong}")


DAMAGES = ("truncated", "page overwritten", "stale journal", "garbage WAL")


def _damage(db: Path, rng: random.Random, how: str) -> str:
    """Damage the store at `db` (one of `DAMAGES`); what was done."""
    size = db.stat().st_size
    if how == "truncated":
        os.truncate(db, rng.randrange(size))
    elif how == "page overwritten":
        with db.open("r+b") as handle:
            handle.seek(rng.randrange(max(1, size // 4096)) * 4096)
            handle.write(rng.randbytes(4096))
    else:
        suffix = "-journal" if how == "stale journal" else "-wal"
        with open(f"{db}{suffix}", "ab") as handle:
            handle.write(rng.randbytes(rng.choice([24, 512, 4096 + 32])))
    return f"damage: {how}"


# ----------------------------------------------------------------------------- the language server


class _Client(LanguageClient):  # type: ignore[misc]  # pygls is untyped for mypy here
    def __init__(self) -> None:
        super().__init__("quokka-torture", "1")
        self.published: list[tuple[float, str, int | None, int]] = []  # (time, uri, version, count)


        def publish(params: lsp.PublishDiagnosticsParams) -> None:
            self.published.append((time.monotonic(), params.uri, params.version, len(params.diagnostics)))

        def ignore(params: Any) -> None:
            return None

        self.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)(publish)  # handlers need attributes: functions
        self.feature(lsp.WINDOW_SHOW_MESSAGE)(ignore)


async def _lsp_trials(folder: Path, report: Report) -> None:
    tag = os.urandom(16).hex()
    client = _Client()
    await client.start_io(*SERVER, "--no-cache", "--log-file", str(folder / "server.log"),
                          env=tagged_environment(tag))
    await client.initialize_async(lsp.InitializeParams(
        capabilities=lsp.ClientCapabilities(),
        initialization_options={"timeout": 20, "verifyOn": "change", "debounceMs": 0}))
    client.initialized(lsp.InitializedParams())
    await _rapid_edits(client, folder, report, tag)
    await _closed_while_verified(client, folder, report, tag)
    await _disconnect(client, folder, report, tag)


def _open(client: _Client, path: Path, text: str) -> str:
    path.write_text(text, encoding="utf-8")
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(
        uri=path.as_uri(), language_id="c", version=1, text=text)))
    return path.as_uri()


def _change(client: _Client, uri: str, version: int, text: str) -> None:
    client.text_document_did_change(lsp.DidChangeTextDocumentParams(
        lsp.VersionedTextDocumentIdentifier(uri=uri, version=version),
        [lsp.TextDocumentContentChangeWholeDocument(text=text)]))


async def _until(predicate: Callable[[], bool], timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():  # once: what is counted (processes) may change again at once
            return True
        await asyncio.sleep(0.05)
    return False


async def _rapid_edits(client: _Client, folder: Path, report: Report, tag: str) -> None:
    uri = _open(client, folder / "edits.c", QUICK)
    for version in range(2, EDITS + 2):
        _change(client, uri, version, QUICK + f"// edit {version}\n")
    last = EDITS + 1
    if not await _until(lambda: any(p[1:3] == (uri, last) for p in client.published), 120):
        report.violated("hang", f"no diagnostics for version {last} after {EDITS} edits")
        return
    await asyncio.sleep(1.0)  # anything stale would arrive by now
    versions = [p[2] or 0 for p in client.published if p[1] == uri]
    if versions != sorted(versions) or versions[-1] != last:
        report.violated("wrong", f"after {EDITS} edits, diagnostics published for versions {versions[-5:]}")
    await _no_verifier(report, tag, f"after {EDITS} edits were verified")


async def _closed_while_verified(client: _Client, folder: Path, report: Report, tag: str) -> None:
    uri = _open(client, folder / "closed.c", HARD)
    if not await _until(lambda: len(_verifiers(tag)) >= ENGINES_SEEN, 30):  # its engines started too
        report.violated("hang", f"no verifier started for {uri}")
        return
    client.text_document_did_close(lsp.DidCloseTextDocumentParams(lsp.TextDocumentIdentifier(uri)))
    closed = time.monotonic()
    await _no_verifier(report, tag, "after the document was closed while verified")
    await asyncio.sleep(0.5)
    late = [p for p in client.published if p[1] == uri and p[0] > closed and p[3]]
    if late:
        report.violated("wrong", f"diagnostics published for a closed document: {late}")


async def _disconnect(client: _Client, folder: Path, report: Report, tag: str) -> None:
    uri = _open(client, folder / "disconnect.c", HARD)
    if not await _until(lambda: len(_verifiers(tag)) >= ENGINES_SEEN, 30):  # its engines started too
        report.violated("hang", f"no verifier started for {uri}")
    server = client._server
    assert server is not None and server.stdin is not None
    server.stdin.close()  # the client goes away without shutdown or exit
    try:
        code = await asyncio.wait_for(server.wait(), 10)
    except TimeoutError:
        server.kill()
        report.violated("hang", "the server did not exit within 10 s of its client disconnecting")
        code = await server.wait()
    stderr = (await server.stderr.read()).decode(errors="replace") if server.stderr else ""
    if code != 0 or "Traceback" in stderr:
        report.violated("crash", f"the server exited with {code} when its client went away: {stderr[-300:]}")
    await _no_verifier(report, tag, "after the client disconnected")
    await client.stop()  # type: ignore[no-untyped-call]


def _verifiers(tag: str) -> list[int]:
    """The processes the server started (they inherit its tag; the server's own pid is left out)."""
    return [pid for pid in tagged_processes(tag) if not _is_server(pid)]


def _is_server(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return b"quokka.server\0" in handle.read()
    except OSError:
        return False


async def _no_verifier(report: Report, tag: str, when: str) -> None:
    if not await _until(lambda: not _verifiers(tag), LEFTOVER_GRACE_S + 1):
        pids = _verifiers(tag)
        report.violated("hang", f"{len(pids)} verifier processes left {when}: {_describe(pids)}")
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)

