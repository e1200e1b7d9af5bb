"""The answer grammar of constrained decoding: what it accepts, its token-level lifting, and that
everything it accepts parses into candidates."""

import random
import string

import pytest
from llm_programs import LINE
from quokka.invariants.llm.answers import answer_candidates
from quokka.invariants.llm.grammar import AnswerGrammar, GrammarState, TokenConstraint, Vocabulary
from quokka.invariants.llm.prompt import PromptConfig, answer_grammar, format_answer

G = AnswerGrammar.of({31: ["x", "y", "xy"], 40: ["a"]})


@pytest.mark.parametrize(
    "answer",
    [
        "After line 31, insert assume(x == y);",
        "After line 31, insert assume((x <= y && 0 < x + 1) && y <= x);",
        "After line 31, insert assume(!(x<y));\nAfter line 40, insert assume(a >= -5);",
        "After line 31, insert assume(xy * x - -3 != 0 || x % 2 == 1);",
        " After line 40, insert assume(a);",
    ],
)
def test_accepts_answers_in_the_format(answer):
    assert G.accepts(answer)


@pytest.mark.parametrize(
    "answer, why",
    [
        ("After line 32, insert assume(x);", "not an insertion point"),
        ("After line 31, insert assume(a == 1);", "a is not in scope at line 31"),
        ("After line 31, insert assume(x = 1);", "assignment"),
        ("After line 31, insert assume(x-- > 0);", "decrement"),
        ("After line 31, insert assume(x < = 1);", "split operator"),
        ("After line 31, insert assume(010 == x);", "octal literal"),
        ("After line 31, insert assume(x << 2 == y);", "shift"),
        ("After line 31, insert assume(f(x));", "call"),
        ("After line 31, insert assume((x == y);", "unbalanced"),
        ("After line 31, insert assume(x == y)", "no semicolon"),
        ("After line 31, insert assume();", "empty"),
        ("After line 31, insert assume(x y);", "two operands"),
        ("after line 31, insert assume(x);", "not the exact format"),
    ],
)
def test_rejects_everything_else(answer, why):
    assert not G.accepts(answer), why


def test_prefixes_of_answers_are_alive_and_only_whole_answers_may_stop():
    answer = "After line 31, insert assume(x == y);"
    state = G.start()
    for k, ch in enumerate(answer):
        assert not G.can_stop(state), answer[:k]
        state = G.advance(state, ch)
        assert state is not None, answer[: k + 1]
    assert G.can_stop(state)


def test_answer_count_is_bounded():
    line = "After line 40, insert assume(a);"
    assert G.max_lines == 4
    assert G.accepts("\n".join([line] * 4)) and not G.accepts("\n".join([line] * 5))


def test_condition_length_is_bounded():
    grammar = AnswerGrammar.of({3: ["v"]})
    assert grammar.accepts(f"After line 3, insert assume({'v + ' * 50}v);")
    assert not grammar.accepts(f"After line 3, insert assume({'v + ' * 80}v);")


def vocabulary() -> list[str]:
    """A character vocabulary with some multi-character tokens, as BPE vocabularies have."""
    chars = [c for c in string.printable if c not in "\t\r\x0b\x0c"]
    return [*chars, "After line ", ", insert assume(", " == ", " && ", "x", "xy", "s == 9", ");", ");\n", ""]


def test_allowed_tokens_are_exactly_those_the_grammar_accepts():
    texts, eos = vocabulary(), len(vocabulary())
    constraint = TokenConstraint(G, [*texts, ""], [eos])
    for prefix in ["", "After line 3", "After line 31, insert assume(x", "After line 31, insert assume(x <"]:
        state = G.advance(G.start(), prefix)
        expected = [i for i, t in enumerate(texts) if t and G.advance(state, t) is not None]
        assert constraint.allowed(state) == expected, prefix
    done = G.advance(G.start(), "After line 40, insert assume(a);")
    assert constraint.allowed(done) == [texts.index("\n"), eos]
    assert constraint.step(done, eos) == done and constraint.step(G.start(), eos) is None


