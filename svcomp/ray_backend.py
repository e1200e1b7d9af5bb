"""The Ray backend of `quokka batch --backend ray [--address ADDR]` (needs the `ray` extra).

Each task is one Ray remote call that runs the same limited subprocess as the local backend
(`execution.run_limited`) on a worker; the driver keeps at most `jobs` calls in flight and
writes every result itself, so the results store still has one writer. Without an address,
a local Ray instance with `jobs` CPUs is started (and shut down at the end).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator
from typing import Any

import ray

from .execution import Limits, Outcome, launch_failure, run_limited
from .runner import Finished, Job

_WAIT_S = 0.25


def _run_on_worker(command: tuple[str, ...], limits: Limits) -> Outcome:
    return run_limited(command, limits)


class RayBackend:
    """Jobs as Ray remote calls (one CPU each), results gathered by the driver."""

    def __init__(self, address: str | None = None, jobs: int = 1) -> None:
        self.address = address
        self.jobs = max(1, jobs)
        self._in_flight: dict[Any, Job] = {}
        self._started_ray = False

    def run(self, jobs: Iterable[Job]) -> Iterator[Finished | None]:
        self._connect()
        remote = ray.remote(num_cpus=1, max_retries=0)(_run_on_worker)
        pending = deque(jobs)
        try:
            while pending or self._in_flight:
                while pending and len(self._in_flight) < self.jobs:
                    job = pending.popleft()
                    self._in_flight[remote.remote(job.command, job.limits)] = job
                ready, _ = ray.wait(list(self._in_flight), num_returns=1, timeout=_WAIT_S)
                for ref in ready:
                    yield Finished(self._in_flight[ref], self._get(ref, self._in_flight.pop(ref)))
                if not ready:
                    yield None
        finally:
            self.close()

    def _connect(self) -> None:
        if ray.is_initialized():
            return
        if self.address:
            ray.init(address=self.address, log_to_driver=False)
        else:
            ray.init(num_cpus=self.jobs, include_dashboard=False, log_to_driver=False)
        self._started_ray = True

    @staticmethod
    def _get(ref: Any, job: Job) -> Outcome:
        try:
            outcome: Outcome = ray.get(ref)
        except ray.exceptions.RayError as exc:
            return launch_failure(job.command, RuntimeError(f"Ray task failed: {exc}"))
        return outcome

    def close(self) -> None:
        for ref in list(self._in_flight):
            ray.cancel(ref, force=True)
        self._in_flight.clear()
        if self._started_ray:
            ray.shutdown()
            self._started_ray = False
