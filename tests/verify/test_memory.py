"""The heap model (`frontend.memory`): pointers to structs as object numbers, one array per field,
blocks for `int *a = malloc(...)`. Verdicts must be sound: every TRUE holds in C, every FALSE is
reached by the compiled program (gcc replay), a null dereference or an access outside a block
ends a path instead of reaching the error."""

from __future__ import annotations

from pathlib import Path

import pytest
from marks import needs_gcc
from quokka.invariants.verify import verify_path
from quokka.verifier.errors import FrontendError, UnsupportedFeature
from quokka.verifier.exec.interp import run
from quokka.verifier.frontend import lower_source
from quokka.verifier.options import Options
from quokka.verifier.verdict.results import Verdict

OPTIONS = Options(timeout_s=20, proposers=())
PRELUDE = """\
#include <stdlib.h>
extern int __VERIFIER_nondet_int(void);
extern void reach_error(void);
void __VERIFIER_assert(int c) { if (!c) reach_error(); }
typedef struct node { struct node *next; int data; } Node;
"""


def verify(tmp_path: Path, body: str):  # type: ignore[no-untyped-def]
    path = tmp_path / "heap.c"
    path.write_text(PRELUDE + "int main(void) {\n" + body + "\nreturn 0;\n}\n")
    return verify_path(path, OPTIONS)


LIST = """
Node *head = malloc(sizeof(Node));
head->next = NULL; head->data = 0;
Node *end = head;
while (__VERIFIER_nondet_int()) {
  end->next = malloc(sizeof(Node));
  end = end->next;
  end->next = NULL;
  end->data = 1;
  __VERIFIER_assert(end != NULL);
}
__VERIFIER_assert(head->data == 0);
end = head->next;
while (end != NULL) { __VERIFIER_assert(end->data CMP); end = end->next; }
"""


def test_new_cells_are_not_the_head(tmp_path: Path) -> None:
    result = verify(tmp_path, LIST.replace("CMP", "== 1").split("end = head->next;")[0])
    assert result.verdict is Verdict.TRUE, result.reason


@needs_gcc
def test_a_wrong_claim_about_the_list_is_false_and_replays_in_gcc(tmp_path: Path) -> None:
    result = verify(tmp_path, LIST.replace("CMP", "== 2"))
    assert result.verdict is Verdict.FALSE, result.reason
    assert result.counterexample is not None and "gcc" in result.counterexample.confirmed_by


TWO_ALLOCATIONS = "Node *p = malloc(sizeof(Node)); Node *q = malloc(sizeof(Node));\nq->data = 5; p->data = 3;"
COPIED_POINTER = "Node *p = malloc(sizeof(Node)); p->data = 3; Node *q = p;\nq->data = 7;"


@pytest.mark.parametrize(
    ("body", "check", "verdict"),
    [
        pytest.param(TWO_ALLOCATIONS, "q->data == 5", Verdict.TRUE, id="two-allocations-are-distinct"),
        pytest.param(TWO_ALLOCATIONS, "q->data == 3", Verdict.FALSE, id="two-allocations-are-distinct-false"),
        pytest.param(COPIED_POINTER, "p->data == 7", Verdict.TRUE, id="a-copied-pointer-aliases"),
        pytest.param(COPIED_POINTER, "p->data == 3", Verdict.FALSE, id="a-copied-pointer-aliases-false"),
    ],
)
def test_objects_are_distinct_unless_a_pointer_is_copied(
    tmp_path: Path, body: str, check: str, verdict: Verdict
) -> None:
    assert verify(tmp_path, f"{body}\n__VERIFIER_assert({check});").verdict is verdict


def test_a_null_dereference_ends_the_path_before_the_error(tmp_path: Path) -> None:
    body = "Node *p = NULL;\nif (__VERIFIER_nondet_int()) p->data = 1;\nelse return 0;\n__VERIFIER_assert(0);"
    result = verify(tmp_path, body)
    assert result.verdict is Verdict.TRUE, result.reason