def random_answer(constraint: TokenConstraint, rng: random.Random) -> str:
    state, text = GrammarState(), ""
    while True:
        allowed = constraint.allowed(state)
        if (constraint.grammar.can_stop(state) and rng.random() < 0.5) or not allowed:
            return text
        token = rng.choice([t for t in allowed if t not in constraint.eos])
        state, text = constraint.step(state, token), text + constraint.texts[token]


def test_every_answer_of_the_grammar_parses(program):
    """Random walks through the grammar of the tests' program: the frontend parses every one."""
    grammar = answer_grammar(program)
    constraint = TokenConstraint(grammar, vocabulary(), [])
    rng = random.Random(0)
    answers = [random_answer(constraint, rng) for _ in range(60)]
    whole = [a for a in answers if grammar.accepts(a)]  # the others ran out of condition length
    assert len(whole) >= 20
    for answer in whole:
        rejected = [c.rejected for c in answer_candidates(answer, program, 0) if c.rejected]
        assert all(r == "trivially true" for r in rejected), (answer, rejected)


def test_grammar_of_a_program_is_its_insertion_points_and_scopes(program):
    grammar = answer_grammar(program)
    assert [line for line, _ in grammar.scopes] == [LINE]
    assert {"i", "n", "s"} <= grammar.scopes[0][1]
    assert grammar.accepts(format_answer([(LINE, "s == 3 * i"), (LINE, "i <= n")]))
    assert answer_grammar(program, PromptConfig("quokka-cot")) is None


def test_allowed_tokens_near_the_length_limit_are_not_taken_from_the_cache():
    grammar = AnswerGrammar(G.scopes, max_cond_chars=12)
    texts = vocabulary()
    constraint = TokenConstraint(grammar, texts, [])
    early = grammar.advance(grammar.start(), "After line 31, insert assume(x")
    late = grammar.advance(grammar.start(), "After line 31, insert assume(x == x == x")
    assert texts.index(" == ") in constraint.allowed(early)
    assert texts.index(" == ") not in constraint.allowed(late)
    assert texts.index(" == ") in constraint.allowed(early._replace(chars=2))


def test_support_holds_every_token_any_state_allows(program):
    """The support (what a sampler scores) is a superset of the allowed tokens, on random walks."""
    grammar = answer_grammar(program)
    texts = [*vocabulary(), "é", "After", "while", "assume(s", ";\nAfter line"]
    constraint = TokenConstraint(grammar, texts, [len(texts)])
    support = set(constraint.support())
    assert len(texts) in support and texts.index("é") not in support and texts.index("while") not in support
    assert texts.index("") not in support and texts.index("assume(s") in support
    rng = random.Random(1)
    for _ in range(40):
        state = GrammarState()
        while (allowed := constraint.allowed(state)) and not grammar.must_stop(state):
            assert set(allowed) <= support
            state = constraint.step(state, rng.choice(allowed)) or state
            if grammar.can_stop(state) and rng.random() < 0.3:
                break


def test_a_pinned_answer_must_stop_after_its_last_line():
    pinned = G.pinned(31)
    one = pinned.advance(pinned.start(), "After line 31, insert assume(x);")
    two = pinned.advance(one, "\nAfter line 31, insert assume(y);")
    assert pinned.can_stop(one) and not pinned.must_stop(one)
    assert pinned.must_stop(two) and pinned.advance(two, "\n") is None
    assert not pinned.must_stop(pinned.advance(pinned.start(), "After line 31, insert assume(x)"))


def test_vocabulary_lists_the_tokens_within_an_alphabet():
    texts = ["ab", "a", "b c", "", "é", "ba", "c"]
    vocabulary = Vocabulary(texts, [5])
    assert vocabulary.within("ab") == [0, 1]  # never "" (special), never the end token
    assert vocabulary.within("abc ") == [0, 1, 2, 6]
    assert vocabulary.by_first == {"a": [0, 1], "b": [2], "é": [4], "c": [6]}
    constraint = TokenConstraint(G, vocabulary)
    assert constraint.texts is texts and constraint.eos == {5}
