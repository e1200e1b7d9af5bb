"""The Quokka prompt: the program's code with `// line N` markers, its insertion points, its
assertions and the answer format.

The program is shown as its `Outline`: without comments, blank lines and the SV-COMP harness
(prototypes, `reach_error`, `__VERIFIER_assert`, ...), which a reader knows and which cost a CPU
model about a third of its prompt; line numbers stay those of the file.

`build_messages` is the one place chat messages are made, for sampling and for fine-tuning alike:
it is pure (no model, no torch) and depends only on the program, its source text and the prompt
data file `prompts.toml`.
"""

from __future__ import annotations

import tomllib
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib import resources
from string import Template
from typing import Any

from quokka.verifier.errors import InputError
from quokka.verifier.frontend import Outline, outline_text
from quokka.verifier.ir import LoopInfo, Program
from quokka.verifier.ir.printer import format_type_decl

from ..protocol import ProposalContext, State
from .grammar import AnswerGrammar

Message = dict[str, str]
MAX_CTIS_PER_LOOP = 3
MAX_ASSERTIONS = 8
NO_ASSERTIONS = "- none as assertion calls: prove that the error calls are unreachable"
NOT_REPEATED = "- not repeated here: see the program"
VARIANTS = ("quokka", "quokka-cot")


@dataclass(frozen=True)
class PromptTemplate:
    """One prompt variant: system text, user text and the counterexample feedback paragraph."""

    system: str
    user: str
    feedback: str


@dataclass(frozen=True)
class Example:
    """A few-shot example: a C program, its insertion points and the expected answer."""

    source: str
    insertion_points: str
    answer: str
    loop_lines: tuple[int, ...] = ()


@dataclass(frozen=True)
class PromptData:
    templates: Mapping[str, PromptTemplate]
    examples: tuple[Example, ...]


@dataclass(frozen=True)
class PromptConfig:
    variant: str = "quokka"
    few_shot: int = 0


@cache
def prompt_data() -> PromptData:
    """The templates and examples of `prompts.toml` (read once)."""
    text = resources.files(__package__).joinpath("prompts.toml").read_text(encoding="utf-8")
    return parse_prompt_data(tomllib.loads(text))


def parse_prompt_data(data: Mapping[str, Any]) -> PromptData:
    templates = {
        name: PromptTemplate(t["system"], t["user"], t["feedback"]) for name, t in data["templates"].items()
    }
    examples = tuple(
        Example(e["source"], e["insertion_points"], e["answer"], tuple(e.get("loop_lines", ())))
        for e in data.get("examples", ())
    )
    return PromptData(templates, examples)


def number_lines(source: str) -> str:
    """`source` with `// line N` appended to every non-blank line (N counts from 1)."""
    lines = source.splitlines()
    return "\n".join(f"{line}  // line {n}" if line.strip() else line for n, line in enumerate(lines, 1))


def number_code_lines(lines: Sequence[tuple[int, str]], marked: Collection[int]) -> str:
    """Each `(N, text)`, as `text  // line N` when N is `marked`."""
    return "\n".join(f"{text}  // line {n}" if n in marked else text for n, text in lines)


def describe_loop(program: Program, info: LoopInfo) -> str:
    """`- After line X: a loop (variables in scope: int x, ...)`; X is the loop keyword's line."""
    decls = [format_type_decl(c, program.var(ir).type) for c, ir in dict(info.scope).items()]
    scope = f" (variables in scope: {', '.join(decls)})" if decls else ""
    return f"- After line {info.insert_after_line}: a loop{scope}"


def insertion_points(program: Program) -> str:
    return "\n".join(describe_loop(program, info) for info in program.loops)


@lru_cache(maxsize=256)
def _outline(source: str, data_model: str) -> Outline | None:
    try:
        return outline_text(source, "<prompt>", data_model)
    except InputError:  # the program lowered: an assertion too deep to print, or an include not found
        return None


def show_program(source: str, data_model: str = "LP64", loop_lines: Collection[int] = ()) -> str:
    """The program as the prompt shows it: its outline's code lines, with `// line N` on the loop
    lines and the assertions' lines, the lines the rest of the prompt names (all of `source`,
    every line numbered, when it cannot be outlined)."""
    outline = _outline(source, data_model)
    if outline is None:
        return number_lines(source)
    return number_code_lines(outline.code_lines, {*loop_lines, *(a.line for a in outline.assertions)})


