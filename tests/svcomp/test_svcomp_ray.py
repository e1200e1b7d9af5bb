"""The Ray backend on a local Ray instance (skipped when the `ray` extra is not installed)."""

from __future__ import annotations

from pathlib import Path

import pytest
from svcomp_helpers import FAKE_VERIFIER, QuietSink, make_set

pytest.importorskip("ray", reason="the ray extra is not installed (pip install -e '.[ray]')")

from quokka.svcomp.configs import Config
from quokka.svcomp.execution import Limits
from quokka.svcomp.ray_backend import RayBackend
from quokka.svcomp.runner import BatchSpec, LocalBackend, run_batch
from quokka.svcomp.tasks import load_tasks
from quokka.verifier.infra.store import Store


def test_ray_backend_gives_the_same_results_as_the_local_pool(tmp_path: Path) -> None:
    folder = make_set(tmp_path, {"t": ("true", "verdict=true"), "f": ("false", "verdict=false"),
                                 "w": ("true", "verdict=false"), "slow": ("true", "sleep=30")})
    spec = BatchSpec(tasks=load_tasks([folder]).tasks, configs=(Config("default"),),
                     limits=Limits(timeout_s=5, wall_s=4, cpu_s=20, memory_mb=1024), verifier=FAKE_VERIFIER)
    with Store.open(tmp_path / "ray.sqlite") as store:
        outcome = run_batch(spec, store, RayBackend(address=None, jobs=2), QuietSink())
        ray_rows = {Path(r.task).stem: (r.status, r.category) for r in store.results()}
        assert outcome.ran == 4 and len(store.results()) == 4
    with Store.open(tmp_path / "local.sqlite") as store:
        run_batch(spec, store, LocalBackend(2), QuietSink())
        local_rows = {Path(r.task).stem: (r.status, r.category) for r in store.results()}
    assert ray_rows == local_rows
    assert ray_rows["slow"] == ("timeout", "error") and ray_rows["w"] == ("false", "wrong")
