from __future__ import annotations

import json
from pathlib import Path

import pytest
from quokka.invariants.llm.prompt import build_messages, format_answer
from quokka.invariants.train.dataset import build
from quokka.invariants.train.families import split_families
from quokka.invariants.train.recheck import Checked, check_target, recheck_all
from quokka.invariants.train.sources import Target, assertion_targets, read_source, targets_of_row
from quokka.verifier.errors import InputError
from quokka.verifier.frontend import lower
from quokka.verifier.infra.store import ResultRow, RunInfo, Store
from quokka.verifier.task import family_of

ACSL = """extern int __VERIFIER_nondet_int(void);
void reach_error(void) {}
int main() {
    int n = __VERIFIER_nondet_int();
    if (!(n >= 0)) return 0;
    int i = 0;
    /*@ loop invariant i <= n; */
    while (i < n) {
        i = i + 1;
    }
    if (i != n) reach_error();
    return 0;
}
"""


def test_family_strips_variant_suffixes() -> None:
    assert family_of("cohencu-ll_valuebound5.c") == "cohencu"
    assert family_of("benchmark09_conjunctive_1.c") == "benchmark09_conjunctive"
    assert family_of("hard2_unwindbound10.yml") == "hard2"
    assert family_of("dir/sqrt1-ll_unwindbound2.c") == "sqrt1"


def test_split_is_by_family_and_deterministic() -> None:
    fams = [f"f{i}" for i in range(10)]
    train, val = split_families(fams, 0.3)
    assert len(val) == 3 and not set(train) & set(val) and set(train) | set(val) == set(fams)
    assert split_families(list(reversed(fams)), 0.3) == (train, val)


def test_recheck_drops_non_inductive_and_caches(tmp_path: Path) -> None:
    c = tmp_path / "p.c"
    c.write_text(ACSL)
    good, bad = Target(c, 8, "i <= n", "t"), Target(c, 8, "i <= 5", "t")
    checked, stats = recheck_all([good, bad], tmp_path / "cache.json")
    assert [x.proven for x in checked] == [True, False] and stats.cached == 0
    calls: list[Target] = []
    again, stats2 = recheck_all([good, bad], tmp_path / "cache.json", checker=lambda t: calls.append(t))  # type: ignore[arg-type,func-returns-value]
    assert not calls and stats2.cached == 2 and [x.proven for x in again] == [True, False]


def test_drop_reasons_are_counted_by_kind_not_by_loop(tmp_path: Path) -> None:
    c = tmp_path / "p.c"
    c.write_text(ACSL)
    reasons = [
        "consecution (loop L3 -> loop L9) fails: [i=1]",
        "consecution (loop L9 -> loop L9) fails: [i=2]",
        "consecution (loop L9 -> loop L9) unknown (budget exhausted: 1 s)",
        "InputError: bad",
    ]
    targets = [Target(c, 8, f"i <= {k}", "t") for k in range(len(reasons))]
    by_text = {t.invariant: r for t, r in zip(targets, reasons, strict=True)}
    _, stats = recheck_all(targets, None, checker=lambda t: Checked(t, False, 8, by_text[t.invariant]))
    assert dict(stats.dropped_reasons) == {"consecution fails": 2, "consecution unknown": 1, "InputError": 1}


def test_sources_acsl_and_results_db(tmp_path: Path) -> None:
    c = tmp_path / "p.c"
    c.write_text(ACSL)
    (acsl,) = read_source(c)
    assert check_target(acsl).proven and check_target(acsl).after_line == 8
    db = tmp_path / "r.sqlite"
    with Store.open(db) as store:
        run = store.start_run(RunInfo(id=0, signature="s", config="c"))
        for task, verdict, expr in (("a", "true", "i <= n"), ("b", "unknown", "0")):
            store.add_result(ResultRow(run.id, task, task, verdict, verdict, "", 0, program=str(c),
                                       invariants=[{"line": 8, "expr": expr}]))  # fmt: skip
    (row,) = read_source(db)
    assert (row.file, row.after_line, row.invariant) == (c, 8, "i <= n")


