"""Task folders and a fake verifier for the svcomp tests."""

from __future__ import annotations

import sys
from pathlib import Path

from shared_data import BENCHMARKS

FAKE = Path(__file__).with_name("svcomp_fake_verify.py")
FAKE_VERIFIER = (sys.executable, str(FAKE))
REPO = Path(__file__).resolve().parents[2]
BENCHMARKS = BENCHMARKS

PROGRAM = """\
extern void abort(void);
extern int __VERIFIER_nondet_int(void);
void reach_error() {{}}
void __VERIFIER_assert(int cond) {{ if (!(cond)) {{ ERROR: {{ reach_error(); abort(); }} }} }}
// SVFAKE {directives}
int main() {{
  int x = __VERIFIER_nondet_int();
  int i = 0;
  while (i < 10) {{
    i = i + 1;
  }}
  __VERIFIER_assert(x >= 0);
  return 0;
}}
"""

TASK_YML = """\
format_version: '2.0'
input_files: '{program}'
properties:
  - property_file: ../properties/unreach-call.prp
    expected_verdict: {expected}
  - property_file: ../properties/no-overflow.prp
    expected_verdict: true
options:
  language: C
  data_model: {data_model}
"""

PROPERTY = "CHECK( init(main()), LTL(G ! call(reach_error())) )\n"


def make_set(root: Path, tasks: dict[str, tuple[str, str]], *, data_model: str = "ILP32") -> Path:
    """A task folder `root/set` with `name -> (expected, directives)` tasks and a properties folder."""
    (root / "properties").mkdir(parents=True, exist_ok=True)
    (root / "properties" / "unreach-call.prp").write_text(PROPERTY)
    (root / "properties" / "no-overflow.prp").write_text("CHECK( init(main()), LTL(G ! overflow) )\n")
    folder = root / "set"
    folder.mkdir(exist_ok=True)
    for name, (expected, directives) in tasks.items():
        (folder / f"{name}.c").write_text(PROGRAM.format(directives=directives or "verdict=true"))
        (folder / f"{name}.yml").write_text(
            TASK_YML.format(program=f"{name}.c", expected=expected, data_model=data_model)
        )
    return folder


class QuietSink:
    """A progress sink that shows nothing."""

    def start(self, *args: object) -> None:
        pass

    def add(self, row: object) -> None:
        pass

    def tick(self) -> None:
        pass

    def stop(self) -> None:
        pass
