"""Run strategies in parallel processes under one budget; report only what is checked.

Each strategy (an engine, or the proposer loop of a higher layer) runs in its own forked
process so it can be killed hard. The first conclusive answer that survives its check wins:
a SAFE certificate is re-checked by the inductive checker in this process (a fresh solver),
an UNSAFE input sequence is replayed in the interpreter and, where possible, by gcc.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import math
import multiprocessing.connection as mpc
import os
import threading
import time
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from quokka.verifier.engines.base import Budget, EngineResult, Status, unknown
from quokka.verifier.engines.kinduction import k_inductive
from quokka.verifier.errors import EngineError
from quokka.verifier.infra.processes import (
    Child,
    ChildSetup,
    ResourceLimits,
    call_until,
    paused,
    peak_rss_mb,
    peak_rss_of,
    scratch_folder,
    start_child,
)
from quokka.verifier.infra.profile import Recorder, Timing
from quokka.verifier.ir import Assert, Expr, Program, bounded_recursion, refusal, walk, walk_stmts
from quokka.verifier.verdict.checks import (
    MINIMIZE_S,
    certificate_result,
    confirm_deeper,
    confirm_smallest,
    invariant_free,
    minimal_invariants,
    unwinding_bound,
)
from quokka.verifier.verdict.overflow import unproven_overflows
from quokka.verifier.verdict.results import CandidateReport, EngineRun, Result, Verdict
from quokka.verifier.verdict.schedule import OVERDUE_S, Queue, Slot, plan, race

Strategy = Callable[[Program, Budget], EngineResult]
T = TypeVar("T")
YIELD_NICE = 5
NO_ERROR = "the program has no error location: no assertion, reach_error() call or checked operation"
DOUBLE_CHECK_S = 10.0  # seconds for cvc5's independent check of a certificate (`--double-check`)
POLISH_MAX_NODES = 2000  # larger certificates are shown whole, with every overflow site
OVERFLOW_CHECK_S = 0.3  # seconds for ruling out overflow sites under a checked certificate
MINIMIZE_FLOOR_S = 0.5  # the minimal certificate may take this long even after a faster proof
PROFILE_EVERY_S = 0.5  # how often a running strategy sends its profile snapshot
PROFILE = "profile"  # the tag of a profile snapshot message
USED_SLICE = 0.8  # a first-stage strategy that ran this share of its slice comes again (`Queue.again`)


@dataclass(frozen=True)
class PortfolioConfig:
    timeout_s: float
    memory_mb: int = 4096
    source: Path | None = None  # the original C file, for replay with a compiler
    replay_with_compiler: bool = True
    minimal_certificate: bool = True  # report only the conjuncts that carry the proof (`minimize`)
    double_check: bool = False  # a certificate must also pass cvc5's independent check (`doublecheck`)
    check_budget_s: float = 20.0  # extra time allowed to re-check a certificate
    # when every check must have ended (`time.monotonic()`): a certificate's, a counterexample's
    # replay, the polishing of the result; a check still running then is killed (the run's budget)
    deadline: float = math.inf
    uncapped: frozenset[str] = frozenset()  # strategies without the memory cap (e.g. ones loading a model)
    yielding: frozenset[str] = frozenset()  # strategies run at a lower CPU priority (`YIELD_NICE`)
    # strategies whose report is awaited (at most `report_grace_s`, within the budget) after another
    # one decided, so that the result shows what they found (e.g. a requested model's candidates)
    reporting: frozenset[str] = frozenset()
    report_grace_s: float = 30.0
    cores: int = 0  # at most this many strategies at once, in `schedule`'s stages (0: all at once)
    # the strategies that can only refute (their SAFE is no verdict): kept running when a SAFE
    # cannot become TRUE (a program whose recursion was cut)
    falsifiers: frozenset[str] = frozenset({"fuzz", "testing", "bmc"})
    instant: frozenset[str] = frozenset()  # strategies that answer at once (`schedule.plan`)


def _child(
    name: str, strategy: Strategy, program: Program, deadline: float, setup: ChildSetup, conn: mpc.Connection
) -> None:
    # what a solver prints itself (Z3's "ASSERTION VIOLATION ...") must not reach the verifier's
    # standard output, which `--json` owns: a strategy answers through `conn` only
    os.dup2(2, 1)
    budget = Budget(deadline)
    reporter = _Reporter(name, budget.recorder, conn)
    try:
        setup(before_limits=reporter.start)  # the reporter before the memory cap
        reporter.finish(strategy(program, budget))
    except MemoryError:
        reporter.finish(("error", "out of memory"))
    except Exception as exc:
        reporter.finish(("error", f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=6)}"))
    finally:
        with reporter.lock:
            conn.close()


class _Reporter(threading.Thread):
    """Sends the strategy's profile snapshot every `PROFILE_EVERY_S` while it runs (the parent
    keeps the last: a strategy killed in a long solver call still shows where its time went),
    then the final snapshot and the answer."""

    def __init__(self, name: str, recorder: Recorder, conn: mpc.Connection) -> None:
        super().__init__(daemon=True)
        self.who, self.recorder, self.conn = name, recorder, conn
        self.lock = threading.Lock()
        self.done = threading.Event()

    def run(self) -> None:
        last: tuple[tuple[Timing, ...], float] = ((), 0.0)
        while not self.done.wait(PROFILE_EVERY_S):
            snapshot = (self.recorder.snapshot(self.who), peak_rss_mb())
            if snapshot != last:
                self.send((PROFILE, *snapshot))
                last = snapshot

    def send(self, message: object) -> None:
        with self.lock:
            if not self.conn.closed:
                self.conn.send(message)

    def finish(self, answer: object) -> None:
        self.done.set()
        self.send((PROFILE, self.recorder.snapshot(self.who), peak_rss_mb()))
        self.send(answer)


def _start(name: str, strategy: Strategy, program: Program, budget: Budget, setup: ChildSetup) -> Child:
    return start_child(name, functools.partial(_child, name, strategy, program, budget.deadline, setup))


@dataclass
class _Snapshots:
    """What each strategy last said of itself: its profile rows, and its peak resident memory
    (MB; with the children it waited for, e.g. a compiler)."""

    profiles: dict[str, tuple[Timing, ...]] = dataclasses.field(default_factory=dict)
    peaks: dict[str, float] = dataclasses.field(default_factory=dict)
    earlier: list[Timing] = dataclasses.field(default_factory=list)  # of the runs that ended

    def keep(self, name: str, rows: tuple[Timing, ...], peak_mb: float) -> None:
        self.profiles[name] = rows
        self.peaks[name] = max(peak_mb, self.peaks.get(name, 0.0))  # the most of its runs

    def ended(self, name: str) -> None:
        """`name`'s process is gone: its rows stay when it runs again (a later stage)."""
        self.earlier.extend(self.profiles.pop(name, ()))

    def rows(self) -> tuple[Timing, ...]:
        return (*self.earlier, *(t for p in self.profiles.values() for t in p))

    def peak_before_kill(self, name: str, pid: int) -> None:
        peak = peak_rss_of(pid)
        if peak is not None:
            self.peaks[name] = max(peak, self.peaks.get(name, 0.0))


