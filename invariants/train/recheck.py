"""Re-check training targets: an invariant is kept only when it is inductive (initiation and
consecution valid, other loops taking `true`), checked in parallel and cached in a JSON file."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from quokka.verifier.encode.meaning import SolverError, always_true
from quokka.verifier.engines.base import Budget
from quokka.verifier.engines.inductive import check
from quokka.verifier.errors import InputError, QuokkaError
from quokka.verifier.frontend import lower, parse_invariant
from quokka.verifier.infra.store import content_key
from quokka.verifier.ir import Binary, Const, Expr, LoopInfo, Program, Var, bounded_recursion, operands

from ..llm.answers import MAX_EXPR_CHARS
from .sources import Target, data_model_of

INDUCTIVE_KINDS = ("initiation", "consecution")
CACHE_NAME = "recheck-cache.json"
STATE_LIST_MIN = 4
RECHECK_VERSION = b"2"  # part of the cache key: bump when what counts as proven changes


@dataclass(frozen=True)
class Checked:
    """A target after re-checking: `proven`, the loop's `insert_after_line`, or why it was dropped."""

    target: Target
    proven: bool
    after_line: int
    reason: str


def loop_for(program: Program, target: Target) -> LoopInfo | None:
    return loop_at(program, target.after_line, target.line_kind)


def loop_at(program: Program, line: int, line_kind: str = "insert") -> LoopInfo | None:
    """The loop `line` locates (see `Target.line_kind`), or None."""
    if line_kind == "below":
        below = [i for i in program.loops if i.coord.line > line]
        return min(below, key=lambda i: i.coord.line) if below else None
    for info in program.loops:
        if line in (info.insert_after_line, info.coord.line):
            return info
    return None


def check_target(target: Target, timeout_s: float = 10.0) -> Checked:
    """Is `target.invariant` inductive for its loop? Never raises for bad input: drops it."""
    if len(target.invariant) > MAX_EXPR_CHARS:  # a model answering so would be rejected
        reason = f"longer than the answer parser accepts ({MAX_EXPR_CHARS} characters)"
        return Checked(target, False, target.after_line, reason)
    try:
        program = lower(target.file, data_model_of(target.file))
        info = loop_for(program, target)
        if info is None:
            return Checked(target, False, target.after_line, f"no loop at line {target.after_line}")
        expr = parse_invariant(target.invariant, program, info.id)
        useless = uninformative(program, expr) or bounded_recursion(program)
        if useless:
            return Checked(target, False, info.insert_after_line, useless)
        invariants = {**context_invariants(program, target), info.id: expr}
        obligations = check(program, invariants, Budget.of(timeout_s))
    except (QuokkaError, OSError, RecursionError, SolverError) as exc:
        return Checked(target, False, target.after_line, f"{type(exc).__name__}: {exc}")
    bad = [o for o in obligations.items if o.kind in (*INDUCTIVE_KINDS, "input") and not o.valid]
    reason = "; ".join(o.reason for o in bad) if bad else "inductive"
    return Checked(target, not bad, info.insert_after_line, reason)


def context_invariants(program: Program, target: Target) -> dict[str, Expr]:
    """The invariants of `target.context` by loop id (QuokkaError when one does not parse)."""
    out = {}
    for line, text in target.context:
        info = loop_at(program, line)
        if info is None:
            raise InputError(None, f"{target.file}: no loop at line {line} for a context invariant")
        out[info.id] = parse_invariant(text, program, info.id)
    return out


def uninformative(program: Program, expr: Expr) -> str | None:
    """Why `expr` teaches a model nothing although it may be inductive: it holds for every value
    of its variables, or it lists states one by one (Quokka's own certificates of small programs)."""
    if _state_list(expr):
        return "a list of states, not an invariant to learn"
    return "true for every value (a tautology)" if always_true(program.var_types, expr) else None


def _state_list(expr: Expr) -> bool:
    """`expr` is a disjunction of more than `STATE_LIST_MIN` conjunctions of `variable == constant`."""
    disjuncts = operands(expr, "||")
    return len(disjuncts) > STATE_LIST_MIN and all(_is_point(d) for d in disjuncts)


def _is_point(e: Expr) -> bool:
    if isinstance(e, Binary) and e.op == "&&":
        return _is_point(e.left) and _is_point(e.right)
    return (
        isinstance(e, Binary) and e.op == "==" and isinstance(e.left, Var) and isinstance(e.right, Const)
    )


def cache_key(target: Target) -> str:
    program = target.file.read_bytes()
    context = [f"{line}:{text}" for line, text in target.context]
    return content_key(
        RECHECK_VERSION, program, str(target.after_line), target.line_kind, target.invariant, *context
    )


@dataclass(frozen=True)
class RecheckStats:
    total: int
    proven: int
    cached: int
    dropped_reasons: tuple[tuple[str, int], ...]


def recheck_all(
    targets: Sequence[Target],
    cache_path: Path | None,
    jobs: int = 1,
    checker: Callable[[Target], Checked] = check_target,
) -> tuple[list[Checked], RecheckStats]:
    """Every target checked (cached results reused by file hash + line + invariant), in order."""
    cache = _load_cache(cache_path)
    keys = [_safe_key(t) for t in targets]
    todo = [t for t, k in zip(targets, keys, strict=True) if k is None or k not in cache]
    fresh = dict(zip(map(id, todo), _run(todo, jobs, checker), strict=True))
    out = []
    for t, k in zip(targets, keys, strict=True):
        c = fresh.get(id(t)) or _from_cache(t, cache[k] if k else {})
        if k is not None:
            cache[k] = {"proven": c.proven, "after_line": c.after_line, "reason": c.reason}
        out.append(c)
    _save_cache(cache_path, cache)
    return out, _stats(out, len(targets) - len(todo))


def _safe_key(target: Target) -> str | None:
    try:
        return cache_key(target)
    except OSError:
        return None


def _run(todo: Sequence[Target], jobs: int, checker: Callable[[Target], Checked]) -> list[Checked]:
    if jobs <= 1 or len(todo) <= 1:
        return [checker(t) for t in todo]
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(checker, todo, chunksize=4))


def _from_cache(target: Target, entry: dict[str, object]) -> Checked:
    line = entry.get("after_line", target.after_line)
    return Checked(
        target,
        bool(entry.get("proven")),
        int(line) if isinstance(line, int) else 0,
        str(entry.get("reason", "")),
    )


def _stats(checked: Sequence[Checked], cached: int) -> RecheckStats:
    reasons: dict[str, int] = {}
    for c in checked:
        if not c.proven:
            kind = _reason_kind(c.reason)
            reasons[kind] = reasons.get(kind, 0) + 1
    proven = sum(c.proven for c in checked)
    return RecheckStats(len(checked), proven, cached, tuple(sorted(reasons.items())))


def _reason_kind(reason: str) -> str:
    """`consecution (loop L33 -> loop L42) fails: [...]` -> `consecution fails`: one count per kind."""
    head = reason.split(":")[0]
    return " ".join(re.sub(r"\([^()]*(\)|$)", " ", head).split())[:60]


def _load_cache(path: Path | None) -> dict[str, dict[str, object]]:
    if path is None or not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def _save_cache(path: Path | None, cache: dict[str, dict[str, object]]) -> None:
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(cache, sort_keys=True), encoding="utf-8")
