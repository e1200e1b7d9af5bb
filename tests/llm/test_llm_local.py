import argparse
import time

import pytest
from llm_programs import LINE, SOURCE

pytest.importorskip("torch")
pytest.importorskip("transformers")

import torch
from quokka.invariants.llm import LLMConfig, LLMProposer, ModelSettings, make_llm_proposer
from quokka.invariants.llm.answers import answer_candidates
from quokka.invariants.llm.backend import ModelError, SampleRequest
from quokka.invariants.llm.cli_model import register_serve
from quokka.invariants.llm.endpoint import EndpointBackend
from quokka.invariants.llm.local import (
    LocalBackend,
    choose_dtype,
    cpu_has_bf16,
    load_model,
    render_prompt,
)
from quokka.invariants.llm.prompt import answer_grammar, build_messages
from quokka.invariants.llm.serve import model_server
from quokka.invariants.protocol import ProposalContext, loop_contexts

SETTINGS = ModelSettings(max_new_tokens=72, dtype="fp32", constrained=False)


def context(program):
    return ProposalContext(program, SOURCE, loop_contexts(program), {}, 60.0, 0)


def summary(candidates):
    accepted = [(c.proposer, c.text) for c in candidates if not c.rejected]
    return accepted, [c.rejected for c in candidates if c.rejected]


def test_tiny_model_learned_its_answer(tiny_model):
    assert tiny_model.final_loss < 0.2


def test_model_is_loaded_once_per_directory(tiny_model):
    a = load_model(tiny_model.directory, "fp32")
    assert load_model(str(tiny_model.directory) + "/", "fp32") is a
    assert a.model.dtype == torch.float32


def test_sampling_is_deterministic_per_seed(tiny_model, program):
    backend = LocalBackend(tiny_model.directory, "fp32")
    messages = build_messages(program, SOURCE)
    request = SampleRequest(n=4, temperature=1.0, max_new_tokens=72, seed=5)
    first = backend.sample(messages, request)
    assert len(first) == 4 and all(isinstance(a, str) for a in first)
    assert backend.sample(messages, request) == first
    assert any(f"After line {LINE}, insert assume(" in a for a in first)


def test_prompt_is_prefilled_once_for_all_samples_and_for_the_next_request(tiny_model, program):
    lm = load_model(tiny_model.directory, "fp32")
    messages = build_messages(program, SOURCE + "int after_main = 1;\n")
    shapes = []
    hook = lm.model.register_forward_pre_hook(
        lambda mod, args, kwargs: shapes.append(tuple(kwargs["input_ids"].shape)), with_kwargs=True
    )
    try:
        lm.sample(messages, SampleRequest(n=6, temperature=1.0, max_new_tokens=40))
        first = len(shapes)
        lm.sample(messages, SampleRequest(n=3, temperature=1.0, max_new_tokens=40, seed=1))
    finally:
        hook.remove()
    prompt_len = lm.encode(messages).shape[1]
    assert shapes[0][0] == 1 and shapes[0][1] <= prompt_len  # (the part shared with the last prompt is kept)
    # then one step at a time, on each distinct answer prefix of the running rows
    assert all(s[1] == 1 and 1 <= s[0] <= 6 for s in shapes[1:first]) and first <= 41
    assert all(s[1] == 1 and s[0] <= 3 for s in shapes[first:])  # the same prompt again: no second prefill


def test_a_pinned_grammar_forces_the_answer_start(tiny_model, program):
    lm = load_model(tiny_model.directory, "fp32")
    grammar = answer_grammar(program).pinned(LINE)
    forced = lm.forced_ids(grammar)
    assert lm.tokenizer.decode(forced) == f"After line {LINE}, insert assume("
    request = SampleRequest(n=4, max_new_tokens=40, grammar=grammar)
    answers = lm.sample(build_messages(program, SOURCE), request)
    assert all(a.startswith(f"After line {LINE}, insert assume(") for a in answers)
    assert all(grammar.advance(grammar.start(), a) is not None for a in answers), answers


