"""Reading SV-COMP task definitions, folders, tasks.csv and bare C files."""

from __future__ import annotations

from pathlib import Path

import pytest
from quokka.svcomp.tasks import Published, load_tasks
from svcomp_helpers import BENCHMARKS, make_set


def test_task_yaml_gives_expected_verdict_data_model_and_program(tmp_path: Path) -> None:
    folder = make_set(tmp_path, {"a_1": ("true", ""), "b": ("false", "")}, data_model="LP64")
    tasks = load_tasks([folder / "a_1.yml", folder / "b.yml"])
    assert [t.expected for t in tasks.tasks] == [True, False]
    assert {t.data_model for t in tasks.tasks} == {"LP64"}
    assert tasks.tasks[0].program == (folder / "a_1.c").resolve()
    assert tasks.tasks[0].family == "a"
    assert tasks.tasks[0].name == "set/a_1.yml"
    assert not tasks.problems and not tasks.skipped


def test_folder_without_csv_reads_every_task_file_once(tmp_path: Path) -> None:
    folder = make_set(tmp_path, {"a": ("true", ""), "b": ("false", ""), "c": ("true", "")})
    tasks = load_tasks([folder, folder / "b.yml"])
    assert [t.name for t in tasks.tasks] == ["set/a.yml", "set/b.yml", "set/c.yml"]


def test_task_without_a_supported_property_is_skipped_with_reason(tmp_path: Path) -> None:
    folder = make_set(tmp_path, {"a": ("true", "")})
    (tmp_path / "properties" / "coverage-branches.prp").write_text(
        "COVER( init(main()), FQL(COVER EDGES(@DECISIONEDGE)) )\n")
    (folder / "cov.yml").write_text(
        "format_version: '2.0'\ninput_files: a.c\nproperties:\n"
        "  - property_file: ../properties/coverage-branches.prp\n"
    )
    (folder / "ovf.yml").write_text(
        "format_version: '2.0'\ninput_files: a.c\nproperties:\n"
        "  - property_file: ../properties/no-overflow.prp\n    expected_verdict: true\n"
    )
    tasks = load_tasks([folder])
    assert [(t.name, t.property) for t in tasks.tasks] == [
        ("set/a.yml", "unreach-call"), ("set/ovf.yml (no-overflow)", "no-overflow")]
    assert len(tasks.skipped) == 1
    assert tasks.skipped[0].path.name == "cov.yml"
    assert tasks.skipped[0].reason == "property not supported: coverage-branches"  # as `quokka verify` says


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("format_version: '2.0'\ninput_files: [a.c\n", "not valid YAML"),
        ("format_version: '1.0'\ninput_files: a.c\nproperties: []\n", "format_version"),
        ("format_version: '2.0'\ninput_files: missing.c\nproperties: []\n", "missing.c not found"),
        ("format_version: '2.0'\ninput_files: a.c\nproperties: 3\n", "properties must be a list"),
        ("format_version: '2.0'\ninput_files: a.c\noptions: {data_model: ILP64}\nproperties: []\n", "ILP32"),
        ("format_version: '2.0'\ninput_files: [a.c, b.c]\nproperties: []\n", "2 input files"),
        ("- just a list\n", "mapping"),
        (
            "format_version: '2.0'\ninput_files: a.c\nproperties:\n"
            "  - property_file: ../properties/unreach-call.prp\n    expected_verdict: maybe\n",
            "expected_verdict",
        ),
    ],
)
def test_malformed_task_is_a_problem_with_path_and_reason_and_the_rest_loads(
    tmp_path: Path, text: str, reason: str
) -> None:
    folder = make_set(tmp_path, {"a": ("true", ""), "b": ("false", "")})
    (folder / "bad.yml").write_text(text)
    tasks = load_tasks([folder])
    assert [t.name for t in tasks.tasks] == ["set/a.yml", "set/b.yml"]
    assert len(tasks.problems) == 1
    problem = tasks.problems[0]
    assert problem.path.name == "bad.yml"
    assert reason in problem.reason
    assert str(problem).startswith(str(folder / "bad.yml"))


