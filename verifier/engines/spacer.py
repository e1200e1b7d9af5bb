"""Z3's Spacer on the CHC system of the program (`chc`).

SAFE: the per-loop invariants are read from Spacer's model, translated to IR (`z3_to_ir`) and
re-checked by `inductive.prove_with`; a certificate that does not check is UNKNOWN.
UNSAFE: only with the havoc inputs in execution order, found by solving the path of edges
along Spacer's derivation (rule names `e<i>`); otherwise UNKNOWN.

Default parameters: see `DEFAULT_PARAMS` (measurements in its comment).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import z3

from .. import chc
from ..encode import ENTRY, ERROR, Edge, Encoding, encode
from ..ir import Expr, Program, Var
from ..z3_to_ir import Unsupported, to_ir
from . import inductive
from .base import Budget, EngineResult, Status, Stopwatch, unknown

ENGINE = "spacer"

# Measured with `scripts/measure_spacer.py` (see the report in its docstring).
DEFAULT_PARAMS: Mapping[str, object] = {
    "spacer.use_iuc": False,
}

NO_INLINING: Mapping[str, object] = {
    "xform.inline_linear": False,
    "xform.inline_eager": False,
    "xform.slice": False,
}


def solve(
    program: Program,
    budget: Budget,
    params: Mapping[str, object] | None = None,
    encoding: Encoding | None = None,
    check: bool = True,
) -> EngineResult:
    """Spacer on `program`; SAFE results carry invariants that passed `inductive.prove_with`.

    `check=False` skips that re-check (for callers that check a combined certificate).
    """
    watch = Stopwatch()
    enc = encoding or encode(program)
    system = chc.build(enc)
    settings = {**DEFAULT_PARAMS, **(params or {})}
    fp = chc.fixedpoint(system, {**settings, "timeout": budget.z3_timeout_ms()})
    answer, why = query(fp, system)
    stats = {"params": dict(settings), "levels": _levels(fp, system)}
    if answer == z3.unsat:
        return _safe(program, system, fp, budget, watch, stats, check)
    if answer == z3.sat:
        return _unsafe(enc, fp, budget, watch, stats)
    return unknown(ENGINE, why, watch.elapsed(), stats)


def query(fp: z3.Fixedpoint, system: chc.ChcSystem) -> tuple[z3.CheckSatResult, str]:
    """`fp.query` of the error predicate and, when unknown, why (a timeout raises "canceled")."""
    try:
        answer = fp.query(system.error())
    except z3.Z3Exception as exc:
        return z3.unknown, f"spacer: {exc.value.decode() if isinstance(exc.value, bytes) else exc}"
    return answer, "" if answer != z3.unknown else f"spacer: {fp.reason_unknown() or 'unknown'}"


def _levels(fp: z3.Fixedpoint, system: chc.ChcSystem) -> dict[str, int]:
    return {loop: fp.get_num_levels(pred) for loop, pred in system.preds.items()}


# ----------------------------------------------------------------------------- SAFE


def invariants_of(system: chc.ChcSystem, fp: z3.Fixedpoint) -> dict[str, z3.BoolRef]:
    """Each loop's invariant from Spacer's model, over the pre-state constants."""
    out = {}
    for loop, pred in system.preds.items():
        cover = fp.get_cover_delta(-1, pred)
        out[loop] = z3.substitute_vars(cover, *system.pre_args(loop))
    return out


def invariants_to_ir(program: Program, formulas: Mapping[str, z3.BoolRef]) -> dict[str, Expr]:
    """The invariants as IR expressions; raises `Unsupported` when one has no exact translation."""
    variables = {v.name: Var(v.name, v.type) for v in program.variables}
    return {loop: to_ir(f, variables) for loop, f in formulas.items()}


def _safe(program: Program, system: chc.ChcSystem, fp: z3.Fixedpoint, budget: Budget,
          watch: Stopwatch, stats: dict[str, object], check: bool) -> EngineResult:
    try:
        invariants = invariants_to_ir(program, invariants_of(system, fp))
    except Unsupported as exc:
        return unknown(ENGINE, f"spacer proved safety, but its invariant is not expressible: {exc}",
                       watch.elapsed(), stats)
    if check:
        checked = inductive.prove_with(program, invariants, budget)
        if checked.status is not Status.SAFE:
            return unknown(ENGINE, f"spacer's invariants did not check: {checked.reason}", watch.elapsed(), stats)
    return EngineResult(ENGINE, Status.SAFE, "spacer found inductive invariants", invariants, None,
                        watch.elapsed(), stats)


# ----------------------------------------------------------------------------- UNSAFE


def _unsafe(enc: Encoding, fp: z3.Fixedpoint, budget: Budget, watch: Stopwatch,
            stats: dict[str, object]) -> EngineResult:
    path = trace_edges(enc, fp.get_rule_names_along_trace())
    if path is None:
        path = _retrace(enc, budget)
    inputs = path_inputs(enc, path, budget) if path is not None else None
    if inputs is None:
        return unknown(ENGINE, "spacer found the error reachable but produced no input", watch.elapsed(), stats)
    reason = f"spacer found the error reachable along {len(path)} edges"
    return EngineResult(ENGINE, Status.UNSAFE, reason, {}, inputs, watch.elapsed(), stats)


def _retrace(enc: Encoding, budget: Budget) -> list[Edge] | None:
    """Ask again without rule inlining, so that the trace names the original rules."""
    system = chc.build(enc)
    fp = chc.fixedpoint(system, {**DEFAULT_PARAMS, **NO_INLINING, "timeout": budget.z3_timeout_ms()})
    if query(fp, system)[0] != z3.sat:
        return None
    return trace_edges(enc, fp.get_rule_names_along_trace())


def trace_edges(enc: Encoding, names: Sequence[str]) -> list[Edge] | None:
    """The edges named along Spacer's trace (listed from the query back), if they form a path."""
    path = []
    for name in reversed(list(names)):
        if name == "<null>":
            continue
        if not (name.startswith("e") and name[1:].isdigit() and int(name[1:]) < len(enc.edges)):
            return None
        path.append(enc.edges[int(name[1:])])
    connected = all(a.dst == b.src for a, b in zip(path, path[1:], strict=False))
    if not path or path[0].src != ENTRY or path[-1].dst != ERROR or not connected:
        return None
    return path


def path_inputs(enc: Encoding, path: Sequence[Edge], budget: Budget) -> tuple[int, ...] | None:
    """The havoc values, in execution order, of an execution along `path` (None if none found)."""
    state: dict[str, z3.ExprRef] = dict(enc.pre)
    guards, steps = [], []
    for i, edge in enumerate(path):
        renaming = [(site.const, z3.FreshConst(site.const.sort(), f"s{i}")) for site in edge.havocs]
        subst = [(enc.pre[v], state[v]) for v in enc.pre if not state[v].eq(enc.pre[v])] + renaming
        guards.append(z3.substitute(edge.guard, *subst) if subst else edge.guard)
        steps.append([(site, z3.substitute(site.guard, *subst) if subst else site.guard, new)
                      for site, (_, new) in zip(edge.havocs, renaming, strict=True)])
        state = {v: z3.substitute(t, *subst) if subst else t for v, t in edge.post.items()}
    result, model, _ = inductive.solve(guards, budget)
    if result != z3.sat or model is None:
        return None
    inputs = []
    for site, guard, value in (s for step in steps for s in step):
        if z3.is_true(model.eval(guard, model_completion=True)):
            if not z3.is_int(value):
                return None  # an array havoc: the interpreter draws its elements lazily
            inputs.append(model.eval(value, model_completion=True).as_long())
    return tuple(inputs)
