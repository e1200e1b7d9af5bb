"""The fast paths of local sampling decode what plain decoding does: the output layer restricted to
the grammar's support, rows with equal answer prefixes sharing a cache row, the forced starts run
together, the part of a prompt shared with the last one kept, the decoding-step attention."""

import pytest
from llm_programs import LINE, SOURCE

pytest.importorskip("torch")
pytest.importorskip("transformers")

import torch
from quokka.invariants.llm import local
from quokka.invariants.llm.attention import NAME, decode_attention
from quokka.invariants.llm.backend import SampleRequest
from quokka.invariants.llm.decoding import Head, draw, head_of
from quokka.invariants.llm.grammar import GrammarState
from quokka.invariants.llm.local import load_model
from quokka.invariants.llm.prompt import answer_grammar, build_messages


@pytest.fixture(scope="module")
def untrained(tiny_model, tmp_path_factory):
    """A model that never saw an answer: flat distributions, so sampled rows soon differ."""
    from tinymodel import build_model
    from transformers import AutoTokenizer

    directory = tmp_path_factory.mktemp("untrained")
    tokenizer = AutoTokenizer.from_pretrained(str(tiny_model.directory))
    tokenizer.save_pretrained(str(directory))
    build_model(directory, tokenizer).save_pretrained(str(directory))
    return load_model(directory, "fp32")


def all_logits(lm, ids):
    """The logits over every token after `ids`, the whole sequence run without a cache."""
    with torch.inference_mode():
        return lm.model(input_ids=torch.tensor([list(ids)])).logits[0, -1]


def greedy_reference(lm, prompt, constraint, forced, steps):
    """Greedy decoding under the grammar, the plain way: at each step the whole sequence is run
    again and the likeliest of the tokens the grammar allows is taken."""
    state = constraint.grammar.advance(GrammarState(), lm.tokenizer.decode(forced))
    tokens = []
    for _ in range(steps):
        logits = all_logits(lm, [*prompt, *forced, *tokens])
        allowed = constraint.allowed(state)
        token = max(allowed, key=lambda t: float(logits[t]))
        if token in lm.eos:
            break
        tokens.append(token)
        state = constraint.step(state, token)
        if constraint.grammar.must_stop(state):
            break
    return tokens


@pytest.mark.parametrize("trained", [True, False])
def test_constrained_greedy_decoding_equals_the_plain_way(tiny_model, untrained, program, trained):
    lm = load_model(tiny_model.directory, "fp32") if trained else untrained
    grammar = answer_grammar(program).pinned(LINE)
    request = SampleRequest(n=3, temperature=0, max_new_tokens=24, grammar=grammar)
    ids = lm.encode(build_messages(program, SOURCE))
    rows = lm.sample_ids(ids, [request])
    forced = lm.forced_ids(grammar)
    expected = greedy_reference(lm, ids[0].tolist(), lm.constraint(request), forced, 24)
    assert rows == [[*forced, *expected]] * 3
    assert lm.model.get_output_embeddings().out_features == len(lm.tokenizer)  # restored after


def test_every_row_samples_from_the_logits_of_its_own_prefix(untrained, program, monkeypatch):
    """Rows that differ get cache rows of their own (the cache is rebuilt as prefixes split): the
    logits each row sampled from equal those of its whole sequence run anew."""
    lm = untrained
    seen = []
    step = local.LocalModel._step

    def recording(self, batch, logits, request, generator):
        for row, active in enumerate(batch.active):
            if active:
                seen.append((tuple(batch.tokens[row]), logits[batch.slots[row]].clone(), batch.head))
        return step(self, batch, logits, request, generator)

    monkeypatch.setattr(local.LocalModel, "_step", recording)
    grammar = answer_grammar(program).pinned(LINE)
    request = SampleRequest(n=6, temperature=2.0, max_new_tokens=12, seed=4, grammar=grammar)
    ids = lm.encode(build_messages(program, SOURCE + "int split = 1;\n"))
    rows = lm.sample_ids(ids, [request])
    assert len({tuple(r) for r in rows}) > 2  # the rows split
    forced, prompt = lm.forced_ids(grammar), ids[0].tolist()
    assert seen and all(head.tokens is not None for _, _, head in seen)  # the restricted output layer
    for tokens, logits, head in seen:
        expected = head.select(all_logits(lm, [*prompt, *forced, *tokens]).unsqueeze(0))[0]
        torch.testing.assert_close(logits, expected, atol=1e-4, rtol=1e-4)


