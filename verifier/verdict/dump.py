"""`--dump-dir`: the artefacts of every stage, for debugging a verification run by hand."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import z3
from quokka.verifier.cfg import Branch, Cfg, Jump, build_cfg
from quokka.verifier.encode import ENTRY, ERROR, encode
from quokka.verifier.encode.chc import build, horn_assertions
from quokka.verifier.engines.inductive import holds, invariant_formulas
from quokka.verifier.ir import Expr, Program, uses_floats
from quokka.verifier.ir.printer import format_expr, format_program, format_stmt


def dump_program(program: Program, directory: Path) -> list[Path]:
    """Write the IR (`ir.c`), its loops (`loops.json`), the VCs and the CHC system (`smt/`; not
    for a program with floating point, which only bounded model checking encodes)."""
    directory.mkdir(parents=True, exist_ok=True)
    ir_file = directory / "ir.c"
    ir_file.write_text(format_program(program), encoding="utf-8")
    loops_file = directory / "loops.json"
    loops = [
        {
            "id": info.id,
            "line": info.coord.line,
            "column": info.coord.column,
            "insert_after_line": info.insert_after_line,
            "scope": dict(info.scope),
        }
        for info in program.loops
    ]
    loops_file.write_text(json.dumps(loops, indent=2), encoding="utf-8")
    cfg_file = directory / "cfg.dot"
    cfg_file.write_text(cfg_dot(build_cfg(program)), encoding="utf-8")
    conditions = [] if uses_floats(program) else dump_conditions(program, directory / "smt")
    return [ir_file, loops_file, cfg_file, *conditions]


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _left_aligned(lines: list[str]) -> str:
    """A DOT label of left-aligned lines (each ended by DOT's `\\l`)."""
    return _quote("\n".join(lines))[:-1].replace("\n", "\\l") + '\\l"'


def cfg_dot(cfg: Cfg) -> str:
    """The control-flow graph in Graphviz's DOT language: loop heads doubled, back edges dashed."""
    lines = ["digraph cfg {", "  node [shape=box, fontname=monospace];"]
    for block in cfg.blocks:
        title = f"B{block.id}" + (f"  (head of loop {block.head})" if block.head else "")
        shape = ", peripheries=2" if block.head else ""
        label = _left_aligned([title, *map(format_stmt, block.stmts)])
        lines.append(f"  b{block.id} [label={label}{shape}];")
        lines.extend(_edges(cfg, block.id))
    lines.append("}")
    return "\n".join(lines) + "\n"


def _edges(cfg: Cfg, src: int) -> list[str]:
    end = cfg.blocks[src].end
    if isinstance(end, Jump):
        targets = [(end.target, "")]
    elif isinstance(end, Branch):
        cond = format_expr(end.cond)
        targets = [(end.then, cond), (end.orelse, f"!({cond})")]
    else:
        targets = []
    out = []
    for dst, label in targets:
        style = ", style=dashed" if cfg.is_back(src, dst) else ""
        out.append(f"  b{src} -> b{dst} [label={_quote(label)}{style}];")
    return out


def dump_json(directory: Path, name: str, payload: Any) -> Path:
    """Write one JSON artefact (the result, the proposals) into the dump folder."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(json.dumps(payload, indent=2, default=str), encoding="utf-8")
    return path


def dump_conditions(
    program: Program, directory: Path, invariants: Mapping[str, Expr] | None = None
) -> list[Path]:
    """Write the CHC system and the query of every verification condition as SMT-LIB files.

    The VC of an edge uses `invariants` (loop id -> IR invariant; `true` where missing); each
    file is satisfiable iff its obligation fails. The files are printed by Z3 (`sexpr`).
    """
    enc = encode(program)
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    system = build(enc)
    horn = z3.SolverFor("HORN")
    horn.add(*horn_assertions(system))
    written.append(_write(directory / "chc.smt2", horn.sexpr() + "(check-sat)\n"))
    inv, _ = invariant_formulas(program, invariants or {})
    for i, edge in enumerate(enc.edges):
        solver = z3.Solver()
        solver.add(edge.guard)
        if edge.src != ENTRY:
            solver.add(holds(enc, edge, "pre", inv[edge.src]))
        if edge.dst != ERROR:
            solver.add(z3.Not(holds(enc, edge, "post", inv[edge.dst])))
        name = f"vc{i:02d}_{edge.kind}_{_file_part(edge.src)}_{_file_part(edge.dst)}.smt2"
        header = f"; {edge.kind}: {edge.label}\n"
        written.append(_write(directory / name, header + solver.sexpr() + "(check-sat)\n"))
    return written


def _file_part(node: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "_-" else "_" for ch in node.lstrip("@"))


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path
