import time

import pytest
from llm_programs import LINE
from quokka.invariants.llm.answers import MAX_ANSWER_CHARS, parse_answers, scan_answer
from quokka.invariants.llm.dedup import Deduplicator, deduplicate
from quokka.verifier.ir import IntType


def one(program, answer):
    return parse_answers([answer], program)


def accepted(candidates):
    return [c.text for c in candidates if not c.rejected]


def reasons(candidates):
    return [c.rejected for c in candidates if c.rejected]


def test_good_answer_becomes_one_candidate_per_conjunct(program):
    cands = one(program, f"After line {LINE}, insert assume(s == 3*i && i <= n);")
    assert accepted(cands) == ["s == 3*i", "i <= n"]
    assert all(c.loop_id == program.loops[0].id and c.proposer == "llm" and c.sample == 0 for c in cands)
    assert all(isinstance(c.expr.type, IntType) for c in cands)
    assert cands[0].raw == f"After line {LINE}, insert assume(s == 3*i && i <= n)"


def test_prefix_is_found_case_insensitively_with_loose_punctuation(program):
    cands = one(program, f"Sure!\nafter  line {LINE}: Insert Assume (i >= 0)\nDone.")
    assert accepted(cands) == ["i >= 0"]


def test_cot_answer_is_read_only_inside_the_annotation_block(program):
    answer = (
        f"Maybe After line {LINE}, insert assume(s == 7*i); no, s grows by 3.\n"
        f"/*@\nAfter line {LINE}, insert assume(s == 3*i);\n@*/"
    )
    assert accepted(one(program, answer)) == ["s == 3*i"]


@pytest.mark.parametrize(
    ("cond", "reason"),
    [
        ("n = 3", "assignment"),
        ("i++ < n", "++"),
        ("__VERIFIER_nondet_int() > 0", "function call"),
        ("abort(), 1", "function call"),
        ("nope > 0", "undeclared identifier 'nope'"),
        ("i > 1.5", "constant"),
        ("", "empty invariant"),
    ],
)
def test_malicious_or_malformed_conditions_are_rejected_with_a_reason(program, cond, reason):
    cands = one(program, f"After line {LINE}, insert assume({cond});")
    assert accepted(cands) == []
    assert len(reasons(cands)) == 1
    assert reason in reasons(cands)[0]
    assert cands[0].loop_id == program.loops[0].id


def test_unbalanced_parentheses_are_rejected_and_the_next_segment_still_read(program):
    answer = f"After line {LINE}, insert assume((i < n);\nAfter line {LINE}, insert assume(i >= 0);"
    cands = one(program, answer)
    assert reasons(cands) == ["unbalanced parentheses"]
    assert accepted(cands) == ["i >= 0"]


def test_parentheses_inside_quotes_do_not_count(program):
    cands = one(program, f"After line {LINE}, insert assume(')' != i);")
    assert accepted(cands) == ["i != 41"]  # readable printing puts the constant on the right


def test_wrong_insertion_line_is_rejected(program):
    cands = one(program, "After line 3, insert assume(i >= 0);")
    assert reasons(cands) == [f"line 3 is not an insertion point (insertion points: {LINE})"]


def test_answer_without_any_segment_is_recorded(program):
    cands = one(program, "I think the loop terminates.")
    assert [c.rejected for c in cands] == ["no 'After line X, insert assume(COND);' in the answer"]


def test_a_10000_character_answer_is_rejected_quickly(program):
    answer = f"After line {LINE}, insert assume(" + "(" * 5000 + "i" + ")" * 4990
    assert len(answer) > MAX_ANSWER_CHARS
    start = time.monotonic()
    cands = one(program, answer)
    assert time.monotonic() - start < 0.5
    assert len(cands) == 1 and "answer too long" in cands[0].rejected
    assert len(cands[0].raw) <= 200


def test_long_or_deeply_nested_expressions_are_rejected(program):
    deep = f"After line {LINE}, insert assume(" + "(" * 60 + "i" + ")" * 60 + ");"
    long = f"After line {LINE}, insert assume(" + "i+" * 400 + "i);"
    assert "nested deeper" in one(program, deep)[0].rejected
    assert "longer than" in one(program, long)[0].rejected


def test_sample_index_follows_the_answer(program):
    cands = parse_answers(["junk", f"After line {LINE}, insert assume(i >= 0);"], program)
    assert [(c.sample, bool(c.rejected)) for c in cands] == [(0, True), (1, False)]


def test_trivially_true_condition_is_not_a_candidate(program):
    cands = one(program, f"After line {LINE}, insert assume(1);")
    assert reasons(cands) == ["trivially true"]


def test_fingerprint_scan_never_raises_on_odd_text():
    for text in ["After line 99999999999999, insert assume(", 'After line 1, insert assume("', "\x00" * 50]:
        scan_answer(text)


# ----------------------------------------------------------------------------- deduplication


def test_semantically_equal_candidates_are_merged(program):
    answer = " ".join(
        f"After line {LINE}, insert assume({c});"
        for c in ["s == 3*i", "3*i == s", "s - 3*i == 0", "!(s != i*3)", "i <= n", "n >= i", "i < n + 1"]
    )
    kept = deduplicate(one(program, answer), program)
    assert accepted(kept) == ["s == 3*i", "i <= n"]


def test_different_candidates_are_kept(program):
    answer = " ".join(
        f"After line {LINE}, insert assume({c});" for c in ["i <= n", "i < n", "s >= 0", "s > 0"]
    )
    assert accepted(deduplicate(one(program, answer), program)) == ["i <= n", "i < n", "s >= 0", "s > 0"]


def test_equivalence_respects_the_variables_types(program):
    # Both hold for every int i, though not for every mathematical integer.
    answer = " ".join(
        f"After line {LINE}, insert assume({c});" for c in ["i <= 2147483647", "i >= -2147483648"]
    )
    cands = one(program, answer)
    assert len(accepted(cands)) == 2
    assert accepted(deduplicate(cands, program)) == ["i <= 2147483647"]


def test_deduplicator_remembers_across_rounds(program):
    dedup = Deduplicator(program)
    first = deduplicate(one(program, f"After line {LINE}, insert assume(i <= n);"), program, dedup)
    second = deduplicate(one(program, f"After line {LINE}, insert assume(n >= i);"), program, dedup)
    assert accepted(first) == ["i <= n"] and accepted(second) == []


def test_identical_rejections_are_reported_once(program):
    cands = parse_answers(["junk", "junk", "other junk"], program)
    assert [c.raw for c in deduplicate(cands, program)] == ["junk", "other junk"]
