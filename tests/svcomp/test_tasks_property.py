"""Which property a batch task checks: each task file's own choice, or `--property` for all of them."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from quokka.svcomp.cli import main
from quokka.svcomp.configs import Config, resolve
from quokka.svcomp.execution import Limits
from quokka.svcomp.runner import BatchSpec, LocalBackend, run_batch, signature, task_command
from quokka.svcomp.tasks import Task, load_tasks
from quokka.verifier.infra.store import Store
from svcomp_helpers import FAKE_VERIFIER, QuietSink

# The formulas of SV-COMP's property files, as sv-benchmarks `c/properties/` has them.
FORMULAS = {
    "unreach-call": "CHECK( init(main()), LTL(G ! call(reach_error())) )\n",
    "no-overflow": "CHECK( init(main()), LTL(G ! overflow) )\n",
    "coverage-branches": "COVER( init(main()), FQL(COVER EDGES(@DECISIONEDGE)) )\n",
    "termination": "CHECK( init(main()), LTL(F end) )\n",
}

PROGRAM = "int main(void) { return 0; }\n"
LIMITS = Limits(timeout_s=5, wall_s=30, cpu_s=30, memory_mb=1024)


def _properties(root: Path) -> Path:
    folder = root / "properties"
    folder.mkdir(parents=True, exist_ok=True)
    for name, formula in FORMULAS.items():
        (folder / f"{name}.prp").write_text(formula)
    return folder


def _task_yml(program: str, listed: dict[str, str | None]) -> str:
    """A task definition of `program` listing `listed` (property name -> expected verdict)."""
    lines = ["format_version: '2.0'", f"input_files: '{program}'", "properties:"]
    for name, expected in listed.items():
        lines.append(f"  - property_file: ../properties/{name}.prp")
        if expected is not None:
            lines.append(f"    expected_verdict: {expected}")
    lines += ["options:", "  language: C", "  data_model: ILP32", ""]
    return "\n".join(lines)


def _task_set(root: Path, tasks: dict[str, dict[str, str | None]], programs: dict[str, str] | None = None,
              ) -> Path:
    """A folder `root/set` with one program and task file per name (`programs`: their texts)."""
    _properties(root)
    folder = root / "set"
    folder.mkdir(parents=True, exist_ok=True)
    for name, listed in tasks.items():
        (folder / f"{name}.c").write_text((programs or {}).get(name, PROGRAM))
        (folder / f"{name}.yml").write_text(_task_yml(f"{name}.c", listed))
    return folder


MIXED = {
    "both": {"unreach-call": "false", "no-overflow": "true", "coverage-branches": None},
    "overflow_only": {"no-overflow": "false"},
    "reach_only": {"unreach-call": "true"},
    "coverage_only": {"coverage-branches": None},
}


def _by_stem(tasks: tuple[Task, ...]) -> dict[str, Task]:
    return {Path(t.program).stem: t for t in tasks}


def test_by_default_a_task_checks_unreach_call_else_no_overflow(tmp_path: Path) -> None:
    folder = _task_set(tmp_path, MIXED)
    loaded = load_tasks([folder])
    tasks = _by_stem(loaded.tasks)
    assert {k: (t.property, t.expected) for k, t in tasks.items()} == {
        "both": ("unreach-call", False),
        "overflow_only": ("no-overflow", False),
        "reach_only": ("unreach-call", True),
    }
    both, overflow_only = tasks["both"], tasks["overflow_only"]
    assert (both.key, both.name) == (str((folder / "both.yml").resolve()), "set/both.yml")  # as before
    assert overflow_only.key == f"{(folder / 'overflow_only.yml').resolve()}#no-overflow"
    assert overflow_only.name == "set/overflow_only.yml (no-overflow)"
    assert [(s.path.name, s.reason) for s in loaded.skipped] == [
        ("coverage_only.yml", "property not supported: coverage-branches")]
    assert not loaded.problems


def test_property_no_overflow_checks_it_wherever_listed_and_skips_the_rest(tmp_path: Path) -> None:
    folder = _task_set(tmp_path, MIXED)
    loaded = load_tasks([folder], "no-overflow")
    tasks = _by_stem(loaded.tasks)
    assert {k: (t.property, t.expected) for k, t in tasks.items()} == {
        "both": ("no-overflow", True),  # the no-overflow verdict, not the unreach-call one
        "overflow_only": ("no-overflow", False),
    }
    assert tasks["both"].name == "set/both.yml (no-overflow)"
    assert sorted((s.path.name, s.reason) for s in loaded.skipped) == [
        ("coverage_only.yml", "does not list the no-overflow property"),
        ("reach_only.yml", "does not list the no-overflow property"),
    ]


def test_property_unreach_call_skips_tasks_without_it(tmp_path: Path) -> None:
    folder = _task_set(tmp_path, MIXED)
    loaded = load_tasks([folder], "unreach-call")
    assert {k: (t.property, t.expected) for k, t in _by_stem(loaded.tasks).items()} == {
        "both": ("unreach-call", False), "reach_only": ("unreach-call", True)}
    assert sorted(s.path.name for s in loaded.skipped) == ["coverage_only.yml", "overflow_only.yml"]
    assert all(s.reason == "does not list the unreach-call property" for s in loaded.skipped)


def test_an_unsupported_property_name_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="termination"):
        load_tasks([tmp_path], "termination")


def test_the_two_properties_of_one_task_file_are_two_keys(tmp_path: Path) -> None:
    folder = _task_set(tmp_path, MIXED)
    (reach,) = load_tasks([folder / "both.yml"]).tasks
    (overflow,) = load_tasks([folder / "both.yml"], "no-overflow").tasks
    assert reach.task_file == overflow.task_file == (folder / "both.yml").resolve()
    assert reach.key != overflow.key and reach.name != overflow.name
    assert (reach.property, overflow.property) == ("unreach-call", "no-overflow")


def test_the_tasks_csv_verdict_is_the_unreach_call_one(tmp_path: Path) -> None:
    tasks = {"both": {"unreach-call": "false", "no-overflow": "true"},
             "silent": {"unreach-call": None, "no-overflow": None}}
    folder = _task_set(tmp_path, tasks)
    (folder / "tasks.csv").write_text("task,family,expected_verdict\nboth.yml,f,false\nsilent.yml,f,true\n")
    overflow = load_tasks([folder], "no-overflow")
    assert not overflow.problems  # csv `false` is not compared with the no-overflow `true`
    assert {k: t.expected for k, t in _by_stem(overflow.tasks).items()} == {"both": True, "silent": None}
    reach = load_tasks([folder])
    assert {k: t.expected for k, t in _by_stem(reach.tasks).items()} == {"both": False, "silent": True}
    (folder / "tasks.csv").write_text("task,family,expected_verdict\nboth.yml,f,true\n")
    assert "disagrees" in load_tasks([folder]).problems[0].reason  # still checked for unreach-call
    assert not load_tasks([folder], "no-overflow").problems
    alone = load_tasks([folder / "both.yml"], "no-overflow").tasks[0]  # the row of the csv beside it
    assert (alone.expected, alone.family) == (True, "f")


def test_bare_c_files_check_the_given_property_without_an_unreach_call_verdict(tmp_path: Path) -> None:
    (tmp_path / "loop_false-unreach-call.c").write_text(PROGRAM)
    (default,) = load_tasks([tmp_path]).tasks
    assert (default.property, default.expected, default.key) == (
        "unreach-call", False, str((tmp_path / "loop_false-unreach-call.c").resolve()))
    (overflow,) = load_tasks([tmp_path], "no-overflow").tasks
    assert (overflow.property, overflow.expected) == ("no-overflow", None)
    assert overflow.key.endswith("loop_false-unreach-call.c#no-overflow")


def test_task_command_passes_the_tasks_property(tmp_path: Path) -> None:
    folder = _task_set(tmp_path, MIXED)
    spec = BatchSpec(tasks=(), configs=resolve(["default"]), limits=LIMITS, verifier=("qv",))
    tasks = _by_stem(load_tasks([folder]).tasks)
    overflow = task_command(spec, spec.configs[0], tasks["overflow_only"])
    assert overflow[overflow.index("--property") + 1] == "no-overflow"
    reach = task_command(spec, spec.configs[0], tasks["both"])
    assert reach[reach.index("--property") + 1] == "unreach-call"
    (chosen,) = load_tasks([folder / "both.yml"], "no-overflow").tasks
    command = task_command(spec, spec.configs[0], chosen)
    assert command[command.index("--property") + 1] == "no-overflow"
    assert command.count("--property") == 1


def test_a_property_run_is_its_own_run_and_resumes(tmp_path: Path) -> None:
    """Default and `--property no-overflow` runs of one set share a store, each resumed by itself."""
    folder = _task_set(tmp_path, MIXED)
    config = Config("default")

    def spec(property_name: str | None) -> BatchSpec:
        return BatchSpec(tasks=load_tasks([folder], property_name).tasks, configs=(config,), limits=LIMITS,
                         verifier=FAKE_VERIFIER, sets=(str(folder),), property=property_name)

    assert signature(spec(None), config) != signature(spec("no-overflow"), config)
    assert signature(spec(None), config) == signature(
        BatchSpec(tasks=(), configs=(config,), limits=LIMITS, verifier=FAKE_VERIFIER, sets=(str(folder),)),
        config)  # the default run's signature is what it was before `--property`
    with Store.open(tmp_path / "r.sqlite") as store:
        reach = run_batch(spec(None), store, LocalBackend(2), QuietSink())
        overflow = run_batch(spec("no-overflow"), store, LocalBackend(2), QuietSink())
        again = run_batch(spec("no-overflow"), store, LocalBackend(2), QuietSink())
        rows = store.results()
    assert reach.runs[0].id != overflow.runs[0].id == again.runs[0].id
    assert (reach.ran, overflow.ran, again.ran, again.resumed) == (3, 2, 0, 2)
    first, second, resolved = reach.runs[0].id, overflow.runs[0].id, folder.resolve()
    assert sorted((r.run_id, r.task) for r in rows) == [  # both.yml twice: once per property
        (first, f"{resolved}/both.yml"), (first, f"{resolved}/overflow_only.yml#no-overflow"),
        (first, f"{resolved}/reach_only.yml"),
        (second, f"{resolved}/both.yml#no-overflow"), (second, f"{resolved}/overflow_only.yml#no-overflow"),
    ]


def test_batch_list_shows_the_property(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "300")
    folder = _task_set(tmp_path, MIXED)
    assert main(["batch", str(folder), "--list", "--property", "no-overflow"]) == 0
    out = capsys.readouterr().out
    lines = [line.split() for line in out.splitlines()]
    assert ["set/both.yml", "(no-overflow)", "no-overflow", "true", "ILP32",
            str((folder / "both.c").resolve())] in lines
    assert "2 tasks, 2 skipped, 0 problems" in out
    with pytest.raises(SystemExit):
        main(["batch", str(folder), "--list", "--property", "termination"])


def test_benchexec_tool_accepts_no_overflow(tmp_path: Path) -> None:
    pytest.importorskip("benchexec", reason="benchexec is a dev dependency")
    from benchexec import model, result, util
    from benchexec.tools.template import BaseTool2, UnsupportedFeatureException

    _, tool = model.load_tool_info("quokka.svcomp.benchexec_tool", SimpleNamespace(container=False))
    properties = _properties(tmp_path)
    (tmp_path / "a.c").write_text(PROGRAM)
    limits = BaseTool2.ResourceLimits(cputime=None, walltime=100, memory=None, cpu_cores=1)

    def cmdline(prp: str) -> list[str]:
        task = BaseTool2.Task.with_files([str(tmp_path / "a.c")], property_file=str(properties / prp))
        command: list[str] = tool.cmdline("quokka", [], task, limits)
        return command

    overflow = cmdline("no-overflow.prp")
    assert overflow[overflow.index("--property") + 1] == "no-overflow"
    reach = cmdline("unreach-call.prp")
    assert reach[reach.index("--property") + 1] == "unreach-call"
    with pytest.raises(UnsupportedFeatureException, match="termination"):
        cmdline("termination.prp")

    def verdict(payload: dict[str, object], command: list[str]) -> str:
        run = BaseTool2.Run(command, util.ProcessExitCode.create(value=0),
                            BaseTool2.RunOutput([json.dumps(payload) + "\n"]), None)
        text: str = tool.determine_result(run)
        return text

    false = {"verdict": "false", "reason": "", "file": "a.c"}
    named = {**false, "extra": {"property": "no-overflow"}}
    assert verdict(named, ["quokka"]) == result.RESULT_FALSE_OVERFLOW  # the property the output names
    assert verdict(false, overflow) == result.RESULT_FALSE_OVERFLOW  # the property asked for
    assert verdict(false, reach) == result.RESULT_FALSE_REACH
    assert verdict({"verdict": "true", "reason": "", "file": "a.c"}, overflow) == result.RESULT_TRUE_PROP


OVERFLOWS = """\
extern int __VERIFIER_nondet_int(void);
int main() {
  int x = __VERIFIER_nondet_int();
  int y = x + 1;
  return 0;
}
"""

SAFE = """\
extern int __VERIFIER_nondet_int(void);
int main() {
  int x = __VERIFIER_nondet_int();
  if (x < 100 && x > -100) {
    int y = x + 1;
  }
  return 0;
}
"""


def test_batch_property_no_overflow_end_to_end(tmp_path: Path) -> None:
    """`quokka batch --property no-overflow` with the real `quokka verify`: an overflow is FALSE."""
    tasks = {"overflows": {"unreach-call": "true", "no-overflow": "false"},
             "safe": {"unreach-call": "true", "no-overflow": "true"}}
    folder = _task_set(tmp_path, tasks, {"overflows": OVERFLOWS, "safe": SAFE})
    db = tmp_path / "r.sqlite"
    code = main(["batch", str(folder), "--db", str(db), "--property", "no-overflow", "--timeout", "10",
                 "-j", "2", "-q"])
    with Store.open(db, writer=False) as store:
        rows = {Path(r.program).stem: r for r in store.results()}
    reasons = {k: r.reason for k, r in rows.items()}
    assert {k: (r.status, r.category) for k, r in rows.items()} == {
        "overflows": ("false", "correct"), "safe": ("true", "correct")}, reasons
    assert rows["overflows"].name == "set/overflows.yml (no-overflow)"
    assert code == 0