def _receive(run: Child, snapshots: _Snapshots) -> EngineResult | None:
    """The strategy's answer, or None for a snapshot of itself (kept in `snapshots`)."""
    try:
        message = run.conn.recv()
    except (EOFError, OSError):
        code = run.process.exitcode
        return unknown(run.name, f"engine process ended without an answer (exit code {code})")
    if isinstance(message, EngineResult):
        return message
    if message[0] == PROFILE:
        snapshots.keep(run.name, message[1], message[2])
        return None
    return unknown(run.name, f"engine failed: {message[1]}")


def _size(invariants: Mapping[str, Expr]) -> int:
    """The number of expression nodes in `invariants` (counting stops past `POLISH_MAX_NODES`)."""
    total = 0
    for inv in invariants.values():
        for _ in walk(inv):
            total += 1
            if total > POLISH_MAX_NODES:
                return total
    return total


def _stop(running: list[Child], snapshots: _Snapshots) -> None:
    """Kill every strategy; keep the snapshots they sent last."""
    for run in running:
        if run.pid is not None:
            snapshots.peak_before_kill(run.name, run.pid)
        run.kill()
    for run in running:
        run.process.join(timeout=5)
        with contextlib.suppress(OSError):
            while run.conn.poll() and _receive(run, snapshots) is None:
                pass  # a snapshot; the answer or the end of the pipe stops the loop
        run.close()