def test_static_cache_decoding_equals_recomputing_the_whole_sequence(tiny_model, program):
    lm = load_model(tiny_model.directory, "fp32")
    ids = lm.encode(build_messages(program, SOURCE + "int greedy = 2;\n"))
    mine = lm.sample_ids(ids, [SampleRequest(n=2, temperature=0, max_new_tokens=12)])
    with torch.inference_mode():
        whole = ids
        for _ in range(len(mine[0])):
            step = lm.model(input_ids=whole).logits[:, -1, :].argmax(-1, keepdim=True)
            whole = torch.cat([whole, step], dim=1)
    assert mine[0] == mine[1] == whole[0, ids.shape[1]:].tolist()


def test_time_limit_stops_sampling(tiny_model, program):
    lm = load_model(tiny_model.directory, "fp32")
    start = time.monotonic()
    out = lm.sample(build_messages(program, SOURCE), SampleRequest(n=2, max_new_tokens=3000, timeout_s=0.2))
    assert len(out) == 2 and time.monotonic() - start < 5


def test_prompt_longer_than_the_context_is_a_model_error(tiny_model, program):
    lm = load_model(tiny_model.directory, "fp32")
    with pytest.raises(ModelError, match="exceeds the model's context"):
        lm.sample(build_messages(program, SOURCE), SampleRequest(n=1, max_new_tokens=lm.context))


def test_local_proposer_parses_checks_and_completes(tiny_model, program):
    settings = SETTINGS.with_(model=str(tiny_model.directory), samples=6, temperature=0.7)
    accepted, rejected = summary(make_llm_proposer(settings).propose(context(program)))
    assert ("llm", "s == 9*i") in accepted and ("llm", "i <= n") in accepted
    assert ("completion", "s == 3*i") in accepted
    assert any("assignment" in r for r in rejected)


def test_untrained_model_output_is_rejected_not_crashing(tiny_model, program, tmp_path):
    from tinymodel import build_model
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(tiny_model.directory))
    tokenizer.save_pretrained(str(tmp_path))
    build_model(tmp_path, tokenizer).save_pretrained(str(tmp_path))
    proposer = LLMProposer(
        LocalBackend(tmp_path, "fp32"),
        LLMConfig(samples=4, temperature=1.0, max_new_tokens=48, constrained=False),
    )
    out = proposer.propose(context(program))
    assert len(out) >= 4 and all(c.rejected for c in out)


def untrained_model(tiny_model, directory):
    from tinymodel import build_model
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(tiny_model.directory))
    tokenizer.save_pretrained(str(directory))
    build_model(directory, tokenizer).save_pretrained(str(directory))
    return load_model(directory, "fp32")


def test_constrained_decoding_keeps_the_taught_answer_but_not_the_assignment(tiny_model, program):
    settings = SETTINGS.with_(model=str(tiny_model.directory), samples=6, temperature=0.7, constrained=True)
    candidates = make_llm_proposer(settings).propose(context(program))
    accepted, rejected = summary(candidates)
    assert ("llm", "s == 9*i") in accepted and ("llm", "i <= n") in accepted
    assert ("completion", "s == 3*i") in accepted
    assert not any("assignment" in r for r in rejected)


def test_untrained_model_under_the_grammar_writes_only_what_parses(tiny_model, program, tmp_path):
    lm = untrained_model(tiny_model, tmp_path)
    grammar = answer_grammar(program)
    request = SampleRequest(n=8, temperature=1.0, max_new_tokens=400, seed=1, grammar=grammar)
    answers = lm.sample(build_messages(program, SOURCE), request)
    assert len(answers) == 8
    assert all(grammar.advance(grammar.start(), a) is not None for a in answers), answers
    whole = [a for a in answers if grammar.accepts(a)]
    assert whole, answers
    candidates = [c for a in whole for c in answer_candidates(a, program, 0)]
    assert candidates and all(c.rejected in (None, "trivially true") for c in candidates)
    free = lm.sample(build_messages(program, SOURCE), SampleRequest(n=8, temperature=1.0, max_new_tokens=60))
    assert not any(grammar.accepts(a) for a in free)


def test_endpoint_backend_against_the_served_tiny_model(tiny_model, program):
    server = model_server(str(tiny_model.directory), dtype="fp32").start()
    try:
        backend = EndpointBackend(server.url)
        assert backend.model_name() == str(tiny_model.directory)
        proposer = LLMProposer(backend, LLMConfig(samples=6, temperature=0.7, max_new_tokens=72))
        accepted, rejected = summary(proposer.propose(context(program)))
    finally:
        server.close()
    assert ("llm", "s == 9*i") in accepted and ("llm", "i <= n") in accepted
    assert any("assignment" in r for r in rejected)