def test_calloc_zeroes_the_fields(tmp_path: Path) -> None:
    body = "Node *p = calloc(1, sizeof(Node));\n__VERIFIER_assert(p->data == 0 && p->next == NULL);"
    assert verify(tmp_path, body).verdict is Verdict.TRUE


def test_malloc_does_not_zero_the_fields(tmp_path: Path) -> None:
    body = "Node *p = malloc(sizeof(Node));\n__VERIFIER_assert(p->next == NULL);"
    assert verify(tmp_path, body).verdict is not Verdict.TRUE


BLOCK = """
int n = __VERIFIER_nondet_int();
if (n <= 0 || n > 1000) return 0;
int *a = malloc(sizeof(int) * n);
for (int i = 0; i < n; i++) a[i] = i % 2 == 0 ? 20 : 0;
int s = 0;
for (int i = 0; i < n; i++) s += *(a + i);
__VERIFIER_assert(s CMP);
"""


@needs_gcc
def test_a_block_from_malloc_is_an_array_with_a_length(tmp_path: Path) -> None:
    result = verify(tmp_path, BLOCK.replace("CMP", "<= 2 * n"))
    assert result.verdict is Verdict.FALSE, result.reason
    assert result.counterexample is not None and "gcc" in result.counterexample.confirmed_by


def test_an_access_outside_the_block_ends_the_path(tmp_path: Path) -> None:
    body = (
        "int *a = malloc(4 * sizeof(int));\nif (__VERIFIER_nondet_int()) { a[4] = 1; __VERIFIER_assert(0); }"
    )
    assert verify(tmp_path, body).verdict is Verdict.TRUE


def test_the_interpreter_runs_the_heap_model() -> None:
    program = lower_source(PRELUDE + "int main(void) {" + LIST.replace("CMP", "== 2") + "return 0; }", "l.c")
    assert run(program, [0]).outcome == "exit"
    assert run(program, [1, 1, 0]).outcome == "error"
    assert any(v.kind == "heap" for v in program.variables)


@pytest.mark.parametrize(
    ("body", "feature"),
    [
        ("Node *p = malloc(sizeof(Node)); Node *q = p + 1;", "pointer arithmetic"),
        ("Node *p = malloc(sizeof(Node)); Node *q = p; int b = p < q;", "pointer comparison"),
        ("Node *p = malloc(sizeof(Node)); long x = (long)p;", "pointer converted to an integer"),
        ("Node *p = (Node *)16;", "integer converted to a pointer"),
        ("Node **pp = 0; int x = pp != 0;", "pointer to a pointer"),
        ("int x = 0; int *a = &x; *a = 1;", "address-of"),
        ("Node n; n.data = 1;", "struct"),
    ],
)
def test_what_the_model_does_not_cover_is_a_located_unsupported_feature(body: str, feature: str) -> None:
    with pytest.raises(UnsupportedFeature, match=rf"m\.c:\d+:\d+: unsupported feature: {feature}"):
        lower_source(PRELUDE + "int main(void) {\n" + body + "\nreturn 0; }", "m.c")


def test_a_missing_field_is_an_error() -> None:
    with pytest.raises(FrontendError, match=r"m\.c:\d+:\d+: struct node has no field 'value'"):
        lower_source(PRELUDE + "int main(void) { Node *p = malloc(sizeof(Node)); return p->value; }", "m.c")


@pytest.mark.parametrize(("data_model", "sizes"), [("LP64", (24, 16)), ("ILP32", (12, 8))])
def test_sizeof_a_struct_follows_gcc(data_model: str, sizes: tuple[int, int]) -> None:
    src = PRELUDE + (
        "struct s { char c; long l; int i; };\n"
        f"int main(void) {{ __VERIFIER_assert(sizeof(struct s) == {sizes[0]} && sizeof(Node) == {sizes[1]});"
        " return 0; }"
    )
    assert run(lower_source(src, "s.c", data_model), []).outcome == "exit"
    wrong = src.replace(f"== {sizes[0]}", f"== {sizes[0] + 4}")
    assert run(lower_source(wrong, "s.c", data_model), []).outcome == "error"
