"""`quokka bench` and `quokka report` on a store made with the fake verifier; the paired numbers."""

from __future__ import annotations

import csv
import io
import re
import sys
from pathlib import Path

import pytest
from quokka.svcomp import report as report_mod
from quokka.svcomp.cli import main
from quokka.svcomp.scores import categorize, score, tally
from quokka.svcomp.summary import paired, published, summarize
from quokka.verifier.infra.store import ResultRow, RunInfo, Store
from svcomp_helpers import FAKE_VERIFIER, make_set

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def bench_db(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    root = tmp_path_factory.mktemp("bench")
    folder = make_set(root, {
        "a": ("true", "verdict=true"), "b": ("false", "verdict=false"),
        "c": ("true", "verdict=true failwith=spacer"), "d": ("true", "verdict=unknown"),
    })
    (folder / "tasks.csv").write_text(
        "task,file,family,expected_verdict,uautomizer_verdict,uautomizer_s\n"
        "a.yml,a.c,f1,true,true,7.5\nb.yml,b.c,f1,false,false,2\n"
        "c.yml,c.c,f2,true,unknown,900\nd.yml,d.c,f2,true,false,3\n"
    )
    db = root / "b.sqlite"
    mp = pytest.MonkeyPatch()
    mp.setenv("COLUMNS", "250")
    captured = io.StringIO()
    mp.setattr(sys, "stdout", captured)
    try:
        code = main(["bench", str(folder), "--configs", "default,spacer", "--db", str(db), "--jobs", "2",
                     "--timeout", "5", "-q", "--verifier", " ".join(FAKE_VERIFIER)])
    finally:
        mp.undo()
    assert code == 0
    return db, captured.getvalue()


def test_bench_prints_paired_table_matching_the_database(bench_db: tuple[Path, str]) -> None:
    db, output = bench_db
    with Store.open(db, writer=False) as store:
        runs = store.runs()
        rows = store.results()
    assert [(r.config, r.bench) for r in runs] == [
        ("default", "default,spacer"), ("spacer", "default,spacer")]
    by_run = {run.id: tally((r.expected_bool, r.status) for r in rows if r.run_id == run.id) for run in runs}
    assert [(t.correct, t.wrong, t.unsolved) for t in by_run.values()] == [(3, 0, 1), (2, 0, 2)]
    lines = output.splitlines()  # not a terminal: plain columns, one line per row
    solved_line = next(line for line in lines if line.startswith("solved "))
    assert _numbers(solved_line) == [3, 2, 2]  # default, spacer, uautomizer (published: a, b right; d wrong)
    wrong_line = next(line for line in lines if line.startswith("wrong "))
    assert _numbers(wrong_line) == [0, 0, 1]
    assert "uautomizer (published, measured elsewhere)" in output
    speed = lines[lines.index(next(line for line in lines if line.startswith("tasks solved by both"))) + 1]
    assert _numbers(speed)[:3] == [2, 1, 0]


def test_bench_interleaves_the_configurations(bench_db: tuple[Path, str]) -> None:
    db, _ = bench_db
    with Store.open(db, writer=False) as store:
        rows = sorted(store.results(), key=lambda r: r.started_at)
    assert {r.name for r in rows[:2]} == {"set/a.yml"} and {r.name for r in rows[2:4]} == {"set/b.yml"}


def test_report_writes_html_plots_and_csv(bench_db: tuple[Path, str], tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    db, _ = bench_db
    out = tmp_path / "out"
    code = main(["report", str(db), "--html", str(out / "r.html"), "--plots", str(out / "p"),
                 "--csv", str(out / "r.csv")])
    assert code == 0
    for name in ("cactus.png", "scatter.png"):
        data = (out / "p" / name).read_bytes()
        assert data.startswith(PNG) and len(data) > 5000
    page = (out / "r.html").read_text()
    assert page.count("data:image/png;base64,") == 2 and "Results per family" in page
    with (out / "r.csv").open() as handle:
        lines = list(csv.DictReader(handle))
    with Store.open(db, writer=False) as store:
        rows = store.results()
    assert len(lines) == len(rows) == 8
    assert {(line["name"], line["run_id"], line["status"]) for line in lines} == {
        (r.name, str(r.run_id), r.status) for r in rows}
    printed = capsys.readouterr().out
    assert "results per family" in printed


def test_report_refuses_unknown_runs(bench_db: tuple[Path, str], capsys: pytest.CaptureFixture[str]) -> None:
    db, _ = bench_db
    assert main(["report", str(db), "--run", "7"]) == 2
    assert "no run(s) 7" in capsys.readouterr().err


def _row(run_id: int, task: str, status: str, cpu: float, expected: str = "true") -> ResultRow:
    exp = expected == "true"
    return ResultRow(run_id=run_id, task=task, name=task, status=status, verdict=status,
                     category=categorize(exp, status).value, score=score(exp, status), expected=expected,
                     cpu_s=cpu, published=[{"tool": "u", "verdict": "true", "time_s": 4.0}])


def test_paired_speedups_and_published_summary() -> None:
    rows_a = [_row(1, "t1", "true", 1.0), _row(1, "t2", "true", 2.0), _row(1, "t3", "true", 4.0),
              _row(1, "t4", "true", 1.0), _row(1, "t5", "unknown", 9.0)]
    rows_b = [_row(2, "t1", "true", 0.5), _row(2, "t2", "true", 2.0), _row(2, "t3", "true", 0.4),
              _row(2, "t4", "unknown", 9.0), _row(2, "t5", "true", 1.0)]
    runs = [RunInfo(id=1, signature="a", config="A"), RunInfo(id=2, signature="b", config="B")]
    sum_a, sum_b = summarize(rows_a + rows_b, runs)
    pair = paired(rows_a, rows_b, sum_a, sum_b)
    assert (pair.common, pair.both_solved, pair.only_a, pair.only_b) == (5, 3, 1, 1)
    assert pair.geomean_speedup == pytest.approx(20 ** (1 / 3))
    assert pair.at_least == ((1.2, 2), (2.0, 2), (10.0, 1))
    assert sum_a.cpu_correct_s == 8.0 and sum_b.tally.correct == 4
    [pub] = published(rows_a)
    assert (pub.tool, pub.tasks, pub.solved, pub.wrong, pub.time_solved_s) == ("u", 5, 5, 0, 20.0)


def test_load_matches_summaries_per_family(bench_db: tuple[Path, str]) -> None:
    db, _ = bench_db
    with Store.open(db, writer=False) as store:
        data = report_mod.load(store)
    assert [(s.config, s.group, s.tally.correct) for s in data.per_family] == [
        ("default", "f1", 2), ("default", "f2", 1), ("spacer", "f1", 2), ("spacer", "f2", 0)]


def _numbers(line: str) -> list[float]:
    return [float(x) if "." in x else int(x) for x in re.findall(r"(?<![\w.])\d+(?:\.\d+)?(?![\w.x])", line)]


# ----------------------------------------------------------------------------- the per-task table


def test_report_html_has_a_row_per_task_with_the_runs_side_by_side(bench_db: tuple[Path, str],
                                                                   tmp_path: Path) -> None:
    db, _ = bench_db
    page_path = tmp_path / "r.html"
    assert main(["report", str(db), "--html", str(page_path)]) == 0
    page = page_path.read_text()
    table = page[page.index("<table id='tasks'"):]
    table = table[:table.index("</table>")]
    rows = re.findall(r"<tr( class='differs')? data-cats='([^']*)'><td class='l' data-v='([^']*)'", table)
    assert [(name, differs != "", cats) for differs, cats, name in rows] == [
        ("set/a.yml", False, "correct"), ("set/b.yml", False, "correct"),
        ("set/c.yml", True, "correct unknown"),  # spacer fails on c: the runs differ
        ("set/d.yml", False, "unknown")]
    assert "#1 default</th>" in table and "#2 spacer</th>" in table
    assert table.count("data-col=") == 2 + 2 * 7  # task, expected; 7 columns per run (memory recorded)
    assert "id='task-filter'" in page and "id='cat-filter'" in page and "id='diff-filter'" in page
    assert "<script>" in page and "<link" not in page  # self-contained: inline CSS and script
    assert re.search(r"(src|href)=['\"](https?:)?//", page) is None


def test_task_table_escapes_store_text_and_links_files_relative_to_the_page(tmp_path: Path) -> None:
    from quokka.svcomp.report_tasks import tasks_html

    evil = "set/<img src=x onerror=alert(1)>.yml"
    task = str(tmp_path / "tasks" / "t.yml")
    runs = [RunInfo(id=1, signature="a", config="A"), RunInfo(id=2, signature="b", config="B'><b>")]
    rows = [
        ResultRow(run_id=1, task=task, name=evil, status="true", verdict="true", category="correct", score=2,
                  expected="true", witness=str(tmp_path / "w" / "a b.yml"), memory_mb=12.5),
        ResultRow(run_id=2, task=task, name=evil, status="error: crash", verdict="unknown", category="error",
                  score=0, expected="true", reason="it's <bad>", stderr_tail="Traceback <x>\n"),
        ResultRow(run_id=1, task=str(tmp_path / "u.c"), name="set/u.c", status="unknown", verdict="unknown",
                  category="unknown", score=0, witness="not written: no loop"),
    ]
    page = tasks_html(runs, rows, link_base=tmp_path / "out")
    assert "<img" not in page and "&lt;img src=x onerror=alert(1)&gt;" in page
    assert "B&#x27;&gt;&lt;b&gt;" in page and "title='it&#x27;s &lt;bad&gt;'" in page
    assert "<pre>Traceback &lt;x&gt;\n</pre>" in page
    assert "href='../w/a%20b.yml'>witness</a>" in page and "href='../tasks/t.yml'" in page
    assert "title='not written: no loop'>no witness</span>" in page
    assert page.count("class='differs'") == 2  # both tasks: u.c has no result in run 2
    assert page.count("class='missing-result'") == 7


def test_task_lines_sort_numbers_by_value() -> None:
    from quokka.svcomp.report_tasks import task_lines

    runs = [RunInfo(id=3, signature="a", config="A")]
    rows = [ResultRow(run_id=3, task=name, name=name, status="true", verdict="true", category="correct",
                      score=2) for name in ("s/10.yml", "s/2.yml", "s/1.yml")]
    assert [line.name for line in task_lines(runs, rows)] == ["s/1.yml", "s/2.yml", "s/10.yml"]
