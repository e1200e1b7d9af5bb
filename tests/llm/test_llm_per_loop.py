"""Samples shared out over the loops (each share pinned to its loop's line) and the pooled
Houdini check of eval-model, which proves what no single one-loop sample can."""

import pytest
from llm_programs import SOURCE
from quokka.invariants.completion import collect_states
from quokka.invariants.llm import LLMConfig
from quokka.invariants.llm.answers import answer_candidates
from quokka.invariants.llm.backend import SampleRequest, sample_per_loop, shares
from quokka.invariants.llm.grammar import AnswerGrammar
from quokka.invariants.llm.prompt import answer_grammar
from quokka.svcomp import evalmodel
from quokka.svcomp.evalmodel import EvalConfig
from quokka.verifier.frontend import lower_source

# SOURCE with steps of 2 and a second loop that counts `s` back down.
TWO_LOOPS = SOURCE.replace("s = s + 3;", "s = s + 2;").replace("  __VERIFIER_assert(s == 3 * n);\n", """\
  int j = 0;
  int t = s;
  while (j < n) {
    j = j + 1;
    t = t - 2;
  }
  __VERIFIER_assert(t == 0);
""")


class Recorder:
    """A backend that answers `After line L, insert assume(1);` for the line its grammar pins."""

    def __init__(self, constrains: bool) -> None:
        self.constrains = constrains
        self.requests: list[SampleRequest] = []

    def sample(self, messages, request):
        self.requests.append(request)
        (line,) = request.grammar.lines if len(request.grammar.lines) == 1 else (0,)
        return [f"After line {line}, insert assume(1);"] * request.n


@pytest.fixture(scope="module")
def two_loops():
    return lower_source(TWO_LOOPS, "two.c", "LP64")


def test_shares_split_n_evenly_larger_first():
    assert shares(8, 3) == [3, 3, 2] and shares(1, 2) == [1, 0] and sum(shares(7, 7)) == 7


def test_a_pinned_grammar_names_one_line_only():
    g = AnswerGrammar.of({31: ["x"], 40: ["a"]})
    pinned = g.pinned(40)
    assert pinned.lines == (40,)
    assert pinned.accepts("After line 40, insert assume(a >= 0);")
    assert not pinned.accepts("After line 31, insert assume(x >= 0);")
    with pytest.raises(ValueError):
        g.pinned(32)


def test_samples_are_shared_out_over_the_loops(two_loops):
    grammar = answer_grammar(two_loops)
    backend = Recorder(constrains=True)
    answers = sample_per_loop(backend, [], SampleRequest(n=5, seed=3, grammar=grammar))
    lines = [info.insert_after_line for info in two_loops.loops]
    assert [(r.n, r.grammar.lines, r.seed) for r in backend.requests] == [
        (3, (lines[0],), 3),
        (2, (lines[1],), 4),
    ]
    assert len(answers) == 5 and {a.split(",")[0] for a in answers} == {f"After line {ln}" for ln in lines}


def test_a_backend_that_does_not_constrain_gets_the_request_whole(two_loops):
    backend = Recorder(constrains=False)
    request = SampleRequest(n=5, grammar=answer_grammar(two_loops))
    sample_per_loop(backend, [], request)
    assert backend.requests == [request]
    plain = Recorder(constrains=True)
    LLMConfig(per_loop=False).sample(plain, [], request)
    assert plain.requests == [request]


def test_the_tiny_model_answers_for_each_loop_when_pinned(two_loops, tiny_model):
    from quokka.invariants.llm.local import LocalBackend
    from quokka.invariants.llm.prompt import build_messages

    backend = LocalBackend(tiny_model.directory, "fp32", "cpu", 1)
    request = SampleRequest(
        n=4, temperature=1.0, max_new_tokens=60, seed=2, grammar=answer_grammar(two_loops)
    )
    answers = sample_per_loop(backend, build_messages(two_loops, TWO_LOOPS), request)
    first, second = two_loops.loops
    assert len(answers) == 4
    for answer, info in zip(answers, [first, first, second, second], strict=True):
        lines = answer.splitlines()
        assert all(ln.startswith(f"After line {info.insert_after_line},") for ln in lines), answer
        found = [c for c in answer_candidates(answer, two_loops, 0) if not c.rejected]
        assert all(c.loop_id == info.id for c in found)


def test_pooled_samples_prove_what_no_single_sample_does(two_loops):
    first, second = (info.insert_after_line for info in two_loops.loops)
    judge = evalmodel._Judge(two_loops, collect_states(two_loops), EvalConfig(check_s=10))
    one = answer_candidates(f"After line {first}, insert assume(s == 2*i && i <= n && i >= 0);", two_loops, 0)
    two = answer_candidates(
        f"After line {second}, insert assume(t == s - 2*j && j <= n && s == 2*n);", two_loops, 1
    )
    assert not judge.sample(one).houdini and not judge.sample(two).houdini
    assert judge.proves([*one, *two])
    wrong = answer_candidates(f"After line {second}, insert assume(t == s);", two_loops, 2)
    assert not judge.proves([*one, *wrong])  # `t == s` is false after one step: nothing proves t == 0