def describe_assertions(source: str, data_model: str = "LP64") -> str:
    """`- at line N: COND` for the program's assertion calls (at most `MAX_ASSERTIONS`), as written.

    Repeated next to the insertion points because an assertion in a loop is often its invariant,
    and a model copies it more easily from there than from far back in a long program.
    """
    outline = _outline(source, data_model)
    if outline is None:
        return NOT_REPEATED
    found = outline.assertions
    lines = [f"- at line {a.line}: {a.condition}" for a in found[:MAX_ASSERTIONS]]
    if len(found) > MAX_ASSERTIONS:
        lines.append(f"- and {len(found) - MAX_ASSERTIONS} more: see the program")
    return "\n".join(lines) or NO_ASSERTIONS


def describe_ctis(program: Program, ctis: Mapping[str, Sequence[State]]) -> str:
    """Counterexamples to induction in C names, at most `MAX_CTIS_PER_LOOP` per loop."""
    out = []
    for info in program.loops:
        c_of = {ir: c for c, ir in dict(info.scope).items()}
        for state in list(ctis.get(info.id, ()))[:MAX_CTIS_PER_LOOP]:
            values = ", ".join(f"{c_of[k]} = {v}" for k, v in state.items() if k in c_of)
            if values:
                out.append(f"- at the loop after line {info.insert_after_line}: {values}")
    return "\n".join(out)


def _template(config: PromptConfig) -> PromptTemplate:
    templates = prompt_data().templates
    if config.variant not in templates:
        raise InputError(None, f"unknown prompt variant {config.variant!r} (known: {', '.join(templates)})")
    return templates[config.variant]


def _user_text(
    t: PromptTemplate, source: str, points: str, ctis: str, data_model: str, loop_lines: Collection[int]
) -> str:
    text = Template(t.user).substitute(
        program=show_program(source, data_model, loop_lines),
        insertion_points=points,
        assertions=describe_assertions(source, data_model),
    )
    if ctis:
        text += Template(t.feedback).substitute(counterexamples=ctis)
    return text


def build_messages(
    program: Program,
    source: str,
    *,
    ctis: Mapping[str, Sequence[State]] | None = None,
    config: PromptConfig = PromptConfig(),
) -> list[Message]:
    """The chat messages asking for invariants of `program` (whose C text is `source`)."""
    t = _template(config)
    messages = [{"role": "system", "content": t.system}]
    for ex in prompt_data().examples[: config.few_shot]:
        user = _user_text(t, ex.source, ex.insertion_points, "", "LP64", ex.loop_lines)
        messages.append({"role": "user", "content": user})
        messages.append({"role": "assistant", "content": _example_answer(ex, config)})
    ctis_text = describe_ctis(program, ctis or {})
    lines = [info.insert_after_line for info in program.loops]
    user = _user_text(t, source, insertion_points(program), ctis_text, program.data_model, lines)
    messages.append({"role": "user", "content": user})
    return messages


def _example_answer(ex: Example, config: PromptConfig) -> str:
    return f"/*@\n{ex.answer}\n@*/" if config.variant == "quokka-cot" else ex.answer


def messages_for_context(context: ProposalContext, config: PromptConfig = PromptConfig()) -> list[Message]:
    """`build_messages` for a proposal round (its counterexamples included)."""
    if context.source is None:
        raise InputError(None, "the language-model prompt needs the program's C source text")
    return build_messages(context.program, context.source, ctis=context.ctis, config=config)


def format_answer(invariants: Sequence[tuple[int, str]], config: PromptConfig = PromptConfig()) -> str:
    """The answer a model should give for `(insert_after_line, C expression)` pairs (training targets)."""
    body = "\n".join(f"After line {line}, insert assume({text});" for line, text in invariants)
    return f"/*@\n{body}\n@*/" if config.variant == "quokka-cot" else body


def answer_grammar(program: Program, config: PromptConfig = PromptConfig()) -> AnswerGrammar | None:
    """The answers `format_answer` writes for `program`: its insertion points and the names in
    scope at each (None for the chain-of-thought variant, whose answers are free text)."""
    if config.variant != "quokka" or not program.loops:
        return None
    scopes: dict[int, set[str]] = {}
    for info in program.loops:
        scopes.setdefault(info.insert_after_line, set()).update(c for c, _ in info.scope)
    return AnswerGrammar.of(scopes)