class Portfolio:
    """One verification run: strategies racing, checks in the parent, a `Result` at the end."""

    def __init__(self, program: Program, config: PortfolioConfig) -> None:
        self.program = program
        self.config = config
        self.runs: list[EngineRun] = []
        self.candidates: tuple[CandidateReport, ...] = ()
        self.started = time.monotonic()
        self._pending: list[Child] = []
        self._safe: EngineResult | None = None  # the engine result behind a TRUE verdict
        self._cut = ""  # why a SAFE answer was no verdict: the recursion was cut (`bounded_recursion`)
        self._late: str | None = None  # which check the deadline cut short, if one was
        self.snapshots = _Snapshots()
        self.recorder = Recorder()  # the checks done here

    def run(self, strategies: Mapping[str, Strategy]) -> Result:
        if not any(isinstance(s, Assert) for s in walk_stmts(self.program.body)):
            # nothing can fail (e.g. no signed operation under no-overflow): floats or not
            self.runs.append(EngineRun("frontend", "safe", 0.0, NO_ERROR))
            return self._result(Verdict.TRUE, NO_ERROR, decided_by="frontend")
        with scratch_folder("quokka-run-") as scratch:
            result = self._raced(strategies, scratch)
        polished = self._polished(result)
        mine = self.recorder.snapshot("portfolio")
        rows = (*self.snapshots.rows(), *mine)
        return dataclasses.replace(polished, profile=rows, peak_rss_mb=tuple(self.snapshots.peaks.items()))

    def _raced(self, strategies: Mapping[str, Strategy], scratch: Path) -> Result:
        budget = Budget.of(self.config.timeout_s)
        cores = self.config.cores
        names = list(strategies)
        slots = plan(self.program, names, instant=self.config.instant) if cores else race(names)
        queue = Queue(list(slots), cores)
        self._pending = []
        try:
            return self._await_reports(self._race(strategies, queue, budget, scratch), budget)
        finally:
            _stop(self._pending, self.snapshots)

    def _polished(self, result: Result) -> Result:
        """A TRUE result with the minimal certificate and the overflow sites the proof leaves
        open: work for the reader, done once the other strategies are stopped."""
        safe = self._safe
        if result.verdict is not Verdict.TRUE or safe is None or _size(safe.invariants) > POLISH_MAX_NODES:
            return result  # a large certificate (e.g. a set of states) costs more to polish than it gains
        if invariant_free(safe):  # no undefined behaviour on any path: no overflow either
            return dataclasses.replace(result, overflow_sites=(), time_s=self._elapsed())
        with self.recorder.timed("overflow sites"):
            sites = unproven_overflows(self.program, safe.invariants, self._check_budget(OVERFLOW_CHECK_S))
        invariants = result.invariants
        if self.config.minimal_certificate and k_inductive(safe) is None:  # k-induction: no 1-inductive set
            with self.recorder.timed("minimal certificate"):
                # no longer than the proof took (a guard: Z3's resource count limits it first)
                guard = min(MINIMIZE_S, max(MINIMIZE_FLOOR_S, self._elapsed()))
                invariants = minimal_invariants(self.program, safe, self._check_budget(guard))
        return dataclasses.replace(
            result, invariants=invariants, overflow_sites=tuple(map(str, sites)), time_s=self._elapsed()
        )

    def _await_reports(self, result: Result, budget: Budget) -> Result:
        """`result`, with the reports of the `reporting` strategies still running when it was
        decided (each awaited for at most the grace period, within the budget; not judged)."""
        awaited = [r for r in self._pending if r.name in self.config.reporting]
        if not awaited or result.verdict is Verdict.UNKNOWN:
            return result
        deadline = time.monotonic() + min(self.config.report_grace_s, budget.remaining())
        while awaited and time.monotonic() < deadline:
            ready = mpc.wait([r.conn for r in awaited], timeout=max(0.0, deadline - time.monotonic()))
            for run in [r for r in awaited if r.conn in ready]:
                answer = _receive(run, self.snapshots)
                if answer is not None:
                    awaited.remove(run)
                    self._record(answer)
        return dataclasses.replace(result, engines=tuple(self.runs), candidates=self.candidates,
                                   time_s=self._elapsed())  # fmt: skip

    def _setup(self, name: str, scratch: Path) -> ChildSetup:
        """Strategy `name`'s process: in a process group of its own (killing it also kills what it
        started), dying with the verifier (even one killed by SIGKILL), its temporary files in
        `scratch` (what it leaves when killed, the verifier removes), its memory cap and niceness."""
        memory = None if name in self.config.uncapped else self.config.memory_mb
        limits = ResourceLimits(memory_mb=memory, nice=YIELD_NICE if name in self.config.yielding else 0)
        return ChildSetup(limits, detach="group", parent=os.getpid(), scratch=scratch)

    def _race(self, chosen: Mapping[str, Strategy], queue: Queue, budget: Budget, scratch: Path) -> Result:
        """Start the queue's slots as cores come free; the first answer that checks decides."""
        pending = self._pending
        deadlines: dict[int, tuple[Slot, float, float]] = {}  # a running child's slot, start and deadline
        while not budget.expired:
            for slot, sub in queue.due(len(pending), budget):
                setup = self._setup(slot.name, scratch)
                child = _start(slot.name, chosen[slot.name], self.program, sub, setup)
                pending.append(child)
                deadlines[id(child)] = (slot, time.monotonic(), sub.deadline)
            if not pending:
                break
            wake = min(d for _, _, d in deadlines.values()) + OVERDUE_S - time.monotonic()
            ready = mpc.wait([r.conn for r in pending], timeout=min(budget.remaining(), max(0.0, wake)))
            for run in [r for r in pending if r.conn in ready]:
                answer = _receive(run, self.snapshots)
                if answer is None:
                    continue
                slot, started, _ = deadlines.pop(id(run))
                self._retire(run)
                verdict = self._judge(answer)
                if verdict is not None:
                    return verdict
                self._after(slot, answer, time.monotonic() - started, queue)
            self._kill_overdue(deadlines, queue)
        reason = self._late or self._cut or ("timeout" if pending or queue.slots else self._unknown_reason())
        for run in pending:
            self.runs.append(EngineRun(run.name, "timeout", self._elapsed(), "budget exhausted"))
        for slot in queue.slots:
            self.runs.append(EngineRun(slot.name, "timeout", self._elapsed(), "budget exhausted first"))
        return self._result(Verdict.UNKNOWN, reason)

    def _retire(self, run: Child) -> None:
        """A child that answered: its group killed (what it started), the child reaped."""
        self._pending.remove(run)
        _stop([run], self.snapshots)
        self.snapshots.ended(run.name)

    def _kill_overdue(self, deadlines: dict[int, tuple[Slot, float, float]], queue: Queue) -> None:
        """Kill the strategies still running `OVERDUE_S` after their slice ended (a solver call
        that does not keep to its timeout must not hold a core)."""
        now = time.monotonic()
        for run in [r for r in self._pending if deadlines[id(r)][2] + OVERDUE_S < now]:
            slot, _, _ = deadlines.pop(id(run))
            self._retire(run)
            self.runs.append(EngineRun(run.name, "timeout", self._elapsed(), "its slice of the budget ended"))
            queue.again(slot)

    def _after(self, slot: Slot, answer: EngineResult, took_s: float, queue: Queue) -> None:
        """What comes after an answer that decided nothing: a first-stage strategy that used its
        whole slice comes again with a share of the rest; a SAFE that cannot be a verdict (cut
        recursion) leaves the cores to the strategies that can refute."""
        if answer.status is Status.SAFE and bounded_recursion(self.program) is not None:
            queue.keep_only(self.config.falsifiers)
        elif answer.status is Status.UNKNOWN and took_s >= USED_SLICE * (slot.slice_s or float("inf")):
            queue.again(slot)

    def _record(self, result: EngineResult) -> None:
        self.runs.append(EngineRun(result.engine, result.status.value, result.time_s, result.reason))
        reports = result.stats.get("candidates")
        if isinstance(reports, (list, tuple)) and reports:
            self.candidates = tuple(r for r in reports if isinstance(r, CandidateReport))

    def _judge(self, result: EngineResult) -> Result | None:
        self._record(result)
        if result.status not in (Status.SAFE, Status.UNSAFE):
            return None
        # the check has the cores to itself: the engines still running wait (they go on if it fails)
        with paused(r.pid for r in self._pending if r.pid is not None):
            if result.status is Status.SAFE:
                return self._check_safe(result)
            return self._check_unsafe(result)

    def _check_safe(self, result: EngineResult) -> Result | None:
        bounded = bounded_recursion(self.program)
        if bounded is not None:  # no TRUE for an under-approximation: the falsifiers go on
            self._cut = bounded
            self.runs.append(EngineRun("recursion", "unknown", 0.0, f"{result.engine}: {bounded}"))
            return None
        refused = refusal(self.program)  # only a complete unrolling may prove a program with floats
        if refused is not None and unwinding_bound(result) is None:
            self.runs.append(EngineRun("certificate", "rejected", 0.0, f"{result.engine}: {refused}"))
            return None
        budget = self._check_budget(self.config.check_budget_s)
        with self.recorder.timed("certificate check") as call:
            job = functools.partial(certificate_result, self.program, result, budget)
            checked, why = self._bounded(f"checking {result.engine}'s certificate", job, budget)
            call.answer = "rejected" if checked is None else "checked"
        if checked is None:
            self.runs.append(EngineRun("certificate", "rejected", 0.0, f"{result.engine}: {why}"))
            return None
        extra = self._double_checked(result) if self.config.double_check else {}
        if extra is None:
            return None
        if k_inductive(result) is not None:  # the invariants alone do not prove it: say what does
            extra = {**extra, "proof": why}
        self._safe = result
        return self._result(
            Verdict.TRUE, result.reason, invariants=checked, decided_by=result.engine, extra=extra
        )

    def _double_checked(self, result: EngineResult) -> dict[str, object] | None:
        """What cvc5 says of `result`'s certificate (None: it refutes it, and the run says so)."""
        from quokka.verifier.verdict.doublecheck import (  # cvc5 loads only when asked for
            REFUTED,
            double_check,
        )

        if k_inductive(result) is not None:
            note = "skipped: a k-inductive proof is no certificate for cvc5; it was proven again, afresh"
            return {"double_check": note}
        if invariant_free(result) and self.program.loops:
            return {
                "double_check": "skipped: a complete unrolling or the one execution has no invariants "
                "for cvc5; it was unrolled or run again, afresh"
            }

        with self.recorder.timed("double check (cvc5)") as call:
            second = double_check(self.program, result.invariants, self._check_budget(DOUBLE_CHECK_S))
            call.answer = second.status
        if second.status == REFUTED:
            self.runs.append(EngineRun("double-check", "rejected", 0.0, f"{result.engine}: {second.reason}"))
            return None
        return {"double_check": f"{second.status}: {second.reason}"}

    def _check_unsafe(self, result: EngineResult) -> Result | None:
        with self.recorder.timed("counterexample replay") as call:
            compiled = self.config.replay_with_compiler
            source = self.config.source if compiled else None
            job = functools.partial(confirm_smallest, self.program, result, source, compile_ir=compiled)
            budget = self._check_budget(math.inf)  # a replay has its own limits (the compiler's)
            cex, why = self._bounded(f"confirming {result.engine}'s counterexample", job, budget)
            if cex is None and self.program.cut_calls and compiled:  # a run past the cut (issue 40)
                deeper = functools.partial(confirm_deeper, self.program, result, source)
                stage = f"confirming {result.engine}'s counterexample past the recursion cut"
                cex, past = self._bounded(stage, deeper, self._check_budget(math.inf))
                why = why if cex is None else past
            call.answer = "rejected" if cex is None else "confirmed"
        if cex is None:
            self.runs.append(EngineRun("replay", "rejected", 0.0, f"{result.engine}: {why}"))
            return None
        return self._result(Verdict.FALSE, result.reason, counterexample=cex, decided_by=result.engine)

    def _check_budget(self, seconds: float) -> Budget:
        """`seconds` from now for a check, or until the run's deadline if that comes first."""
        return Budget(min(time.monotonic() + seconds, self.config.deadline))

    def _bounded(
        self, stage: str, job: Callable[[], tuple[T | None, str]], budget: Budget
    ) -> tuple[T | None, str]:
        """`job()` (a check: its answer or None, and why) in a process of its own, killed at
        `budget`'s end (a compiler's run or a solver that overruns its limit cannot hold the run
        past its deadline); a job that fails is a rejection, with its error."""
        setup = ChildSetup(detach="group", parent=os.getpid())
        try:
            answer = call_until("check", job, budget.deadline, setup)
        except EngineError as exc:
            return None, str(exc)
        if answer is None:
            self._late = f"timeout while {stage}"
            return None, self._late
        return answer

    def _unknown_reason(self) -> str:
        reasons = [f"{r.engine}: {r.reason}" for r in self.runs if r.status != "safe"]
        return "; ".join(reasons) or "no engine ran"

    def _elapsed(self) -> float:
        return time.monotonic() - self.started

    def _result(self, verdict: Verdict, reason: str, **fields: object) -> Result:
        bounded = bounded_recursion(self.program) if verdict is Verdict.TRUE else None
        if bounded is not None:  # every verdict is built here: no TRUE for an under-approximation
            self.runs.append(EngineRun("recursion", "unknown", 0.0, f"{fields.get('decided_by')}: {reason}"))
            verdict, reason, fields = Verdict.UNKNOWN, bounded, {}
        fields.setdefault("overflow_sites", tuple(str(c) for c in self.program.overflow_sites))
        return Result(
            verdict=verdict,
            reason=reason,
            file=self.program.file,
            time_s=self._elapsed(),
            engines=tuple(self.runs),
            candidates=self.candidates,
            **fields,  # type: ignore[arg-type]
        )