def test_dataset_uses_the_shared_prompt(dataset_dir: Path) -> None:
    train = [json.loads(line) for line in (dataset_dir / "train.jsonl").read_text().splitlines()]
    val = [json.loads(line) for line in (dataset_dir / "val.jsonl").read_text().splitlines()]
    split = json.loads((dataset_dir / "split.json").read_text())
    assert train and val
    assert (
        split["summary"]["dropped"]
        and split["summary"]["proven"] == len(train) + len(val) + split["summary"]["duplicates"]
    )
    assert not set(split["train_families"]) & set(split["val_families"])
    assert {e["meta"]["family"] for e in val} <= set(split["val_families"])
    ex = val[0]
    path = Path(ex["meta"]["file"])
    assert ex["messages"][:-1] == build_messages(lower(path), path.read_text())
    assert ex["messages"][-1] == {
        "role": "assistant",
        "content": format_answer([(ex["meta"]["after_line"], ex["meta"]["invariant"])]),
    }
    assert sum(e["meta"]["origin"] == "synthetic" for e in train) == 4


def test_targets_longer_than_an_accepted_answer_are_dropped(tmp_path: Path) -> None:
    c = tmp_path / "p.c"
    c.write_text(ACSL)
    long = " && ".join(["i <= n"] * 100)  # inductive, but no answer of that length is parsed
    checked = check_target(Target(c, 8, long, "t"))
    assert not checked.proven and "longer than the answer parser accepts" in checked.reason
    assert check_target(Target(c, 8, " && ".join(["i <= n"] * 10), "t")).proven


TWO_COUNTERS = """extern int __VERIFIER_nondet_int(void);
void reach_error(void) {}
int main() {
    int n = __VERIFIER_nondet_int();
    if (!(n >= 0 && n <= 100)) return 0;
    int i = 0, s = 0;
    while (i < n) {
        i = i + 1;
        s = s + 2;
    }
    if (s != 2 * n) reach_error();
    return 0;
}
"""


def test_a_certificate_is_one_target_per_loop_proven_as_a_whole(tmp_path: Path) -> None:
    """`s == 2*i` and `i <= n` are each inductive, `s == 2*i || i < 0` only with `i >= 0`."""
    c = tmp_path / "p.c"
    c.write_text(TWO_COUNTERS)
    parts = ["i >= 0", "s == 2*i || i < 0", "i <= n"]
    cert = [{"line": 7, "expr": e} for e in parts]
    target, *alone = targets_of_row(str(c), json.dumps(cert), "r.sqlite")
    assert target.invariant == "i >= 0 && (s == 2*i || i < 0) && i <= n"
    assert check_target(target).proven
    assert [t.invariant for t in alone] == parts
    assert [check_target(t).proven for t in alone] == [True, False, True]


def test_uninformative_targets_are_dropped(tmp_path: Path) -> None:
    c = tmp_path / "p.c"
    c.write_text(ACSL)
    states = " || ".join(f"i == {k} && n == 5" for k in range(6))
    for invariant, why in [
        ("1", "tautology"),
        ("i != 0 || i == 0", "tautology"),
        (states, "list of states"),
    ]:
        checked = check_target(Target(c, 8, invariant, "t"))
        assert not checked.proven and why in checked.reason, invariant
    assert check_target(Target(c, 8, "i <= n || i == 0", "t")).proven


NESTED = """extern int __VERIFIER_nondet_int(void);
void reach_error(void) {}
void __VERIFIER_assert(int cond) { if (!(cond)) { reach_error(); } }
int main() {
    int a = __VERIFIER_nondet_int();
    int b = __VERIFIER_nondet_int();
    if (!(a >= 0 && b >= 1)) return 0;
    int c = 0;
    int k = 0;
    while (b > 0) {
        c = a;
        k = 0;
        while (1) {
            __VERIFIER_assert(a == k * b + c);
            if (!(c >= b)) break;
            c = c - b;
            k = k + 1;
        }
        b = b - 1;
    }
    __VERIFIER_assert(c < 1000000);
    return 0;
}
"""