def test_a_prompt_reuses_the_part_it_shares_with_the_last_one(untrained, program):
    lm = untrained
    first = lm.encode(build_messages(program, SOURCE + "int a = 1;\n"))
    second = lm.encode(build_messages(program, SOURCE + "int b = 2;\n"))
    shared = local._shared_prefix(first[0].tolist(), second[0].tolist())
    assert 50 < shared < second.shape[1]
    shapes = []
    hook = lm.model.register_forward_pre_hook(
        lambda mod, args, kwargs: shapes.append(tuple(kwargs["input_ids"].shape)), with_kwargs=True
    )
    try:
        with torch.inference_mode():
            lm._prefill(first)
            kept = lm._prefill(second)
            lm._prompt = None
            fresh = lm._prefill(second)
    finally:
        hook.remove()
    assert shapes[1] == (1, second.shape[1] - shared)
    torch.testing.assert_close(kept.logits, fresh.logits, atol=1e-4, rtol=1e-4)
    for (k1, v1), (k2, v2) in zip(kept.layers, fresh.layers, strict=True):
        torch.testing.assert_close(k1, k2, atol=1e-4, rtol=1e-4)
        torch.testing.assert_close(v1, v2, atol=1e-4, rtol=1e-4)


class Attention:
    num_key_value_groups = 2
    is_causal = True


def test_decode_attention_equals_sdpa():
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    torch.manual_seed(0)
    query, key, value = torch.randn(3, 4, 1, 8), torch.randn(3, 2, 10, 8), torch.randn(3, 2, 10, 8)
    mask = torch.ones(3, 1, 1, 10, dtype=torch.bool)
    mask[0, ..., 7:] = False
    additive = torch.zeros(3, 1, 1, 10).masked_fill(~mask, float("-inf"))
    for m in (mask, additive, None):
        mine, _ = decode_attention(Attention(), query, key, value, m, scaling=0.3)
        theirs, _ = sdpa_attention_forward(Attention(), query, key, value, m, scaling=0.3)
        assert mine.shape == (3, 1, 4, 8)
        torch.testing.assert_close(mine, theirs, atol=1e-5, rtol=1e-5)
    longer = torch.randn(3, 4, 5, 8)  # not a decoding step: sdpa's own result
    mine, _ = decode_attention(Attention(), longer, key, value, None)
    torch.testing.assert_close(mine, sdpa_attention_forward(Attention(), longer, key, value, None)[0])


def test_a_model_on_the_cpu_decodes_with_decode_attention(tiny_model):
    assert load_model(tiny_model.directory, "fp32").model.config._attn_implementation == NAME


def test_draw_picks_columns_in_proportion_to_their_weights():
    weights = torch.tensor([[0.0, 1.0, 3.0, 0.0, 6.0], [5.0, 0.0, 0.0, 0.0, 0.0]]).repeat(10000, 1)
    picked = draw(weights, torch.Generator().manual_seed(0))
    first = torch.bincount(picked[0::2], minlength=5).float() / 10000
    torch.testing.assert_close(first, torch.tensor([0.0, 0.1, 0.3, 0.0, 0.6]), atol=0.015, rtol=0)
    assert (picked[1::2] == 0).all()


def test_the_head_scores_the_union_of_the_grammars_supports(tiny_model, program):
    lm = load_model(tiny_model.directory, "fp32")
    grammar = answer_grammar(program)
    request = SampleRequest(grammar=grammar.pinned(LINE))
    constraint = lm.constraint(request)
    assert lm.constraint(SampleRequest(n=2, grammar=grammar.pinned(LINE))) is constraint  # kept
    head = head_of([constraint, constraint], request)
    assert head.tokens == constraint.support() and len(head.tokens) < len(lm.tokenizer) / 2
    token = head.tokens[3]
    assert head.token(3) == token and head.columns([token, -5]) == [3]
    logits = torch.arange(float(len(lm.tokenizer))).unsqueeze(0)
    assert head.select(logits)[0, 3] == token
    assert head_of([constraint, None], request).tokens is None  # an unconstrained row
    assert head_of([constraint], SampleRequest(top_p=0.9)).tokens is None  # top-p: all tokens
    assert Head().token(7) == 7 and Head().columns([4]) == [4]
