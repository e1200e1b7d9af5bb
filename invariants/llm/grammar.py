"""The answer grammar, for constrained decoding: `After line X, insert assume(COND);` lines only.

X is one of the program's insertion points and COND an expression over the integer variables in
scope there: names, decimal literals, unary `!` `-`, the binary operators of `BINARY`, balanced
parentheses. The grammar is checked character by character (`advance`), so a local backend can
mask, at each decoding step, the tokens that would leave it. It keeps a model's answers parseable;
it does not make them true: every candidate is still parsed and checked by the verifier.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import NamedTuple

HEAD = "After line "
MID = ", insert assume("
BINARY = ("+", "-", "*", "/", "%", "==", "!=", "<", "<=", ">", ">=", "&&", "||")
MAX_DIGITS = 10

# phases
_HEAD, _NUM, _MID, _COND, _TAIL, _DONE = range(6)


def answer_start(line: int) -> str:
    """The fixed start of every answer line for insertion line `line`."""
    return f"{HEAD}{line}{MID}"


class GrammarState(NamedTuple):
    """Where an answer prefix stands. `word`: the identifier, number, line number or operator
    being written; `operand`: COND expects an operand next; `pos`: index into a literal."""

    phase: int = _HEAD
    pos: int = 0
    word: str = ""
    line: int = 0
    operand: bool = True
    depth: int = 0
    chars: int = 0
    lines: int = 0
    last: str = ""


@dataclass(frozen=True)
class AnswerGrammar:
    """The answers allowed for one prompt: `scopes` maps each insertion line to its C names."""

    scopes: tuple[tuple[int, frozenset[str]], ...]
    max_lines: int = 4
    max_cond_chars: int = 300
    max_depth: int = 8

    @staticmethod
    def of(scopes: Mapping[int, Iterable[str]], max_lines: int | None = None) -> AnswerGrammar:
        items = tuple(sorted((line, frozenset(names)) for line, names in scopes.items()))
        return AnswerGrammar(items, max_lines if max_lines is not None else max(2, 2 * len(items)))

    @property
    def lines(self) -> tuple[int, ...]:
        """The insertion lines an answer may name."""
        return tuple(line for line, _ in self.scopes)

    def pinned(self, line: int) -> AnswerGrammar:
        """This grammar with `line` the only insertion line an answer may name."""
        scopes = tuple(item for item in self.scopes if item[0] == line)
        if not scopes:
            raise ValueError(f"line {line} is not an insertion line of this grammar")
        return AnswerGrammar(scopes, 2, self.max_cond_chars, self.max_depth)

    def start(self) -> GrammarState:
        return GrammarState()

    def can_stop(self, state: GrammarState) -> bool:
        """The prefix is a whole answer (it may end here)."""
        return state.phase == _DONE

    def must_stop(self, state: GrammarState) -> bool:
        """The prefix is a whole answer that nothing may follow (its last allowed line is done)."""
        return state.phase == _DONE and state.lines >= self.max_lines

    @cached_property
    def alphabet(self) -> frozenset[str]:
        """Every character an answer may contain: the fixed words, digits, the names in scope,
        the operators and punctuation."""
        names = "".join(name for _, scope in self.scopes for name in scope)
        return frozenset(HEAD + MID + names + "0123456789+-*/%=!<>&|() ;\n")

    def advance(self, state: GrammarState | None, text: str) -> GrammarState | None:
        """The state after `text`, or None when `text` leaves the grammar."""
        for ch in text:
            if state is None:
                return None
            state = self._char(state, ch)
        return state

    def accepts(self, text: str) -> bool:
        """`text` is a whole answer of the grammar."""
        state = self.advance(self.start(), text)
        return state is not None and self.can_stop(state)

    def _char(self, s: GrammarState, ch: str) -> GrammarState | None:
        if s == GrammarState() and ch == " ":  # one leading space (plain `Assistant:` prompts)
            return s._replace(last=" ")
        if s.phase == _HEAD:
            return _literal(s, ch, HEAD, _NUM)
        if s.phase == _NUM:
            return self._number(s, ch)
        if s.phase == _MID:
            return _literal(s, ch, MID, _COND)
        if s.phase == _COND:
            return self._cond(s, ch)
        if s.phase == _TAIL:
            return s._replace(phase=_DONE, lines=s.lines + 1) if ch == ";" else None
        if ch == "\n" and s.lines < self.max_lines:
            return GrammarState(lines=s.lines)
        return None

    @cached_property
    def _scope(self) -> dict[int, tuple[frozenset[str], frozenset[str]]]:
        """line -> (its names, every non-empty prefix of them): the per-character checks look up."""
        out = {}
        for line, names in self.scopes:
            out[line] = (names, frozenset(n[:k] for n in names for k in range(1, len(n) + 1)))
        return out

    @cached_property
    def _line_prefixes(self) -> frozenset[str]:
        return frozenset(str(ln)[:k] for ln, _ in self.scopes for k in range(1, len(str(ln)) + 1))

    def _names(self, line: int) -> frozenset[str]:
        return self._scope[line][0] if line in self._scope else frozenset()

    def _is_prefix(self, line: int, word: str) -> bool:
        return line in self._scope and word in self._scope[line][1]

    def _number(self, s: GrammarState, ch: str) -> GrammarState | None:
        if ch.isdigit() and ch.isascii():
            word = s.word + ch
            return s._replace(word=word) if word in self._line_prefixes else None
        if ch == MID[0] and s.word.isdigit() and int(s.word) in self._scope:
            return s._replace(phase=_MID, pos=1, line=int(s.word), word="")
        return None

    def _cond(self, s: GrammarState, ch: str) -> GrammarState | None:
        if s.chars >= self.max_cond_chars:
            return None
        if ch == s.last and ch in "+- ":  # `--`, `++`: C's decrement and increment
            return None
        s = s._replace(chars=s.chars + 1)
        out = self._operand(s, ch) if s.operand else self._operator(s, ch)
        return None if out is None else out._replace(last=ch)

    def _operand(self, s: GrammarState, ch: str) -> GrammarState | None:
        if s.word in ("<", ">"):  # `<` or `>` may still become `<=` / `>=`
            if ch == "=":
                return s._replace(word="")
            s = s._replace(word="")
        if s.word:
            return self._in_word(s, ch)
        if _word_char(ch):
            return self._start_word(s, ch)
        if ch == "(":
            return s._replace(depth=s.depth + 1) if s.depth < self.max_depth else None
        if ch in "!- ":
            return s
        return None

    def _start_word(self, s: GrammarState, ch: str) -> GrammarState | None:
        if ch.isdigit():
            return s._replace(word=ch)
        return s._replace(word=ch) if self._is_prefix(s.line, ch) else None

    def _in_word(self, s: GrammarState, ch: str) -> GrammarState | None:
        word = s.word + ch
        if word[0].isdigit():
            if ch.isdigit() and ch.isascii():  # no leading zero: `010` is octal in C
                return s._replace(word=word) if len(word) <= MAX_DIGITS and s.word != "0" else None
        elif _word_char(ch):
            return s._replace(word=word) if self._is_prefix(s.line, word) else None
        if not word[0].isdigit() and s.word not in self._names(s.line):
            return None
        if _word_char(ch):
            return None
        return self._operator(s._replace(word="", operand=False), ch)

    def _operator(self, s: GrammarState, ch: str) -> GrammarState | None:
        if s.word:  # the second character of `==`, `!=`, `&&`, `||`
            if s.word + ch in BINARY:
                return s._replace(word="", operand=True)
            return None
        if ch == " ":
            return s
        if ch == ")":
            if s.depth == 0:
                return s._replace(phase=_TAIL, chars=0)
            return s._replace(depth=s.depth - 1)
        if ch in "+-*/%":
            return s._replace(operand=True)
        if ch in "<>":
            return s._replace(operand=True, word=ch)
        if ch in "=!&|":
            return s._replace(word=ch)
        return None


def _literal(s: GrammarState, ch: str, literal: str, after: int) -> GrammarState | None:
    if ch != literal[s.pos]:
        return None
    if s.pos + 1 == len(literal):
        return s._replace(phase=after, pos=0)
    return s._replace(pos=s.pos + 1)


def _word_char(ch: str) -> bool:
    return ch.isascii() and (ch.isalnum() or ch == "_")


class Vocabulary:
    """A tokenizer's tokens for the grammar: `texts[i]` is the text token i adds to an answer (""
    for tokens never allowed), `eos` the end-of-answer tokens; indexed by first character (for
    `TokenConstraint.allowed`) and by the set of characters (for `TokenConstraint.support`)."""

    def __init__(self, texts: Sequence[str], eos: Collection[int]) -> None:
        self.texts, self.eos = texts, frozenset(eos)
        self.by_first: dict[str, list[int]] = {}
        self._by_chars: dict[int, list[int]] = {}  # `_char_mask` of a text -> the tokens with it
        for i, text in enumerate(texts):
            if text and i not in self.eos:
                self.by_first.setdefault(text[0], []).append(i)
                self._by_chars.setdefault(_char_mask(text), []).append(i)
        self.longest = max((len(t) for t in texts), default=0)

    def within(self, chars: Collection[str]) -> list[int]:
        """The tokens (never `eos`) whose text uses only `chars`, in order."""
        outside = ~_char_mask(chars) | 1
        return sorted(i for mask, ids in self._by_chars.items() if not mask & outside for i in ids)


def _char_mask(text: Iterable[str]) -> int:
    """Bit k set when chr(k) occurs, for ASCII; bit 0 for any other character."""
    mask = 0
    for ch in set(text):
        code = ord(ch)
        mask |= 1 << code if 0 < code < 128 else 1
    return mask


class TokenConstraint:
    """The grammar over a tokenizer's vocabulary (`Vocabulary`, or its `texts` and `eos`): which
    tokens each answer prefix allows; `eos` is allowed where the answer may end."""

    def __init__(
        self, grammar: AnswerGrammar, texts: Sequence[str] | Vocabulary, eos: Collection[int] = ()
    ) -> None:
        vocabulary = texts if isinstance(texts, Vocabulary) else Vocabulary(texts, eos)
        self.grammar, self.vocabulary = grammar, vocabulary
        self.texts, self.eos, self.by_first = vocabulary.texts, vocabulary.eos, vocabulary.by_first
        self._allowed: dict[GrammarState, list[int]] = {}
        self._longest = vocabulary.longest
        self._support: list[int] | None = None

    def step(self, state: GrammarState, token: int) -> GrammarState | None:
        """The state after `token`, or None when the grammar does not allow it here."""
        if token in self.eos:
            return state if self.grammar.can_stop(state) else None
        text = self.texts[token] if 0 <= token < len(self.texts) else ""
        return self.grammar.advance(state, text) if text else None

    def support(self) -> list[int]:
        """The tokens any state may allow, in order (a superset: those whose characters are all in
        the grammar's alphabet, and `eos`); a sampler need not score the others."""
        if self._support is None:
            self._support = sorted({*self.vocabulary.within(self.grammar.alphabet), *self.eos})
        return self._support

    def allowed(self, state: GrammarState) -> list[int]:
        """Every token allowed after `state` (cached: line starts and literals repeat)."""
        key = state
        if state.chars + self._longest < self.grammar.max_cond_chars:
            key = state._replace(chars=0)  # the length so far matters only near the limit
        if key not in self._allowed:
            self._allowed[key] = self._scan(state)
        return self._allowed[key]

    def _scan(self, state: GrammarState) -> list[int]:
        out = sorted(self.eos) if self.grammar.can_stop(state) else []
        for first, ids in self.by_first.items():
            after = self.grammar.advance(state, first)
            if after is not None:
                out += [i for i in ids if self.grammar.advance(after, self.texts[i][1:]) is not None]
        return sorted(out)