def test_assertions_are_tried_at_every_loop_and_kept_where_inductive(tmp_path: Path) -> None:
    c = tmp_path / "p.c"
    c.write_text(NESTED)
    targets = list(assertion_targets([c, c]))  # a file named twice is read once
    assert [(t.after_line, t.invariant, t.origin) for t in targets] == [
        (10, "a == k * b + c", "assertion"),
        (13, "a == k * b + c", "assertion"),
        (10, "c < 1000000", "assertion"),
        (13, "c < 1000000", "assertion"),
    ]
    assert [check_target(t).proven for t in targets] == [False, True, False, False]
    bad = tmp_path / "bad.c"
    bad.write_text("int main() { while (1) { __VERIFIER_assert(x == ); } }\n")
    assert list(assertion_targets([bad])) == []


def test_dataset_has_assertion_targets_unless_told_not_to(tmp_path: Path) -> None:
    src = _nested_source(tmp_path)
    with_them = build([src], tmp_path / "with", val_fraction=0.0)
    without = build([src], tmp_path / "without", val_fraction=0.0, assertions=False)
    assert (with_them.targets, with_them.train) == (5, 2)
    assert (without.targets, without.train) == (1, 1)
    rows = [json.loads(line) for line in (tmp_path / "with" / "train.jsonl").read_text().splitlines()]
    assert {(r["meta"]["origin"], r["meta"]["invariant"]) for r in rows} == {
        ("invariants.jsonl:1", "k >= 0"),
        ("assertion", "a == k * b + c"),
    }


def test_command_line_sets_the_in_loop_share_and_refuses_a_bad_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from quokka.verifier.cli import main

    src = _nested_source(tmp_path)
    out = tmp_path / "ds"
    args = ["dataset", "build", str(src), "--out", str(out), "--synthetic", "3", "--val-fraction", "0"]
    assert main([*args, "--synthetic-in-loop", "1", "--no-assertions"]) == 0
    split = json.loads((out / "split.json").read_text())
    assert split["synthetic_in_loop_share"] == 1.0 and split["summary"]["targets"] == 4
    assert all("-ll_" in p.name for p in (out / "synthetic").iterdir())
    assert split["synthetic_in_loop_whole"] is False
    whole = tmp_path / "whole"
    whole_args = [*args[:4], str(whole), *args[5:], "--synthetic-in-loop", "1", "--no-assertions"]
    assert main([*whole_args, "--synthetic-in-loop-target", "invariant"]) == 0
    assert json.loads((whole / "split.json").read_text())["synthetic_in_loop_whole"] is True
    answers = [json.loads(line)["meta"]["invariant"] for line in (whole / "train.jsonl").open()]
    assert any(" && " in a for a in answers)
    with pytest.raises(SystemExit):
        main([*args, "--synthetic-in-loop", "1.5"])
    assert "expected a number from 0 to 1, got '1.5'" in capsys.readouterr().err


EUCLID = """extern int __VERIFIER_nondet_int(void);
void reach_error(void) {}
int main() {
    int x = __VERIFIER_nondet_int();
    int y = __VERIFIER_nondet_int();
    if (!(x >= 1 && y >= 1 && x <= 1000 && y <= 1000)) return 0;
    int a = x, b = y, c = 0, k = 0;
    while (b != 0) {
        c = a;
        k = 0;
        while (c >= b) {
            c = c - b;
            k = k + 1;
        }
        a = b;
        b = c;
    }
    if (a < 1) reach_error();
    return 0;
}
"""


def test_a_nested_certificate_is_checked_with_its_other_loops(tmp_path: Path) -> None:
    """The outer loop's `b >= 0` needs the inner loop's `c >= 0`: each target carries the other
    loop's invariant as its context, and is proven with it, not with `true` there."""
    c = tmp_path / "p.c"
    c.write_text(EUCLID)
    cert = [{"line": 8, "expr": "a >= 1 && b >= 0"}, {"line": 11, "expr": "c >= 0 && b >= 1"}]
    outer, inner = targets_of_row(str(c), json.dumps(cert), "r.sqlite")
    assert outer.context == ((11, "c >= 0 && b >= 1"),) and inner.context == ((8, "a >= 1 && b >= 0"),)
    assert check_target(outer).proven and check_target(inner).proven
    alone = Target(c, 8, outer.invariant, "t")
    assert not check_target(alone).proven
    wrong = Target(c, 8, outer.invariant, "t", context=((11, "c >= 1"),))  # not inductive itself
    assert not check_target(wrong).proven
    nowhere = Target(c, 8, outer.invariant, "t", context=((3, "c >= 0"),))
    assert "no loop at line 3" in check_target(nowhere).reason


