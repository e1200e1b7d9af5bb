"""The control-flow graph: the one place where the IR's control flow gets its meaning.

`build_cfg` lowers the structured IR into basic blocks of simple statements (Assign, Havoc,
Assume, Assert), each ended by a terminator: `Jump`, `Branch` or `Halt` (the end of `main`).
`Break`, `Continue`, `Return`, `Goto` and `Label` become jumps. The head of every `Loop`, and
every label a `goto` jumps back to, is a block marked with the loop's stable id; the state at
a loop head is the state on entering that block. The interpreter, the encodings (cutpoint
paths, CHC, BMC unrolling) and the seed search walk this graph, never the nested statements.

The graph must be reducible with every cycle through a marked head: a back edge ends at a block
that dominates its source, and that block is a loop head. Anything else (a `goto` into the
middle of a loop) is rejected as an unsupported feature. Blocks the entry cannot reach (code
after a `return`) are kept empty, so every loop of the program has its head in the graph.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property

from quokka.verifier.errors import Coord, IRTypeError, UnsupportedFeature
from quokka.verifier.ir import (
    Assert,
    Assign,
    Assume,
    Block,
    Break,
    Continue,
    Expr,
    Goto,
    Havoc,
    If,
    Label,
    Loop,
    Program,
    Return,
    Scope,
    Stmt,
)

Simple = Assign | Havoc | Assume | Assert

# ----------------------------------------------------------------------------- the graph


@dataclass(frozen=True)
class Jump:
    target: int
    coord: Coord | None = None


@dataclass(frozen=True)
class Branch:
    """Go to `then` when `cond` is non-zero, else to `orelse`."""

    cond: Expr
    then: int
    orelse: int
    coord: Coord | None = None


@dataclass(frozen=True)
class Halt:
    """The end of the program: `main` returned."""

    coord: Coord | None = None


Terminator = Jump | Branch | Halt


@dataclass(frozen=True)
class BasicBlock:
    """Straight-line statements, then a terminator. `head`: the id of the loop it is the head of."""

    id: int
    stmts: tuple[Simple, ...]
    end: Terminator
    head: str | None = None

    @property
    def succs(self) -> tuple[int, ...]:
        if isinstance(self.end, Jump):
            return (self.end.target,)
        if isinstance(self.end, Branch):
            return (self.end.then, self.end.orelse)
        return ()


@dataclass(frozen=True)
class CfgLoop:
    """A natural loop: its head, its blocks (head included), the loop it is nested in."""

    id: str
    head: int
    blocks: frozenset[int]
    parent: str | None


@dataclass(frozen=True, eq=False)
class Cfg:
    """The control-flow graph of a program (see the module docstring).

    `order` lists every block so that each edge that is not a back edge goes forward;
    `asserts` lists the program's assertions in source order (their index names them).
    """

    program: Program
    blocks: tuple[BasicBlock, ...]
    entry: int
    loops: Mapping[str, CfgLoop]
    order: tuple[int, ...]
    back_edges: frozenset[tuple[int, int]]
    preds: tuple[tuple[int, ...], ...]
    asserts: tuple[Assert, ...]
    _innermost: tuple[str | None, ...] = field(default=(), repr=False)

    def head(self, loop_id: str) -> int:
        return self.loops[loop_id].head

    def is_back(self, src: int, dst: int) -> bool:
        return (src, dst) in self.back_edges

    def loop_of(self, block: int) -> str | None:
        """The innermost loop that contains `block`, if any."""
        return self._innermost[block]

    def exits(self, loop_id: str) -> tuple[tuple[int, int], ...]:
        """The edges that leave the loop, as (source, target) pairs."""
        inside = self.loops[loop_id].blocks
        return tuple((b, t) for b in sorted(inside) for t in self.blocks[b].succs if t not in inside)

    def edges(self) -> Iterator[tuple[int, int]]:
        for b in self.blocks:
            for t in b.succs:
                yield b.id, t

    def assert_index(self, stmt: Assert) -> int:
        """The index of the assertion `stmt` (by identity) in `asserts`."""
        return self._assert_ids[id(stmt)]

    @cached_property
    def _assert_ids(self) -> dict[int, int]:  # built once: encode asks for every assertion it meets
        return {id(a): i for i, a in enumerate(self.asserts)}


# ----------------------------------------------------------------------------- lowering


@dataclass(frozen=True)
class _Targets:
    """Where Break, Continue and Return jump from inside a block (-1: nowhere)."""

    brk: int = -1
    cont: int = -1
    ret: int = -1


class _Labels:
    """The labels of one function instance (a `Scope`): their blocks and the gotos still open."""

    def __init__(self) -> None:
        self.blocks: dict[str, int] = {}
        self.placed: set[str] = set()
        self.used: dict[str, Coord | None] = {}


# A statement to lower where Break, Continue and Return go, or an action to take in between.
_Work = tuple[Stmt, _Targets] | Callable[[], None]


class _Lowering:
    """Lowers with an explicit work stack: statements nested thousands deep are fine."""

    def __init__(self) -> None:
        self.stmts: list[list[Simple]] = []
        self.ends: list[Terminator | None] = []
        self.heads: list[str | None] = []
        self.labels: list[_Labels] = []
        self.asserts: list[Assert] = []  # in source order
        self.work: list[_Work] = []
        self.current = self.new()

    def new(self, head: str | None = None) -> int:
        self.stmts.append([])
        self.ends.append(None)
        self.heads.append(head)
        return len(self.stmts) - 1

    def jump(self, target: int, coord: Coord | None = None) -> None:
        """End the current block with a jump; what follows starts an unreachable block."""
        self.ends[self.current] = Jump(target, coord)
        self.current = self.new()

    def go(self, target: int) -> None:
        """Fall through into `target`, which becomes the current block."""
        self.ends[self.current] = Jump(target)
        self.current = target

    def lower(self, body: Block) -> None:
        self.work.extend((s, _Targets()) for s in reversed(body))
        while self.work:
            item = self.work.pop()
            if callable(item):
                item()
            else:
                self.stmt(*item)

    def _push(self, stmts: Block, targets: _Targets, after: Callable[[], None]) -> None:
        """Schedule `stmts`, then the action `after`."""
        self.work.append(after)
        self.work.extend((s, targets) for s in reversed(stmts))

    def stmt(self, s: Stmt, targets: _Targets) -> None:
        if isinstance(s, (Assign, Havoc, Assume, Assert)):
            self.stmts[self.current].append(s)
            if isinstance(s, Assert):
                self.asserts.append(s)
        elif isinstance(s, If):
            self._if(s, targets)
        elif isinstance(s, Loop):
            self._loop(s, targets)
        elif isinstance(s, Scope):
            self._scope(s, targets)
        elif isinstance(s, Label):
            self._label(s)
        else:
            self._jump(s, targets)

    def _jump(self, s: Break | Continue | Return | Goto, targets: _Targets) -> None:
        if isinstance(s, Goto):
            self.jump(self._label_block(s.label, s.coord), s.coord)
            return
        target = {Break: targets.brk, Continue: targets.cont, Return: targets.ret}[type(s)]
        if target < 0:
            raise IRTypeError(s.coord, f"{type(s).__name__.lower()} with nowhere to go")
        self.jump(target, s.coord)

    def _if(self, s: If, targets: _Targets) -> None:
        then, orelse, join = self.new(), self.new(), self.new()
        self.ends[self.current] = Branch(s.cond, then, orelse, s.coord)
        self.current = then

        def to_orelse() -> None:
            self.go(join)
            self.current = orelse

        self._push(s.orelse, targets, lambda: self.go(join))
        self._push(s.then, targets, to_orelse)

    def _loop(self, s: Loop, targets: _Targets) -> None:
        head = self.new(s.id)
        self.go(head)
        step, exit_ = self.new(), self.new()
        inner = _Targets(brk=exit_, cont=step, ret=targets.ret)

        def back() -> None:
            self.jump(head, s.coord)
            self.current = exit_

        self._push(s.step, inner, back)
        self._push(s.body, inner, lambda: self.go(step))

    def _scope(self, s: Scope, targets: _Targets) -> None:
        end, body = self.new(), self.new()
        self.ends[self.current] = Jump(body, s.coord)  # the call (or `main`) shows in a path
        self.current = body
        self.labels.append(_Labels())
        self._push(s.body, _Targets(ret=end), lambda: self._close(s, end))

    def _close(self, s: Scope, end: int) -> None:
        self.go(end)
        labels = self.labels.pop()
        for name, coord in labels.used.items():
            if name not in labels.placed:
                raise IRTypeError(coord, f"goto to the undefined label {name} in {s.function}")

    def _label_block(self, name: str, coord: Coord | None) -> int:
        if not self.labels:
            raise IRTypeError(coord, f"label {name} outside a function scope")
        labels = self.labels[-1]
        labels.used.setdefault(name, coord)
        if name not in labels.blocks:
            labels.blocks[name] = self.new()
        return labels.blocks[name]

    def _label(self, s: Label) -> None:
        target = self._label_block(s.name, s.coord)
        labels = self.labels[-1]
        if s.name in labels.placed:
            raise IRTypeError(s.coord, f"label {s.name} defined twice")
        labels.placed.add(s.name)
        self.heads[target] = s.loop
        self.go(target)

    def finish(self) -> list[BasicBlock]:
        self.ends[self.current] = Halt()
        out = []
        for b, (stmts, end, head) in enumerate(zip(self.stmts, self.ends, self.heads, strict=True)):
            out.append(BasicBlock(b, tuple(stmts), end if end is not None else Halt(), head))
        return _compact(out)


# ----------------------------------------------------------------------------- compaction


def _retarget(end: Terminator, to: Mapping[int, int]) -> Terminator:
    if isinstance(end, Jump):
        return Jump(to[end.target], end.coord)
    if isinstance(end, Branch):
        return Branch(end.cond, to[end.then], to[end.orelse], end.coord)
    return end


def _forward(blocks: list[BasicBlock], b: int) -> int:
    """Where a jump to `b` really goes: past empty blocks that only jump on (never a loop head).

    A jump a statement made (break, return, goto, a call) keeps its block: it shows in paths.
    """
    seen = set()
    while b not in seen and b != 0:
        block = blocks[b]
        end = block.end
        if block.stmts or block.head is not None or not isinstance(end, Jump) or end.coord is not None:
            break
        seen.add(b)
        b = end.target
    return b


def _fuse(blocks: dict[int, BasicBlock]) -> None:
    """Append to a block the successor it alone jumps to (unless that is a loop head)."""
    preds: dict[int, int] = {}
    for block in blocks.values():
        for t in block.succs:
            preds[t] = preds.get(t, 0) + 1
    for b in sorted(blocks):
        if b not in blocks:
            continue
        block = blocks[b]
        while isinstance(block.end, Jump) and block.end.coord is None:
            t = block.end.target
            nxt = blocks[t]
            if t == b or preds[t] != 1 or nxt.head is not None:
                break
            block = BasicBlock(b, block.stmts + nxt.stmts, nxt.end, block.head)
            blocks[b] = block
            del blocks[t]


def _compact(raw: list[BasicBlock]) -> list[BasicBlock]:
    """Drop empty jump-on blocks, fuse straight lines, and number the blocks from 0 (the entry).

    Blocks the entry cannot reach are dropped, except the (emptied) heads of dead loops, so every
    loop of the program keeps its head.
    """
    live = _reachable(raw)
    to = {b.id: _forward(raw, b.id) for b in raw}
    kept = {b.id: BasicBlock(b.id, b.stmts, _retarget(b.end, to), b.head)
            for b in raw if b.id in live and to[b.id] == b.id}
    _fuse(kept)
    dead_heads = [BasicBlock(b.id, (), Halt(), b.head) for b in raw if b.id not in live and b.head]
    ordered = sorted([*kept.values(), *dead_heads], key=lambda b: b.id)
    number = {b.id: k for k, b in enumerate(ordered)}
    return [BasicBlock(number[b.id], b.stmts, _retarget(b.end, number), b.head) for b in ordered]


# ----------------------------------------------------------------------------- analysis


def _reachable(blocks: list[BasicBlock]) -> set[int]:
    seen, stack = {0}, [0]
    while stack:
        for t in blocks[stack.pop()].succs:
            if t not in seen:
                seen.add(t)
                stack.append(t)
    return seen


def _dfs(blocks: list[BasicBlock]) -> tuple[list[int], set[tuple[int, int]], list[int]]:
    """Reverse post-order, the retreating edges (to a block on the stack), and the roots.

    The roots are the entry (block 0), then the (emptied) blocks it does not reach.
    """
    seen: set[int] = set()
    on_stack: set[int] = set()
    post: list[int] = []
    retreating: set[tuple[int, int]] = set()
    roots: list[int] = []
    for root in range(len(blocks)):
        if root in seen:
            continue
        roots.append(root)
        seen.add(root)
        on_stack.add(root)
        stack: list[tuple[int, Iterator[int]]] = [(root, iter(blocks[root].succs))]
        while stack:
            node, succs = stack[-1]
            nxt = next(succs, None)
            if nxt is None:
                stack.pop()
                on_stack.discard(node)
                post.append(node)
            elif nxt in on_stack:
                retreating.add((node, nxt))
            elif nxt not in seen:
                seen.add(nxt)
                on_stack.add(nxt)
                stack.append((nxt, iter(blocks[nxt].succs)))
    return post[::-1], retreating, roots


def _dominators(order: list[int], preds: list[list[int]], roots: list[int]) -> list[int]:
    """Immediate dominators (Cooper, Harvey and Kennedy), with a virtual root above all roots."""
    virtual = len(preds)
    index = {b: i + 1 for i, b in enumerate(order)}
    index[virtual] = 0
    idom = {virtual: virtual}
    root_set = set(roots)

    def intersect(a: int, b: int) -> int:
        while a != b:
            while index[a] > index[b]:
                a = idom[a]
            while index[b] > index[a]:
                b = idom[b]
        return a

    changed = True
    while changed:
        changed = False
        for b in order:
            cands = [p for p in preds[b] if p in idom] + ([virtual] if b in root_set else [])
            new = cands[0]
            for p in cands[1:]:
                new = intersect(p, new)
            if idom.get(b) != new:
                idom[b] = new
                changed = True
    return [idom[b] for b in range(len(preds))]


def _dominates(idom: list[int], a: int, b: int) -> bool:
    virtual = len(idom)
    while b != a and b != virtual:
        b = idom[b]
    return b == a


def _natural_loop(head: int, sources: list[int], preds: list[list[int]]) -> frozenset[int]:
    body = {head}
    stack = [s for s in sources if s != head]
    while stack:
        b = stack.pop()
        if b not in body:
            body.add(b)
            stack.extend(preds[b])
    return frozenset(body)


def _jump_coord(block: BasicBlock) -> Coord | None:
    return block.end.coord if isinstance(block.end, (Jump, Branch)) else None


Edges = set[tuple[int, int]]


def _back_edges(blocks: list[BasicBlock], retreating: Edges, idom: list[int]) -> Edges:
    for src, dst in sorted(retreating):
        if not _dominates(idom, dst, src):
            raise UnsupportedFeature(_jump_coord(blocks[src]), "goto into a loop", "irreducible control flow")
        if blocks[dst].head is None:
            raise UnsupportedFeature(_jump_coord(blocks[src]), "goto", "a cycle without a loop head")
    return retreating


def _loops(blocks: list[BasicBlock], back: Edges, preds: list[list[int]]) -> dict[str, CfgLoop]:
    bodies: dict[str, tuple[int, frozenset[int]]] = {}
    for b in blocks:
        if b.head is not None:
            sources = [s for s, d in back if d == b.id]
            bodies[b.head] = (b.id, _natural_loop(b.id, sources, preds))
    out: dict[str, CfgLoop] = {}
    for loop_id, (head, body) in bodies.items():
        around = [(len(other), lid) for lid, (_, other) in bodies.items() if lid != loop_id and head in other]
        out[loop_id] = CfgLoop(loop_id, head, body, min(around)[1] if around else None)
    return out


def _innermost(count: int, loops: Mapping[str, CfgLoop]) -> tuple[str | None, ...]:
    best: list[tuple[int, str] | None] = [None] * count
    for loop in loops.values():
        for b in loop.blocks:
            cur = best[b]
            if cur is None or len(loop.blocks) < cur[0]:
                best[b] = (len(loop.blocks), loop.id)
    return tuple(None if x is None else x[1] for x in best)


def build_cfg(program: Program) -> Cfg:
    """The control-flow graph of `program` (raises `UnsupportedFeature` if it is irreducible)."""
    low = _Lowering()
    low.lower(program.body)
    blocks = low.finish()
    preds: list[list[int]] = [[] for _ in blocks]
    for b in blocks:
        for t in b.succs:
            preds[t].append(b.id)
    order, retreating, roots = _dfs(blocks)
    back = _back_edges(blocks, retreating, _dominators(order, preds, roots))
    loops = _loops(blocks, back, preds)
    for info in program.loops:
        if info.id not in loops:
            raise IRTypeError(info.coord, f"loop {info.id} has no head in the program")
    ordered = {info.id: loops[info.id] for info in program.loops if info.id in loops}
    ordered.update(loops)
    asserts = tuple(low.asserts)
    return Cfg(program, tuple(blocks), 0, ordered, tuple(order), frozenset(back),
               tuple(tuple(p) for p in preds), asserts, _innermost(len(blocks), loops))
