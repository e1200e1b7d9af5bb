"""`quokka torture`: a campaign that tries to make Quokka answer wrongly, crash or hang.

Trials take turns until the time is up, each `quokka verify --json` in its own limited process
(`execution.run_limited`):

* **generated programs**: random C over `int` (two inputs assumed in [-4, 4], a bounded loop,
  branches, one assertion) whose truth is known: gcc's build is run on every input in the box;
* **mutants** of the `true` tasks of a set: one comparison or constant of one assertion changed;
  a mutant counts only when gcc's build reaches the error on some sampled input, and then it
  must never be proved;
* **adversarial invariants** (`torture_invariants`): a task with a known verdict verified with a
  wrong, weak or ill-formed loop invariant given by `--invariant`, an ACSL annotation or a lying
  correctness witness: the verdict must stay right (or become UNKNOWN); and generated programs
  filling a global, local or heap array, with a quantified claim whose truth is known: it must
  get a status, never `valid` when false nor `refuted` when true;
* **fuzzed inputs**: a task's program truncated, with a span deleted, a line duplicated, random
  bytes inserted, a number made huge or an expression nested thousands deep. Each must end in a
  verdict or a located one-line error (exit 2), within the time limit, without a traceback;
* **faults** injected into `quokka batch` and `quokka lsp` (`faults`): kill -9, a damaged store,
  a task that hangs or exhausts memory, an editor that edits fast, closes or goes away.

Wrong verdicts, crashes and hangs are counted and their programs saved under `--out`.
"""

from __future__ import annotations

import itertools
import random
import re
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from quokka.svcomp.configs import DEFAULT_VERIFIER
from quokka.svcomp.execution import Limits, Outcome, run_limited
from quokka.svcomp.qa.faults import FaultTrials
from quokka.svcomp.qa.torture_invariants import InvariantTrial, array_trial, invariant_trial
from quokka.svcomp.tasks import Task
from quokka.verifier.exec.replay import CompiledProgram, compile_c
from quokka.verifier.properties import ASSERT
from quokka.verifier.verdict.contract import Reading, VerifyExit, classify, verify_argv
from quokka.verifier.verdict.results import Result, Verdict, read_verify_output

BOX = range(-4, 5)  # the inputs of a generated program
MUTANT_SAMPLES = 60  # random inputs tried on gcc's build of a mutant
COUNTED = {"wrong": "wrong", "crash": "crashes", "hang": "hangs"}  # finding kind -> `Counts` field


@dataclass
class Counts:
    """What a campaign did and found."""

    programs: int = 0
    programs_true: int = 0
    mutants_tried: int = 0
    mutants: int = 0  # confirmed failing by gcc's build
    fuzz_inputs: int = 0
    invariants: int = 0  # adversarial invariants given
    array_claims: int = 0  # quantified claims of known truth, on generated array programs
    faults: int = 0  # faults injected
    verdicts: dict[str, int] = field(default_factory=lambda: {"true": 0, "false": 0, "unknown": 0})
    wrong: int = 0
    crashes: int = 0
    hangs: int = 0

    @property
    def failed(self) -> bool:
        return bool(self.wrong or self.crashes or self.hangs)

    def to_json(self) -> dict[str, object]:
        return asdict(self)


@dataclass(frozen=True)
class Finding:
    kind: str  # "wrong", "crash", "hang"
    trial: str
    detail: str


# ----------------------------------------------------------------------------- generated programs

PROLOGUE = """\
extern int __VERIFIER_nondet_int(void);
extern void reach_error(void);
void __VERIFIER_assert(int c) { if (!c) reach_error(); }
int main(void) {
  int a = __VERIFIER_nondet_int();
  if (a < -4 || a > 4) return 0;
  int b = __VERIFIER_nondet_int();
  if (b < -4 || b > 4) return 0;
"""


def _term(rng: random.Random) -> str:
    return rng.choice(["a", "b", "x", "y", str(rng.randint(-5, 5))])


def _update(rng: random.Random) -> str:
    target, other, c = rng.choice("xy"), _term(rng), rng.randint(1, 5)
    value = rng.choice([
        f"{target} + {c} * {other}", f"{target} - {other}", f"{target} * {c} + {other}",
        f"{target} % {c + 1} + {other}", f"({target} ^ {other}) & 127", f"{target} / {c} - {other}",
    ])  # fmt: skip
    return f"{target} = ({value}) % 1000;"