def test_the_validation_families_can_be_pinned(tmp_path: Path) -> None:
    for name in ("alpha_1.c", "beta_2.c", "gamma-ll_3.c"):
        (tmp_path / name).write_text(ACSL)
    src = tmp_path / "invariants.jsonl"
    found = {"alpha_1.c": "i <= n", "beta_2.c": "i >= 0", "gamma-ll_3.c": "i <= n && i >= 0"}
    rows = [json.dumps({"file": f, "after_line": 8, "invariant": e}) for f, e in found.items()]
    src.write_text("\n".join(rows) + "\n")
    s = build([src], tmp_path / "ds", val_families=["beta", "gamma"], assertions=False)
    split = json.loads((tmp_path / "ds" / "split.json").read_text())
    assert (split["train_families"], split["val_families"]) == (["alpha"], ["beta", "gamma"])
    assert (s.train, s.val) == (1, 2)


def test_a_jsonl_target_may_carry_its_context(tmp_path: Path) -> None:
    (tmp_path / "p.c").write_text(EUCLID)
    src = tmp_path / "certificates.jsonl"
    context = [[11, "c >= 0 && b >= 1"]]
    row = {"file": "p.c", "after_line": 8, "invariant": "a >= 1 && b >= 0", "context": context}
    src.write_text(json.dumps(row) + "\n" + json.dumps({**row, "context": [[11]]}) + "\n")
    with pytest.raises(InputError, match=r"certificates\.jsonl:2: not an invariant record"):
        list(read_source(src))
    src.write_text(json.dumps(row) + "\n")
    (target,) = read_source(src)
    assert target.context == ((11, "c >= 0 && b >= 1"),) and check_target(target).proven


def test_command_line_adds_companion_programs_to_train(tmp_path: Path) -> None:
    from quokka.verifier.cli import main

    src = _nested_source(tmp_path)
    out = tmp_path / "ds"
    args = ["dataset", "build", str(src), "--out", str(out), "--synthetic-companions", "5"]
    assert main([*args, "--val-fraction", "0", "--no-assertions"]) == 0
    split = json.loads((out / "split.json").read_text())
    assert split["synthetic_companions"] == 5 and split["summary"]["targets"] == 6
    metas = [json.loads(line)["meta"] for line in (out / "train.jsonl").open()]
    companions = [m for m in metas if m["origin"] == "synthetic"]
    assert len(companions) == 5 and all(" && " in m["invariant"] for m in companions)


def test_command_line_can_choose_the_companion_templates(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from quokka.verifier.cli import main

    src = _nested_source(tmp_path)
    out = tmp_path / "ds"
    args = ["dataset", "build", str(src), "--out", str(out), "--val-fraction", "0", "--no-assertions"]
    chosen = ["--synthetic-companions", "4", "--companion-templates", "pair_recurrence,pair_row_operations"]
    assert main([*args, *chosen]) == 0
    split = json.loads((out / "split.json").read_text())
    assert split["synthetic_companion_templates"] == ["pair_recurrence", "pair_row_operations"]
    names = sorted(p.name for p in (out / "synthetic").iterdir())
    assert [n.split("_")[1] for n in names] == ["pair"] * 4
    with pytest.raises(SystemExit):
        main([*args, "--companion-templates", "pair_recurrence,euclid"])
    assert "no companion template euclid" in capsys.readouterr().err


def _nested_source(tmp_path: Path) -> Path:
    """An invariants.jsonl of one target (`k >= 0`, NESTED's inner loop), beside its program."""
    (tmp_path / "p.c").write_text(NESTED)
    src = tmp_path / "invariants.jsonl"
    src.write_text(json.dumps({"file": "p.c", "after_line": 13, "invariant": "k >= 0"}) + "\n")
    return src
