"""`goto` and labels: their lowering to `Label`/`Goto`, loop heads, the checks, and their meaning.

The meaning is that of the control-flow graph (`cfg.build_cfg`): the tests check its structure,
and run the programs with `interp.run`, with the frontend helpers' interpreter and with gcc.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from frontend_helpers import GCC, run_gcc, run_ir
from quokka.verifier.cfg import Cfg, build_cfg
from quokka.verifier.errors import FrontendError, UnsupportedFeature
from quokka.verifier.exec.interp import run
from quokka.verifier.frontend import lower, lower_source
from quokka.verifier.ir import Assert, Goto, Havoc, Label, LoopInfo, Program, Scope, Stmt, walk_stmts
from quokka.verifier.ir.printer import format_program
from quokka.verifier.ir.typecheck import check_program
from quokka.verifier.properties import UNREACH_CALL
from shared_data import BENCHMARKS

QUOKKA_DEV = BENCHMARKS / "quokka-dev"
GOTO_TASKS = sorted(p for p in QUOKKA_DEV.glob("*.c") if "goto" in p.read_text())  # none if absent


def lowered(src: str, **kwargs: str) -> Program:
    program = lower_source(src, "g.c", **kwargs)
    check_program(program)
    return program


def of_type(program: Program, cls: type) -> list[Stmt]:
    return [s for s in walk_stmts(program.body) if isinstance(s, cls)]


def labels(program: Program) -> dict[str, Label]:
    return {s.name: s for s in of_type(program, Label)}  # type: ignore[union-attr]


def block_of(cfg: Cfg, stmt: Stmt) -> int:
    return next(b.id for b in cfg.blocks if any(s is stmt for s in b.stmts))


def outcome(program: Program, inputs: list[int] | None = None) -> str:
    """`interp.run`'s outcome, checked against the frontend helpers' CFG interpreter."""
    return run(program, inputs or []).outcome


def located(exc: pytest.ExceptionInfo[Exception], line: int, column: int) -> None:
    coord = exc.value.coord  # type: ignore[attr-defined]
    assert (coord.file, coord.line, coord.column) == ("g.c", line, column), coord
    assert str(exc.value).startswith(f"g.c:{line}:{column}: ")


# ----------------------------------------------------------------------------- forward gotos

NESTED = """int main() {
  int i, j, hits = 0;
  for (i = 0; i < 10; i++)
    for (j = 0; j < 10; j++)
      if (i * j == 12) goto found;
  hits = -1;
found:
  __VERIFIER_assert(i == 2 && j == 6 && hits == 0);
  return 0;
}"""


def test_forward_goto_leaves_nested_loops() -> None:
    program = lowered(NESTED)
    assert [info.id for info in program.loops] == ["L3", "L4"]
    assert labels(program)["found"] == Label("found", labels(program)["found"].coord, None)
    assert labels(program)["found"].coord.line == 7
    (goto,) = of_type(program, Goto)
    assert goto == Goto("found", goto.coord) and (goto.coord.line, goto.coord.column) == (5, 24)
    cfg = build_cfg(program)
    target = block_of(cfg, cfg.asserts[0])
    assert cfg.loop_of(target) is None
    near = {target, *cfg.preds[target]}  # the goto's own block jumps there (it shows in paths)
    assert any(cfg.loop_of(q) == "L4" for p in near for q in (p, *cfg.preds[p]))  # it leaves both loops
    assert any(t in near for _, t in cfg.exits("L4")) and any(t in near for _, t in cfg.exits("L3"))
    assert outcome(program) == "exit" and run_ir(NESTED).outcome == "exit"


# ----------------------------------------------------------------------------- backward gotos

BACKWARD = """int main() {
  int n = 0;
  int s = 0;
again:
  s += n;
  n++;
  if (n < 5) goto again;
  __VERIFIER_assert(s == 10);
  return 0;
}"""


def test_backward_goto_makes_the_label_a_loop_head_with_loop_info() -> None:
    program = lowered(BACKWARD)
    (info,) = program.loops
    assert info == LoopInfo("L4", info.coord, 4, (("n", "n"), ("s", "s")), "main", None)
    assert (info.coord.file, info.coord.line, info.coord.column) == ("g.c", 4, 1)
    assert labels(program)["again"].loop == "L4"
    assert "again:;  // loop L4" in format_program(program)
    cfg = build_cfg(program)
    head = cfg.head("L4")
    assert cfg.blocks[head].head == "L4"
    assert any(cfg.is_back(p, head) for p in cfg.preds[head])
    execution = run(program, [])
    assert execution.outcome == "exit"
    heads = [h for h in execution.loop_heads if h.loop_id == "L4"]
    assert [h.values["n"] for h in heads] == [0, 1, 2, 3, 4]
    assert run_ir(BACKWARD).outcome == "exit"


def test_a_label_is_a_loop_head_only_when_a_goto_comes_at_or_after_it() -> None:
    src = """int main() {
  int x = 0;
  goto skip;
  x = 1;
skip:
  x++;
self: if (x < 3) { x++; goto self; }
  return 0;
}"""
    program = lowered(src)
    assert labels(program)["skip"].loop is None
    assert labels(program)["self"].loop == "L7"
    assert [info.id for info in program.loops] == ["L7"]


def test_loops_inside_a_goto_loop_have_it_as_parent() -> None:
    src = """int main() {
  int i = 0, j, t = 0;
outer:
  for (j = 0; j < 3; j++) t++;
  i++;
  if (i < 2) goto outer;
  for (j = 0; j < 2; j++) t++;
  __VERIFIER_assert(t == 8);
  return 0;
}"""
    program = lowered(src)
    assert {info.id: info.parent for info in program.loops} == {"L3": None, "L4": "L3", "L7": None}
    cfg = build_cfg(program)
    assert {lid: loop.parent for lid, loop in cfg.loops.items()} == {"L3": None, "L4": "L3", "L7": None}
    assert outcome(program) == "exit"


# ----------------------------------------------------------------------------- function scope

TWICE = """int sum(int n) {
  int s = 0;
loop:
  if (n == 0) goto out;
  s += n; n--;
  goto loop;
out:
  return s;
}
int main() {
  int a = sum(3), b = sum(4);
  __VERIFIER_assert(a == 6 && b == 10);
  return 0;
}"""


def test_labels_of_a_function_inlined_twice_belong_to_each_inlining() -> None:
    program = lowered(TWICE)
    scopes = [s for s in of_type(program, Scope) if s.function == "sum"]  # type: ignore[union-attr]
    assert len(scopes) == 2
    for scope, lid in zip(scopes, ["L3", "L3_2"], strict=True):
        inner = [s for s in walk_stmts(scope.body) if isinstance(s, Label)]  # type: ignore[union-attr]
        assert [(s.name, s.loop) for s in inner] == [("loop", lid), ("out", None)]
    infos = {info.id: info for info in program.loops}
    assert infos["L3"].function == infos["L3_2"].function == "sum"
    assert dict(infos["L3"].scope)["s"] != dict(infos["L3_2"].scope)["s"]
    cfg = build_cfg(program)
    assert cfg.head("L3") != cfg.head("L3_2")
    assert cfg.loops["L3"].blocks.isdisjoint(cfg.loops["L3_2"].blocks)
    execution = run(program, [])
    assert execution.outcome == "exit"
    assert [h.loop_id for h in execution.loop_heads] == ["L3"] * 4 + ["L3_2"] * 5
    assert run_ir(TWICE).outcome == "exit"


# ----------------------------------------------------------------------------- CIL and SV-COMP shapes

CIL = """extern unsigned int __VERIFIER_nondet_uint(void);
unsigned int norm(unsigned int m) {
  unsigned int __retres;
  {
    if (!m) {
      __retres = 0U;
      goto return_label;
    } else {
    }
    {
      while (1) {
      while_0_continue: /* CIL Label */ ;
        if (m < 1U << 24U) {
        } else {
          goto while_0_break;
        }
        m = m << 1U;
      }
      while_0_break: /* CIL Label */ ;
    }
    __retres = m;
    return_label: /* CIL Label */
    return (__retres);
  }
}
int main() {
  unsigned int m = __VERIFIER_nondet_uint();
  unsigned int r = norm(m);
  __VERIFIER_assert(r == 0U || r >= 1U << 24U);
  __VERIFIER_assert(r != 1U << 24U);
  return 0;
}"""


def test_cil_labels_and_gotos() -> None:
    program = lowered(CIL)
    assert {name: label.loop for name, label in labels(program).items()} == {
        "while_0_continue": None,
        "while_0_break": None,
        "return_label": None,
    }
    assert [info.id for info in program.loops] == ["L11"]
    cfg = build_cfg(program)
    assert list(cfg.loops) == ["L11"] and len(cfg.exits("L11")) == 1
    for m, expected in [(0, "exit"), (1, "error"), (3, "exit"), (1 << 24, "error"), (1 << 25, "exit")]:
        assert outcome(program, [m]) == expected, m
        assert run_ir(CIL, [m]).outcome == expected, m


ERROR_LABEL = """void reach_error(void) {}
void __VERIFIER_assert(int cond) { if (!(cond)) { ERROR: { reach_error(); } } return; }
int main() { int x = __VERIFIER_nondet_int(); __VERIFIER_assert(x != 7); return 0; }"""


@pytest.mark.parametrize("property_name", ["assert", UNREACH_CALL])
def test_svcomp_error_label_is_a_plain_label(property_name: str) -> None:
    program = lowered(ERROR_LABEL, property_name=property_name)
    assert program.loops == ()
    assert [(s.name, s.loop) for s in of_type(program, Label)] == [("ERROR", None)]  # type: ignore[union-attr]
    (check,) = of_type(program, Assert)
    assert check.cond.value == 0 and check.coord.line == 2 and check.site.line == 3  # type: ignore[union-attr]
    assert outcome(program, [7]) == "error" and outcome(program, [3]) == "exit"


@pytest.mark.skipif(not GOTO_TASKS, reason="quokka-dev benchmarks not present")
@pytest.mark.parametrize("path", GOTO_TASKS, ids=lambda p: p.name)
def test_quokka_dev_goto_tasks_lower_to_a_cfg(path: Path) -> None:
    program = lower(path)
    check_program(program)
    cfg = build_cfg(program)
    assert list(cfg.loops) == [info.id for info in program.loops] and program.loops
    names = {s.name for s in of_type(program, Label)}  # type: ignore[union-attr]
    assert {"return_label", "while_0_break", "while_0_continue"} <= names
    assert outcome(program, [1 << 24, 0, 1 << 24, 0]) in ("exit", "error")


# ----------------------------------------------------------------------------- switch


def test_goto_inside_one_case_and_out_of_a_switch() -> None:
    src = """int main() {
  int x = __VERIFIER_nondet_int(), i = 0;
  switch (x) {
  case 0:
  again:
    i++;
    if (i < 3) goto again;
    break;
  case 1:
    goto out;
  default:
    i = 10;
  }
  __VERIFIER_assert(i == 3 || i == 10);
out:
  __VERIFIER_assert(x != 1 || i == 0);
  return 0;
}"""
    program = lowered(src)
    assert labels(program)["again"].loop == "L5"
    for x in (0, 1, 2):
        assert outcome(program, [x]) == "exit"
        assert run_ir(src, [x]).outcome == "exit"


@pytest.mark.parametrize(
    "src, line, column",
    [
        ("int main() { int x = 0;\n  switch (x) { case 0: goto m; case 1: m: x++; }\n  return 0; }", 2, 24),
        ("int main() { int x = 0;\n  goto m; switch (x) { case 1: m: x++; }\n  return 0; }", 2, 3),
        ("int main() { int x = 0;\n  goto m; switch (x) { m: x++; case 1: x--; }\n  return 0; }", 2, 3),
    ],
    ids=["case to case", "into a case", "into the statements before the first case"],
)
def test_goto_into_a_switch_case_is_unsupported(src: str, line: int, column: int) -> None:
    with pytest.raises(UnsupportedFeature) as exc:
        lower_source(src, "g.c")
    assert exc.value.feature == "goto into a switch case"
    located(exc, line, column)


# ----------------------------------------------------------------------------- declarations


def test_goto_past_a_declaration_havocs_the_variable() -> None:
    src = """int main() {
  int x = __VERIFIER_nondet_int();
  if (x) goto later;
  int y = 3;
later:
  return y;
}"""
    program = lowered(src)
    text = format_program(program)
    assert "havoc y;  // uninitialised\n    goto later;" in text
    havoc = next(s for s in of_type(program, Havoc) if s.origin == "uninitialised")
    assert havoc.coord.line == 4  # type: ignore[union-attr]


def test_backward_goto_into_a_block_havocs_its_variables() -> None:
    src = """int main() {
  int k = 0;
  { int y = 5; again: k++; }
  if (k < 3) goto again;
  return 0;
}"""
    program = lowered(src)
    assert "havoc y;  // uninitialised\n    goto again;" in format_program(program)
    assert outcome(program) == "exit"


# ----------------------------------------------------------------------------- errors


def test_undefined_label_is_a_located_error() -> None:
    with pytest.raises(FrontendError) as exc:
        lower_source("int main() { int x = 0;\n  if (x) goto nowhere;\n  return 0; }", "g.c")
    located(exc, 2, 10)
    assert "undefined label 'nowhere'" in str(exc.value)


def test_duplicate_label_is_a_located_error() -> None:
    with pytest.raises(FrontendError) as exc:
        lower_source("int main() { int x = 0;\n l: x++;\n l: x++;\n  return 0; }", "g.c")
    located(exc, 3, 2)


def test_goto_into_a_loop_is_unsupported_at_the_goto() -> None:
    src = "int main() { int x = 0;\n  goto m;\n  while (x < 3) { x++; m: x++; }\n  return 0; }"
    with pytest.raises(UnsupportedFeature) as exc:
        lower_source(src, "g.c")
    assert exc.value.feature == "goto into a loop"
    located(exc, 2, 3)


def test_goto_into_the_middle_of_a_goto_loop_is_unsupported_at_the_goto() -> None:
    # the loop's entry is `m`, not the label `l` the backward goto makes its head: irreducible
    # for the label rule (`cfg.build_cfg` rejects it; the frontend says which goto is to blame)
    src = "int main() { int x = 0;\n  goto m;\n l: x++;\n m: x++;\n  if (x < 5) goto l;\n  return 0; }"
    with pytest.raises(UnsupportedFeature) as exc:
        lower_source(src, "g.c")
    assert exc.value.feature == "goto into a loop" and "label m, inside the loop of label l" in str(exc.value)
    located(exc, 2, 3)


def test_goto_into_a_goto_loop_at_a_dead_end_is_fine() -> None:
    src = """int main() {
  int x = 0, c = __VERIFIER_nondet_int();
  if (c) goto fail;
retry:
  x++;
  if (x > 7) { fail: return 1; }
  if (x < 5) goto retry;
  return 0;
}"""
    program = lowered(src)
    assert [info.id for info in program.loops] == ["L4"]
    assert outcome(program, [0]) == outcome(program, [1]) == "exit"


@pytest.mark.parametrize(
    "src, column",
    [
        ("int main() { void *p = 0;\n  goto *p;\n}", 8),
        ("int main() { void *p;\n  p = &&l; l: return 0;\n}", 7),
    ],
    ids=["goto *p", "&&label"],
)
def test_computed_goto_is_unsupported(src: str, column: int) -> None:
    with pytest.raises(UnsupportedFeature) as exc:
        lower_source(src, "g.c")
    assert exc.value.feature == "computed goto"
    located(exc, 2, column)


# ----------------------------------------------------------------------------- against gcc

AGAINST_GCC = {
    "nested_break_out": (NESTED, [[]]),
    "backward": (BACKWARD, [[]]),
    "inlined_twice": (TWICE, [[]]),
    "cil": (CIL, [[0], [1], [5], [1 << 24], [1 << 30]]),
    "goto_loop_with_early_exit": (
        """int main() {
  int n = __VERIFIER_nondet_int(), k = 0;
  if (n < 0 || n > 50) return 0;
top:
  if (k >= n) goto done;
  k += 2;
  if (k == 7) goto fail;
  goto top;
done:
  __VERIFIER_assert(k >= n && k <= n + 1);
  return 0;
fail:
  __VERIFIER_assert(0);
  return 1;
}""",
        [[0], [1], [6], [7], [50]],
    ),
}


@pytest.mark.skipif(GCC is None, reason="gcc not installed")
@pytest.mark.parametrize("name", sorted(AGAINST_GCC))
def test_goto_programs_agree_with_gcc(name: str) -> None:
    src, inputs_list = AGAINST_GCC[name]
    program = lowered(src)
    for inputs in inputs_list:
        expected = run_gcc(src, inputs)
        assert run_ir(src, inputs).outcome == expected, inputs
        assert outcome(program, inputs) == expected, inputs