def _condition(rng: random.Random) -> str:
    op = rng.choice(["<", "<=", ">", ">=", "==", "!="])
    return f"{_term(rng)} {op} {_term(rng)}"


def generated_program(rng: random.Random) -> str:
    """A random program whose values stay far from int's limits (every update is taken % 1000)."""
    lines = [f"  int x = {_term(rng).replace('x', 'a').replace('y', 'b')}, y = {rng.randint(-3, 3)};"]
    body = [_update(rng) for _ in range(rng.randint(1, 3))]
    if rng.random() < 0.6:
        body.append(f"if ({_condition(rng)}) {{ {_update(rng)} }} else {{ {_update(rng)} }}")
    lines.append(f"  for (int i = 0; i < {rng.randint(0, 6)}; i++) {{ {' '.join(body)} }}")
    claim = rng.choice(
        [
            _condition(rng),
            f"x % 2 == {rng.randint(0, 1)} || y != {rng.randint(-3, 3)}",
            f"x + y <= {rng.randint(-20, 60)}",
            f"x != {rng.randint(-10, 10)}",
        ]
    )
    lines.append(f"  __VERIFIER_assert({claim});")
    return PROLOGUE + "\n".join(lines) + "\n  return 0;\n}\n"


def reaches_error(compiled: CompiledProgram, inputs: Iterator[Sequence[int]]) -> bool | None:
    """Whether gcc's build reaches the error on one of `inputs` (None: a run failed)."""
    for values in inputs:
        outcome = compiled.run(values, timeout_s=5)
        if outcome.status == "reached":
            return True
        if outcome.status != "not_reached":
            return None
    return False


# ----------------------------------------------------------------------------- mutants

_ASSERTION = re.compile(r"__VERIFIER_assert\s*\(")
_COMPARISONS = {"<=": "<", "<": "<=", ">=": ">", ">": ">=", "==": "!=", "!=": "=="}
_COMPARISON = re.compile(r"<=|>=|==|!=|(?<![<>-])<(?![<=])|(?<![<>-])>(?![>=])")
_NUMBER = re.compile(r"(?<![\w.])\d+(?![\w.])")
_CHANGES: tuple[tuple[re.Pattern[str], Callable[[str], str]], ...] = (
    (_COMPARISON, lambda s: _COMPARISONS[s]),
    (_NUMBER, lambda s: str(int(s) + 1)),
)


def mutants(text: str, rng: random.Random, limit: int = 4) -> list[str]:
    """Variants of `text` with one comparison flipped or one constant shifted in one assertion."""
    out: list[str] = []
    for call in _ASSERTION.finditer(text):
        end = text.find(";", call.end())
        span = text[call.end() : end] if end > 0 else ""
        for pattern, change in _CHANGES:
            for hit in pattern.finditer(span):
                start = call.end() + hit.start()
                out.append(text[:start] + change(hit.group()) + text[start + len(hit.group()) :])
    rng.shuffle(out)
    return out[:limit]


# ----------------------------------------------------------------------------- fuzzing


def fuzzed(text: str, rng: random.Random) -> tuple[str, bytes]:
    """One damaged copy of `text`: (what was done, the bytes)."""
    data = text.encode()
    cut = rng.randrange(max(1, len(data)))
    choices: list[tuple[str, Callable[[], bytes]]] = [
        ("truncated", lambda: data[:cut]),
        ("span deleted", lambda: data[:cut] + data[cut + rng.randint(1, 40) :]),
        ("line duplicated", lambda: _duplicate_line(text, rng).encode()),
        ("random bytes", lambda: data[:cut] + bytes(rng.randrange(256) for _ in range(8)) + data[cut:]),
        ("huge constant", lambda: _NUMBER.sub("123456789012345678901234567890", text, count=1).encode()),
        ("deep nesting", lambda: text.replace("{", "{ int deep = " + "(" * 3000 + "0" + ")" * 3000 + ";", 1)
         .encode()),
        ("non-UTF-8", lambda: data[:cut] + b"\xff\xfe\xc3" + data[cut:]),
    ]  # fmt: skip
    name, make = rng.choice(choices)
    return name, make()


