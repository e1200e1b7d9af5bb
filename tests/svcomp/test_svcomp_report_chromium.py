"""`quokka report --html` on a two-run `quokka bench` database, opened in headless Chromium (issue 19):
the page's script runs (its task count is the script's), one row per task, the runs side by side, and a
screenshot of it. Skipped where Debian's chromium is not installed (scripts/test.sh installs it)."""

from __future__ import annotations

import re
import shutil
import struct
import subprocess
from pathlib import Path

import pytest
from quokka.svcomp.cli import main
from svcomp_helpers import FAKE_VERIFIER, make_set

CHROMIUM = shutil.which("chromium")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (apt-get install chromium)")
TASKS = {"a": ("true", "verdict=true"), "b": ("false", "verdict=false"),
         "c": ("true", "verdict=true failwith=spacer"), "d": ("true", "verdict=unknown")}


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("report")
    folder = make_set(root, TASKS)
    db = root / "bench.sqlite"
    assert main(["bench", str(folder), "--configs", "default,spacer", "--db", str(db), "--jobs", "2",
                 "--timeout", "5", "-q", "--verifier", " ".join(FAKE_VERIFIER)]) == 0
    page = root / "report.html"
    assert main(["report", str(db), "--html", str(page)]) == 0
    return page


def chromium(page: Path, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    assert CHROMIUM is not None
    done = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--hide-scrollbars",
         f"--user-data-dir={tmp_path / 'chromium'}", *args, page.as_uri()],
        capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def test_the_rendered_report_has_a_row_per_task_with_both_runs(report: Path, tmp_path: Path) -> None:
    dom = chromium(report, tmp_path, "--dump-dom").stdout  # the document after its script ran
    count = re.search(r"id=\"task-count\">([^<]*)<", dom)
    assert count is not None and count.group(1) == "4 of 4 tasks"  # written by the page's script
    table = dom[dom.index('<table id="tasks"'):]
    table = table[:table.index("</table>")]
    body = table[table.index("<tbody>"):]
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", body, re.S)
    assert [re.findall(r"set/(\w)\.yml", row)[:1] for row in rows] == [["a"], ["b"], ["c"], ["d"]]
    assert "#1 default</th>" in table and "#2 spacer</th>" in table
    assert all(row.count("<td") == 2 + 2 * 7 for row in rows)  # task, expected; 7 cells per run


def test_the_report_screenshot(report: Path, tmp_path: Path) -> None:
    shot = tmp_path / "report.png"
    chromium(report, tmp_path, f"--screenshot={shot}", "--window-size=1400,1900")
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert (width, height) == (1400, 1900)
    assert len(data) > 50_000  # tables and plots, not a blank page