def test_tasks_csv_gives_family_and_published_results(tmp_path: Path) -> None:
    folder = make_set(tmp_path, {"a": ("true", ""), "b": ("false", "")})
    (folder / "tasks.csv").write_text(
        "task,file,family,expected_verdict,uautomizer_verdict,uautomizer_s\n"
        "a.yml,a.c,fam1,true,true,7.5\n"
        "b.yml,b.c,fam2,false,unknown,\n"
        "gone.yml,gone.c,fam3,true,true,1\n"
    )
    tasks = load_tasks([folder])
    assert [(t.name, t.family) for t in tasks.tasks] == [("set/a.yml", "fam1"), ("set/b.yml", "fam2")]
    assert tasks.tasks[0].published == (Published("uautomizer", "true", 7.5),)
    assert tasks.tasks[1].published == (Published("uautomizer", "unknown", None),)
    assert len(tasks.problems) == 1 and "gone.yml" in str(tasks.problems[0])


def test_csv_and_task_file_disagreeing_is_a_problem(tmp_path: Path) -> None:
    folder = make_set(tmp_path, {"a": ("true", "")})
    (folder / "tasks.csv").write_text("task,family,expected_verdict\na.yml,f,false\n")
    tasks = load_tasks([folder / "tasks.csv"])
    assert not tasks.tasks
    assert "disagrees" in tasks.problems[0].reason


def test_bare_c_files_and_old_style_names(tmp_path: Path) -> None:
    (tmp_path / "loop_false-unreach-call.c").write_text("int main() { return 0; }\n")
    (tmp_path / "plain.i").write_text("int main() { return 0; }\n")
    tasks = load_tasks([tmp_path])
    assert [(t.program.name, t.expected, t.data_model) for t in tasks.tasks] == [
        ("loop_false-unreach-call.c", False, None),
        ("plain.i", None, None),
    ]
    assert tasks.tasks[0].family == "loop"
    (tmp_path / "egcd2-ll_valuebound1_3.c").write_text("int main() { return 0; }\n")
    found = {t.program.name: t.family for t in load_tasks([tmp_path]).tasks}
    assert found["egcd2-ll_valuebound1_3.c"] == "egcd2"  # the family the training split uses


def test_missing_path_and_unknown_file_are_problems(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello")
    tasks = load_tasks([tmp_path / "nope", tmp_path / "notes.txt"])
    assert not tasks.tasks
    assert [p.path.name for p in tasks.problems] == ["nope", "notes.txt"]


@pytest.mark.skipif(not BENCHMARKS.is_dir(), reason="shared benchmarks not present")
@pytest.mark.parametrize(("name", "count", "false"), [("code2inv", 133, 0), ("quokka-dev", 637, 75),
                                                      ("svcomp-nla-dev", 300, 89)])
def test_shared_benchmark_sets_load_completely(name: str, count: int, false: int) -> None:
    tasks = load_tasks([BENCHMARKS / name])
    assert len(tasks.tasks) == count
    assert sum(t.expected is False for t in tasks.tasks) == false
    assert not tasks.problems and not tasks.skipped
    models = {t.data_model for t in tasks.tasks}
    assert models == ({"LP64"} if name == "quokka-dev" else {"ILP32"})


def test_a_task_named_alone_takes_its_row_of_the_tasks_csv_beside_it(tmp_path: Path) -> None:
    folder = make_set(tmp_path, {"a": ("true", ""), "b": ("true", "")})
    (folder / "tasks.csv").write_text(
        "task,family,expected_verdict,cpa_verdict,cpa_s\na.yml,fam,true,true,3\n")
    a, b = load_tasks([folder / "a.yml", folder / "b.yml"]).tasks
    assert (a.family, a.published) == ("fam", (Published("cpa", "true", 3.0),))
    assert (b.family, b.published) == ("b", ())