def _duplicate_line(text: str, rng: random.Random) -> str:
    lines = text.splitlines(keepends=True)
    k = rng.randrange(len(lines)) if lines else 0
    return "".join(lines[: k + 1] + lines[k:])


# ----------------------------------------------------------------------------- the campaign


@dataclass(frozen=True)
class Settings:
    minutes: float
    seed: int
    timeout_s: float
    out: Path
    verifier: tuple[str, ...] = DEFAULT_VERIFIER
    faults: bool = True


class Campaign:
    """Runs trials in turn until the deadline; `counts` and `findings` say what happened."""

    def __init__(self, settings: Settings, true_tasks: Sequence[Task], sources: Sequence[Task]) -> None:
        self.settings = settings
        self.rng = random.Random(settings.seed)
        self.true_tasks = list(true_tasks)
        self.sources = list(sources)
        self.known = [t for t in self.sources if t.expected is not None]
        self.counts = Counts()
        self.findings: list[Finding] = []
        self.deadline = time.monotonic() + 60 * settings.minutes
        self.work = Path(tempfile.mkdtemp(prefix="quokka-torture-"))
        self.fault_trials = FaultTrials(self.work, self.sources, settings.timeout_s, self.rng)
        self._faults_run = 0

    def run(self, progress: Callable[[Counts], None] = lambda counts: None) -> Counts:
        trials = [self.generated] + [self.mutant] * bool(self.true_tasks) + [self.fuzz] * bool(self.sources)
        trials += [self.invariant] * bool(self.known) + [self.array_claim]
        trials += [self.fault] * self.settings.faults
        try:
            for k in itertools.count():
                if time.monotonic() >= self.deadline:
                    break
                trials[k % len(trials)](k)
                progress(self.counts)
        finally:  # what a finding needs was copied to `settings.out`
            shutil.rmtree(self.work, ignore_errors=True)
        return self.counts

    # --- trials

    def generated(self, k: int) -> None:
        path = self._write(f"gen{k}.c", generated_program(self.rng).encode())
        compiled = self._compile(path)
        if compiled is None:
            return
        truth = reaches_error(compiled, iter(itertools.product(BOX, BOX)))
        if truth is None:
            return
        self.counts.programs += 1
        self.counts.programs_true += not truth
        self._judge(path, Verdict.FALSE if truth else Verdict.TRUE)

    def mutant(self, k: int) -> None:
        task = self.rng.choice(self.true_tasks)
        text = task.program.read_text(errors="replace")
        for m, variant in enumerate(mutants(text, self.rng, limit=1)):
            self.counts.mutants_tried += 1
            path = self._write(f"mut{k}_{m}_{task.program.name}", variant.encode())
            compiled = self._compile(path, task.data_model or "LP64")
            samples = ([self.rng.randint(-8, 64) for _ in range(12)] for _ in range(MUTANT_SAMPLES))
            if compiled is not None and reaches_error(compiled, samples):
                self.counts.mutants += 1
                self._judge(path, Verdict.FALSE, task.data_model)

    def fuzz(self, k: int) -> None:
        task = self.rng.choice(self.sources)
        what, data = fuzzed(task.program.read_text(errors="replace"), self.rng)
        path = self._write(f"fuzz{k}_{task.program.name}", data)
        self.counts.fuzz_inputs += 1
        self._judge(path, None, task.data_model, what)

    def invariant(self, k: int) -> None:
        task = self.rng.choice(self.known)
        model = task.data_model or "LP64"
        trial = invariant_trial(task.program, model, self.work, self.rng, f"inv{k}_{task.program.name}")
        if trial is None:
            return
        self.counts.invariants += 1
        truth = Verdict.TRUE if task.expected else Verdict.FALSE
        # judged under the task's property: a bare C file would be read as `assert`
        args = (*trial.args, "--property", task.property)
        self._judge(trial.program, truth, task.data_model, trial.description, args)

    def array_claim(self, k: int) -> None:
        trial = array_trial(self.work, self.rng, f"arr{k}.c")
        self.counts.array_claims += 1
        result = self._judge(trial.program, Verdict.TRUE, None, trial.description, trial.args)
        problem = None if result is None else _claim_problem(result, trial)
        if problem is not None:
            self._found("wrong", f"{trial.program.name} ({trial.description})", problem, trial.program)

    def fault(self, k: int) -> None:
        report = self.fault_trials.run(self._faults_run)
        self._faults_run += 1
        self.counts.faults += report.injected
        log = self._write(f"fault{k}.log", "\n".join(report.log).encode())
        for violation in report.violations:
            self._found(violation.kind, report.name, violation.detail, log)

    # --- helpers

    def _write(self, name: str, data: bytes) -> Path:
        path = self.work / name
        path.write_bytes(data)
        return path

    def _compile(self, path: Path, data_model: str = "LP64") -> CompiledProgram | None:
        workdir = self.work / f"{path.stem}.build"
        workdir.mkdir(exist_ok=True)
        built = compile_c(path, data_model, workdir, property_name=ASSERT)
        return built if isinstance(built, CompiledProgram) else None

    def _judge(
        self,
        path: Path,
        truth: Verdict | None,
        data_model: str | None = None,
        what: str = "",
        args: Sequence[str] = (),
    ) -> Result | None:
        """Verify `path` (with `args`); a wrong verdict (against `truth`), a crash or a hang is a
        finding. The result, when the run gave one."""
        outcome = self._verify(path, data_model, args)
        trial = f"{path.name}{f' ({what})' if what else ''}"
        problem = _problem(outcome)
        if problem is not None:
            self._found(problem[0], trial, problem[1], path)
            return None
        if outcome.exit_code == VerifyExit.BAD_INPUT:
            return None
        result = read_verify_output(outcome.stdout)
        assert isinstance(result, Result)  # `_problem` saw to it
        self.counts.verdicts[result.verdict.value] += 1
        if truth is not None and result.verdict not in (truth, Verdict.UNKNOWN):
            detail = f"{result.verdict.value}, expected {truth.value}: {result.reason}"
            self._found("wrong", trial, detail, path)
        return result

    def _verify(self, path: Path, data_model: str | None, args: Sequence[str] = ()) -> Outcome:
        model = ("--data-model", data_model) if data_model else ()
        command = verify_argv(self.settings.verifier, str(path), self.settings.timeout_s, *args, *model)
        return run_limited(list(command), Limits.for_timeout(self.settings.timeout_s))

    def _found(self, kind: str, trial: str, detail: str, path: Path) -> None:
        setattr(self.counts, COUNTED[kind], getattr(self.counts, COUNTED[kind]) + 1)
        self.findings.append(Finding(kind, trial, detail))
        self.settings.out.mkdir(parents=True, exist_ok=True)
        (self.settings.out / path.name).write_bytes(path.read_bytes())
        (self.settings.out / f"{path.name}.txt").write_text(f"{kind}: {detail}\n")