def test_plain_prompt_without_a_chat_template():
    class NoTemplate:
        chat_template = None

    text, special = render_prompt(
        NoTemplate(), [{"role": "system", "content": "S"}, {"role": "user", "content": "U"}]
    )
    assert (text, special) == ("System: S\n\nUser: U\n\nAssistant:", True)


def test_dtype_choice():
    assert choose_dtype("auto", "cpu") == (torch.bfloat16 if cpu_has_bf16() else torch.float32)
    assert choose_dtype("auto", "cuda") == torch.bfloat16
    assert choose_dtype("fp32", "cpu") == torch.float32
    with pytest.raises(ModelError, match="unknown dtype"):
        choose_dtype("int3", "cpu")


def test_bad_model_directories(tmp_path):
    with pytest.raises(ModelError, match="not found"):
        load_model(tmp_path / "missing")
    with pytest.raises(ModelError, match="cannot load"):
        load_model(tmp_path)


def test_running_out_of_memory_while_loading_is_a_model_error(tiny_model, monkeypatch):
    import resource

    import transformers

    def no_memory(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(transformers.AutoModelForCausalLM, "from_pretrained", no_memory)
    monkeypatch.setattr(resource, "getrlimit", lambda what: (4096 << 20, resource.RLIM_INFINITY))
    with pytest.raises(ModelError, match=r"may map at most 4096 MB.*--endpoint"):
        load_model(tiny_model.directory, "bf16", "cpu")  # a key no other test loads


def test_serve_model_command_is_registered():
    parser = argparse.ArgumentParser()
    register_serve(parser.add_subparsers())
    args = parser.parse_args(["serve-model", "some/dir", "--port", "0"])
    assert (args.directory, args.port, args.host) == ("some/dir", 0, "127.0.0.1")


def test_the_shares_of_several_loops_are_decoded_in_one_batch_from_one_prefill(tiny_model):
    from quokka.invariants.llm.backend import sample_per_loop
    from quokka.verifier.frontend import lower_source

    source = SOURCE.replace("  __VERIFIER_assert(s == 3 * n);", "  while (s > 0) {\n    s = s - 3;\n  }")
    program = lower_source(source, "two.c", "LP64")
    lm = load_model(tiny_model.directory, "fp32")
    shapes = []
    hook = lm.model.register_forward_pre_hook(
        lambda mod, args, kwargs: shapes.append(tuple(kwargs["input_ids"].shape)), with_kwargs=True
    )
    # greedy: a share's rows stay equal, so every step runs one row per share still decoding
    request = SampleRequest(n=5, temperature=0.0, max_new_tokens=30, seed=3, grammar=answer_grammar(program))
    try:
        backend = LocalBackend(tiny_model.directory, "fp32")
        answers = sample_per_loop(backend, build_messages(program, source), request)
    finally:
        hook.remove()
    lines = sorted(info.insert_after_line for info in program.loops)
    assert [sum(a.startswith(f"After line {x}, insert assume(") for a in answers) for x in lines] == [3, 2]
    # one prefill, the shares' forced starts together (one row each), then steps on one row per share
    forced = len(lm.forced_ids(request.grammar.pinned(lines[0])))
    assert shapes[0][0] == 1 and shapes[1] == (2, forced) and all(s[0] <= 2 and s[1] == 1 for s in shapes[2:])
    assert shapes[2][0] == 2 and len(shapes) > 3


def test_model_bench_times_one_round_per_program(tiny_model, tmp_path, capsys):
    import json

    from quokka.verifier.cli import main

    (tmp_path / "a.c").write_text(SOURCE)
    (tmp_path / "b.c").write_text(SOURCE.replace("s + 3", "s + 4"))
    code = main(["model", "bench", str(tmp_path), "--model", str(tiny_model.directory), "--samples", "3",
                 "--threads", "1", "--json"])  # fmt: skip
    report = json.loads(capsys.readouterr().out)
    assert code == 0 and len(report["programs"]) == 2
    programs = report["programs"]
    assert all(len(p["answers"]) == 3 and p["loops"] == 1 and p["prompt_tokens"] > 100 for p in programs)
    assert 0 < report["median_s"] <= report["max_s"]
