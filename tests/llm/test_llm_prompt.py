import subprocess
import sys

import pytest
from llm_programs import LINE, SOURCE
from quokka.invariants.llm.answers import parse_answers
from quokka.invariants.llm.prompt import (
    MAX_ASSERTIONS,
    NO_ASSERTIONS,
    NOT_REPEATED,
    PromptConfig,
    build_messages,
    format_answer,
    messages_for_context,
    number_lines,
    prompt_data,
)
from quokka.invariants.protocol import ProposalContext, loop_contexts
from quokka.verifier.errors import InputError
from quokka.verifier.frontend import lower_source


def test_number_lines_marks_every_non_blank_line():
    out = number_lines("int x;\n\n  x = 1;").splitlines()
    assert out == ["int x;  // line 1", "", "  x = 1;  // line 3"]


def test_messages_have_numbered_program_and_insertion_points(program):
    messages = build_messages(program, SOURCE)
    assert [m["role"] for m in messages] == ["system", "user"]
    user = messages[-1]["content"]
    assert "while (i < n) {  // line 11" in user
    assert f"- After line {LINE}: a loop (variables in scope: int n, int i, int s)" in user
    assert "After line X, insert assume(COND);" in user


def test_the_assertions_are_repeated_after_the_insertion_points(program):
    user = build_messages(program, SOURCE)[-1]["content"]
    points = user.index(f"- After line {LINE}: a loop")
    assert user.index("Assertions:\n- at line 15: s == 3 * n\n") > points


def test_a_program_without_assertion_calls_says_so():
    source = SOURCE.replace("__VERIFIER_assert(s == 3 * n);", "if (s != 3 * n) reach_error();")
    program = lower_source(source, "err.c", "LP64")
    assert f"Assertions:\n{NO_ASSERTIONS}\n" in build_messages(program, source)[-1]["content"]


def test_at_most_max_assertions_are_repeated():
    many = "\n".join(f"  __VERIFIER_assert(s >= {k});" for k in range(MAX_ASSERTIONS + 2))
    source = SOURCE.replace("  __VERIFIER_assert(s == 3 * n);", many)
    user = build_messages(lower_source(source, "many.c", "LP64"), source)[-1]["content"]
    last = MAX_ASSERTIONS - 1
    assert f"- at line {15 + last}: s >= {last}\n- and 2 more: see the program\n" in user


def test_an_assertion_too_deep_to_print_is_not_repeated():
    source = SOURCE.replace("__VERIFIER_assert(s == 3 * n);", "__VERIFIER_assert(" + "- " * 300 + "s == 0);")
    program = lower_source(source, "deep.c", "LP64")
    assert f"Assertions:\n{NOT_REPEATED}\n" in build_messages(program, source)[-1]["content"]


def test_build_messages_is_pure(program):
    messages = build_messages(program, SOURCE)
    assert messages == build_messages(program, SOURCE)
    marked = [line for line in messages[-1]["content"].splitlines() if "// line" in line]
    assert marked == ["  while (i < n) {  // line 11", "  __VERIFIER_assert(s == 3 * n);  // line 15"]


def test_few_shot_examples_come_as_user_assistant_pairs(program):
    messages = build_messages(program, SOURCE, config=PromptConfig(few_shot=2))
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert messages[2]["content"] == prompt_data().examples[0].answer
    assert "while (1) {  // line 27" in messages[1]["content"]


def test_cot_variant_asks_for_an_annotation_block(program):
    messages = build_messages(program, SOURCE, config=PromptConfig("quokka-cot", few_shot=1))
    assert "/*@ ... @*/" in messages[-1]["content"]
    assert messages[2]["content"].startswith("/*@\n") and messages[2]["content"].endswith("\n@*/")


def test_unknown_variant_is_an_input_error(program):
    with pytest.raises(InputError, match="unknown prompt variant"):
        build_messages(program, SOURCE, config=PromptConfig("nope"))


def test_counterexamples_are_shown_with_c_names(program):
    loop = program.loops[0].id
    messages = build_messages(program, SOURCE, ctis={loop: ({"n": 5, "i": 2, "s": 7},)})
    assert f"- at the loop after line {LINE}: n = 5, i = 2, s = 7" in messages[-1]["content"]
    assert "not inductive" in messages[-1]["content"]


def test_context_without_source_is_refused(program):
    context = ProposalContext(program, None, loop_contexts(program))
    with pytest.raises(InputError, match="source"):
        messages_for_context(context)


@pytest.mark.parametrize("variant", ["quokka", "quokka-cot"])
def test_format_answer_round_trips_through_the_parser(program, variant):
    answer = format_answer([(LINE, "s == 3*i"), (LINE, "i <= n")], PromptConfig(variant))
    candidates = parse_answers([answer], program)
    assert [(c.text, c.rejected) for c in candidates] == [("s == 3*i", None), ("i <= n", None)]


def test_prompt_module_does_not_import_torch():
    code = (
        "import sys, quokka.invariants.llm, quokka.invariants.llm.prompt, quokka.invariants.llm.serve;"
        "print('torch' in sys.modules, 'transformers' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_the_program_is_shown_without_its_harness_and_with_only_the_named_lines_marked(program):
    user = build_messages(program, SOURCE)[-1]["content"]
    assert "reach_error" not in user and "extern" not in user and "void assume_abort_if_not" not in user
    assert "  int n = __VERIFIER_nondet_int();\n" in user  # unmarked: no part of the prompt names it
    assert "  __VERIFIER_assert(s == 3 * n);  // line 15\n" in user  # the assertion's line
    assert user.count("// line") == 2


def test_a_program_that_cannot_be_outlined_is_shown_whole_with_every_line_numbered():
    source = SOURCE.replace("__VERIFIER_assert(s == 3 * n);", "__VERIFIER_assert(" + "- " * 300 + "s == 0);")
    user = build_messages(lower_source(source, "deep.c", "LP64"), source)[-1]["content"]
    assert "void reach_error(void) {}  // line 3" in user
