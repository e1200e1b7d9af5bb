"""`quokka eval-model` with the tiny local model: candidates counted, checked, and stored."""

import json
import sqlite3

from llm_programs import SOURCE
from quokka.svcomp.evalmodel import pass_at_k
from quokka.verifier.cli import main

PYPROJECT = """[tool.quokka.extra]
llm_max_new_tokens = 72
llm_dtype = "fp32"
llm_threads = 1
llm_constrained = false
"""


def test_pass_at_k_is_the_unbiased_estimator():
    assert pass_at_k(8, 0, 1) == 0.0 and pass_at_k(8, 8, 1) == 1.0
    assert pass_at_k(8, 2, 1) == 0.25
    assert abs(pass_at_k(4, 1, 2) - 0.5) < 1e-12  # 1 - C(3,2)/C(4,2)
    assert pass_at_k(3, 1, 5) == 0.0


def test_eval_model_with_the_tiny_model(tmp_path, capsys, tiny_model):
    (tmp_path / "pyproject.toml").write_text(PYPROJECT)
    (tmp_path / "tiny.c").write_text(SOURCE)
    db = tmp_path / "eval.sqlite"
    # greedy, as in test_llm_verify: the taught answer whatever corpus the tokenizer was trained on
    code = main(["eval-model", "--model", str(tiny_model.directory), "--set", str(tmp_path / "tiny.c"),
                 "--samples", "2", "--temperature", "0", "--check-timeout", "10", "--db", str(db), "--json",
                 "--dump-dir", str(tmp_path / "dump")])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    summary, (task,) = out["summary"], out["tasks"]
    # taught: `s == 9*i` (wrong constant), `i <= n` (true), `n = 3` (an assignment: rejected)
    assert summary["tasks"] == 1 and summary["samples"] == 2
    assert 0 < summary["parse_rate"] < 1
    assert summary["true_invariants"] >= 1
    assert summary["proved_inductive_alone"] == 0  # neither good candidate is enough on its own
    assert summary["proved_two_query"] == 1  # `i <= n`: Spacer finds the rest
    assert summary["proved_houdini"] == 1 and summary["pass_at_1"] > 0  # completion: `s == 3*i`
    assert all(s["rejected"] >= 1 for s in task["samples"])
    with sqlite3.connect(db) as conn:
        (config,) = conn.execute("select config from runs").fetchone()
        (stats,) = conn.execute("select proposer_stats from results").fetchone()
    assert config == "eval-model" and json.loads(stats)["proving"] == task["proving"]
    assert "answers" not in json.loads(stats)  # the store keeps the measures, the dump the answers
    (dumped,) = (tmp_path / "dump").iterdir()
    record = json.loads(dumped.read_text())
    assert dumped.name == "001-tiny.json" and record["proving"] == task["proving"]
    assert len(record["answers"]) == 2 and all("assume(" in a["answer"] for a in record["answers"])
    checks = {c["text"]: c for c in record["answers"][0]["candidates"]}
    assert checks["i <= n"]["holds"] is True and checks["i <= n"]["rejected"] is None
    assert checks["s == 9*i"]["refuted"] is True and checks["s == 9*i"]["holds"] is None
    assert [c["rejected"] for c in checks.values()].count(None) == 2  # `n = 3` carries its reason


def test_eval_model_decodes_under_the_answer_grammar_by_default(tmp_path, capsys, tiny_model):
    (tmp_path / "pyproject.toml").write_text(PYPROJECT.replace("llm_constrained = false", ""))
    (tmp_path / "tiny.c").write_text(SOURCE)
    code = main(["eval-model", "--model", str(tiny_model.directory), "--set", str(tmp_path / "tiny.c"),
                 "--samples", "2", "--temperature", "0", "--check-timeout", "10", "--json"])
    summary = json.loads(capsys.readouterr().out)["summary"]
    assert code == 0
    assert summary["parse_rate"] == 1.0  # the assignment `n = 3` cannot be decoded
    assert summary["proved_houdini"] == 1


def test_candidates_false_on_a_reachable_state_go_to_no_solver(program, monkeypatch):
    from quokka.invariants.completion import collect_states
    from quokka.invariants.llm.answers import answer_candidates
    from quokka.svcomp import evalmodel
    from quokka.svcomp.evalmodel import EvalConfig

    judge = evalmodel._Judge(program, collect_states(program), EvalConfig(check_s=10))
    line = program.loops[0].insert_after_line
    wrong = answer_candidates(f"After line {line}, insert assume(s == 7*i && i == n);", program, 0)

    def no_solver(*args, **kwargs):
        raise AssertionError("a refuted candidate reached a solver")

    monkeypatch.setattr(evalmodel.spacer, "solve", no_solver)
    monkeypatch.setattr(evalmodel.inductive, "prove_with", no_solver)
    monkeypatch.setattr(evalmodel.houdini, "houdini", no_solver)
    found = judge.sample([c for c in wrong if c.text != "s == 7*i"])  # `i == n` alone: no completion
    assert (found.candidates, found.true_invariants, found.two_query, found.houdini) == (1, 0, False, False)
    monkeypatch.undo()
    right = judge.sample(
        answer_candidates(f"After line {line}, insert assume(s == 3*i && i <= n);", program, 1)
    )
    assert right.true_invariants == 2 and right.two_query and right.houdini