def _claim_problem(result: Result, trial: InvariantTrial) -> str | None:
    """What is wrong with the status of `trial`'s one claim in `result` (None: nothing)."""
    if len(result.claims) != 1:
        return f"{len(result.claims)} claim reports for the one claim given"
    claim = result.claims[0]
    wrong = {True: "refuted", False: "valid", None: None}[trial.claim_holds]
    if claim.status == wrong:
        return f"a {'true' if trial.claim_holds else 'false'} claim is {claim.status}: {claim.reason}"
    return None


def _problem(outcome: Outcome) -> tuple[str, str] | None:
    """("hang" | "crash", detail) when the run did not end in a verdict or a located error."""
    if outcome.killed_for:
        return "hang", f"killed for {outcome.killed_for} after {outcome.wall_s:.0f} s"
    found = classify(outcome.exit_code, outcome.stdout, outcome.stderr_tail)
    if "Traceback" in outcome.stderr_tail or found.reading is Reading.CRASHED:
        return "crash", f"exit {outcome.exit_code} {outcome.signal_name}: {outcome.stderr_tail[-400:]}"
    if found.reading is Reading.MALFORMED:
        return "crash", f"unreadable --json output ({found.message})"
    if outcome.exit_code != VerifyExit.BAD_INPUT and found.reading is not Reading.RESULT:
        return "crash", f"no result in the --json output: {outcome.stdout[-400:]!r}"
    if outcome.exit_code == VerifyExit.BAD_INPUT and len(outcome.stderr_tail.strip().splitlines()) != 1:
        return "crash", f"an error of more than one line: {outcome.stderr_tail[-400:]}"
    return None
