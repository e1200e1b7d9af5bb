"""Confirm a counterexample by compiling the ORIGINAL C program with gcc/cc and running it.

A generated harness is linked with the program:

* every `__VERIFIER_nondet_<type>()` returns the next input read from stdin, converted to its
  type by C's conversion (inputs are passed modulo 2**64, so C's conversion and
  `semantics.wrap` agree); when the inputs run out it returns 0. `__VERIFIER_nondet_double()`
  and `__VERIFIER_nondet_float()` return the value whose IEEE encoding is the input (modulo 2**64,
  2**32: the bits are copied, `memcpy`), as the interpreter reads a float input (`fpsem`);
* reaching the error is detected at the entry of `reach_error`: the program is compiled with
  `-finstrument-functions` and the harness's entry hook exits with a marker when the entered
  function is `reach_error`. Whatever the body of `reach_error` (`__assert_fail`, `assert(0)`,
  empty) this sees the call; programs that only declare (or implicitly declare) it get a weak
  definition from the harness;
* the error is what the IR's Asserts are (`Program.property_name`, `properties`): under
  `unreach-call` only `reach_error`, and a failing `assert()` aborts in glibc's `__assert_fail`
  (signal 6: not reached); under `assert` the harness also defines `__assert_fail` and its kin,
  `__VERIFIER_error` and `__VERIFIER_assert` (weak: the program's own definitions win, and their
  entry counts as the error too), so a failing `assert()` reaches the error;
* under `unreach-call:__VERIFIER_error` (older tasks) the error is the entry of `__VERIFIER_error`
  instead, defined weakly like `reach_error` above;
* `__VERIFIER_assume`, `__CPROVER_assume` and `assume_abort_if_not` (weak: the program's own win)
  end a run whose assumption fails with status 87 and no error: the run is discarded; a run
  that reaches the error reports how many inputs it read (`inputs_read`);
* `replay_sanitized` builds with AddressSanitizer and UndefinedBehaviorSanitizer and counts a
  run only when it reaches the error with no report (for paths longer than the interpreter's
  limit, `checks`);
* under `no-overflow` the error is a signed overflow, which gcc's UndefinedBehaviorSanitizer
  (`-fsanitize=signed-integer-overflow,shift-base`) reports and stops at; `reach_error` is no
  error (the harness's weak one does nothing);
* uninitialised locals are zeroed (`-ftrivial-auto-var-init=zero` where the compiler has it),
  matching an interpreter run that gives 0 to `Havoc`s of origin "uninitialised"
  (`replay_inputs` extracts the nondet inputs of an `Execution` and checks that); a path that
  gives one another value (the nondet reading of uninitialised locals) is replayed on a copy whose
  declarations of those locals take the next input (`InputDeclaration`, `initialise`);
* code2inv's `unknown()` is answered like `__VERIFIER_nondet_int()`.
* on Linux the program dies with the process that runs it (`PARENT_VARIABLE`), so a verifier
  killed with SIGKILL leaves none of its runs behind (a looping one would run on for ever).

ILP32 tasks need `-m32` (with `-msse2 -mfpmath=sse`: floating point is evaluated in its own type,
as on x86-64 and in the IR, not in the x87's extended precision); where it does not link, an
ILP32 program is run natively only if a conservative scan finds nothing whose meaning depends on
the data model (`long` alone, `L` suffixes, `sizeof`, pointer-sized typedefs, ...; `float` and
`double` are the same IEEE types in both); otherwise the answer is "unavailable".

For testing the interpreter, `compile_c` can also instrument loop heads (`LoopProbe`): a trace
call is inserted where the IR's loop head is (before the condition of `while`/`for`, at the
start of a `do` body) and reports the values of the given C variables.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from quokka.verifier.exec.interp import Execution
from quokka.verifier.lexer import blank_comments
from quokka.verifier.properties import ASSERT, NO_OVERFLOW, UNREACH_VERIFIER_ERROR

REACHED_STATUS = 86
ASSUMPTION_STATUS = 87  # an assumption of the harness's `__VERIFIER_assume` failed: the run is discarded
_MARK = "@@QK"
# the pid of the process running the program, which the harness dies with (`PR_SET_PDEATHSIG`; a
# program whose runner is already gone exits at once): a killed verifier leaves no program running
PARENT_VARIABLE = "QUOKKA_PARENT_PID"
_COMPILE_TIMEOUT_S = 60.0

_HARNESS = r"""
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#define QK __attribute__((no_instrument_function))
#define QK_WEAK __attribute__((weak, no_instrument_function))
static char qk_buf[1 << 16];
QK static void qk_flush(int sig) { (void)sig; fflush(stderr); }
QK static void qk_die_with_parent(void) {
#ifdef __linux__
  const char *parent = getenv("QUOKKA_PARENT_PID");
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (parent && getppid() != (pid_t)atol(parent)) _exit(125);
#endif
}
QK __attribute__((constructor)) static void qk_init(void) {
  qk_die_with_parent();
  setvbuf(stderr, qk_buf, _IOFBF, sizeof qk_buf);
  signal(SIGABRT, qk_flush);
}
static unsigned long long qk_reads; /* the inputs the run asked for */
QK static unsigned long long qk_next(void) {
  unsigned long long v;
  qk_reads++;
  return scanf("%llu", &v) == 1 ? v : 0;
}
QK static void qk_reached(void) {
  fprintf(stderr, "\n@@QK READ %llu\n@@QK REACHED\n", qk_reads);
  fflush(stderr);
  _exit(86);
}
QK static void qk_assumed(int cond) {
  if (cond) return;
  fputs("\n@@QK ASSUMPTION FAILED\n", stderr);
  fflush(stderr);
  _exit(87);
}
QK_WEAK void __VERIFIER_assume(int cond) { qk_assumed(cond); }
QK_WEAK void __CPROVER_assume(int cond) { qk_assumed(cond); }
QK_WEAK void assume_abort_if_not(int cond) { qk_assumed(cond); }
QK static int qk_is_error(void *fn);
QK void __cyg_profile_func_enter(void *fn, void *site) {
  (void)site;
  if (qk_is_error(fn)) qk_reached();
}
QK void __cyg_profile_func_exit(void *fn, void *site) { (void)fn; (void)site; }
QK void __quokka_head(int line, int column) { fprintf(stderr, "\n@@QK H %d %d\n", line, column); }
QK void __quokka_val_s(const char *name, long long v) { fprintf(stderr, "@@QK V %s %lld\n", name, v); }
QK void __quokka_val_u(const char *name, unsigned long long v) {
  fprintf(stderr, "@@QK V %s %llu\n", name, v);
}
#define QK_INT(name, type) QK_WEAK type __VERIFIER_nondet_##name(void) { return (type)qk_next(); }
#define QK_FLT(name, type, bits) QK_WEAK type __VERIFIER_nondet_##name(void) { \
  bits b = (bits)qk_next(); type v; memcpy(&v, &b, sizeof v); return v; }
QK_INT(bool, _Bool) QK_INT(char, char) QK_INT(schar, signed char) QK_INT(uchar, unsigned char)
QK_INT(short, short) QK_INT(ushort, unsigned short) QK_INT(int, int) QK_INT(uint, unsigned int)
QK_INT(unsigned, unsigned int) QK_INT(long, long) QK_INT(ulong, unsigned long)
QK_INT(longlong, long long) QK_INT(ulonglong, unsigned long long) QK_INT(size_t, __SIZE_TYPE__)
QK_INT(u8, unsigned char) QK_INT(u16, unsigned short) QK_INT(u32, unsigned int)
QK_INT(loff_t, long long) QK_INT(sector_t, unsigned long)
QK_FLT(float, float, unsigned int) QK_FLT(double, double, unsigned long long)
QK_WEAK int unknown(void) { return (int)qk_next(); }
QK unsigned long long __quokka_uninit(void) { return qk_next(); }
"""

# Only `reach_error` is the error (property unreach-call); a `__VERIFIER_assert` the program uses
# without defining it does nothing (as the frontend reads it).
_REACH_ERROR_ONLY = r"""
QK_WEAK void reach_error(void) { qk_reached(); }
QK_WEAK void __VERIFIER_assert(int cond) { (void)cond; }
QK static int qk_is_error(void *fn) { return fn == (void *)&reach_error; }
"""
# Only `__VERIFIER_error` is the error (the older unreach-call property, `G ! call(__VERIFIER_error())`).
_VERIFIER_ERROR_ONLY = r"""
QK_WEAK void __VERIFIER_error(void) { qk_reached(); }
QK_WEAK void __VERIFIER_assert(int cond) { (void)cond; }
QK static int qk_is_error(void *fn) { return fn == (void *)&__VERIFIER_error; }
"""
# A failing assert() is an error too (property assert): the functions the frontend reads as errors.
_ASSERT_ERRORS = r"""
QK_WEAK void reach_error(void) { qk_reached(); }
QK_WEAK void __assert_fail(const char *a, const char *f, unsigned int l, const char *fn) {
  (void)a; (void)f; (void)l; (void)fn; qk_reached();
}
QK_WEAK void __assert_perror_fail(int e, const char *f, unsigned int l, const char *fn) {
  (void)e; (void)f; (void)l; (void)fn; qk_reached();
}
QK_WEAK void __assert(const char *a, const char *f, int l) { (void)a; (void)f; (void)l; qk_reached(); }
QK_WEAK void __VERIFIER_error(void) { qk_reached(); }
QK_WEAK void __VERIFIER_assert(int cond) { if (!cond) qk_reached(); }
QK static int qk_is_error(void *fn) {
  return fn == (void *)&reach_error || fn == (void *)&__assert_fail || fn == (void *)&__assert_perror_fail
      || fn == (void *)&__assert || fn == (void *)&__VERIFIER_error;
}
"""


# The error is a signed overflow (property no-overflow): the sanitizer stops the program with
# status 86 at the first one; calls are no errors, and an only declared reach_error does nothing.
_OVERFLOW_ERRORS = r"""
QK_WEAK void reach_error(void) {}
QK_WEAK void __VERIFIER_error(void) {}
QK_WEAK void __VERIFIER_assert(int cond) { (void)cond; }
QK static int qk_is_error(void *fn) { (void)fn; return 0; }
QK const char *__ubsan_default_options(void) { return "halt_on_error=1:exitcode=86:print_summary=0"; }
"""
_OVERFLOW_FLAGS = ("-fsanitize=signed-integer-overflow,shift-base", "-fno-sanitize-recover=all")
_SANITIZER_MARK = "runtime error: "
# A run that only counts when it has no undefined behaviour (`replay_sanitized`): gcc's sanitizers
# stop it at the first one (a heap or stack access out of bounds, a signed overflow, a bad shift, ...).
SANITIZERS = ("-fsanitize=address,undefined", "-fno-sanitize-recover=all")
# AddressSanitizer cannot start under a batch's address-space limit (RLIMIT_AS): its run lifts the
# soft limit to the hard one, which `processes.apply_limits` leaves in place, then becomes the program
LIFT_ADDRESS_LIMIT = (
    "import os, resource, sys; _, hard = resource.getrlimit(resource.RLIMIT_AS); "
    "resource.setrlimit(resource.RLIMIT_AS, (hard, hard)); os.execv(sys.argv[1], sys.argv[1:])"
)
_SANITIZER_REPORTS = (_SANITIZER_MARK, "AddressSanitizer", "LeakSanitizer")


def harness(property_name: str = ASSERT) -> str:
    """The harness C file for a program whose errors are those of `property_name`."""
    variants = {
        ASSERT: _ASSERT_ERRORS, NO_OVERFLOW: _OVERFLOW_ERRORS, UNREACH_VERIFIER_ERROR: _VERIFIER_ERROR_ONLY
    }
    return _HARNESS + variants.get(property_name, _REACH_ERROR_ONLY)


_PROTOTYPES = (
    "void __quokka_head(int, int); void __quokka_val_s(const char *, long long); "
    "void __quokka_val_u(const char *, unsigned long long);\n"
)
_UNINIT_PROTOTYPE = "unsigned long long __quokka_uninit(void);\n"
_UNINIT_CALL = " = __quokka_uninit()"
_BASE_FLAGS = ("-std=gnu11", "-O0", "-pipe", "-w", "-finstrument-functions", "-fno-builtin")
# Newer compilers reject what older C allowed; SV-COMP programs rely on it (implicit reach_error).
_PERMISSIVE = (
    "-Wno-error=implicit-function-declaration",
    "-Wno-error=implicit-int",
    "-Wno-error=int-conversion",
)
_ZERO_INIT = "-ftrivial-auto-var-init=zero"
_SSE_FLOATS = ("-msse2", "-mfpmath=sse")  # i386: IEEE float and double, not x87 extended precision


@dataclass(frozen=True)
class LoopProbe:
    """A loop to trace: the position of its keyword and the C variables to report (name, signed)."""

    line: int
    column: int
    variables: tuple[tuple[str, bool], ...]


@dataclass(frozen=True)
class InputDeclaration:
    """A scalar local declared without an initialiser, its name at `line`:`column`: the replayed
    copy initialises it from the next input (each time the declaration runs), as the interpreter
    gives such a local the next input under the nondet reading."""

    line: int
    column: int
    name: str


@dataclass(frozen=True)
class HeadHit:
    """One pass of the compiled program through a probed loop head."""

    line: int
    column: int
    values: Mapping[str, int]


@dataclass(frozen=True)
class ReplayResult:
    """`status`: "reached" | "not_reached" | "unavailable" | "error"; `heads` only with probes."""

    status: str
    detail: str
    heads: tuple[HeadHit, ...] = field(default=())
    inputs_read: int | None = None  # of a run that reached the error: how many inputs it asked for


def is_nondet_call(origin: str) -> bool:
    """Whether a `Havoc` of this origin is a call the harness answers (nondet functions, `unknown()`)."""
    return origin.startswith("__VERIFIER_nondet_") or origin == "unknown"


def replay_inputs(execution: Execution) -> tuple[int, ...] | str:
    """The values `execution` gave to nondet calls, in order, for `replay_with_compiler`; or why the
    compiled program cannot follow it (another `Havoc`, e.g. of an uninitialised local, took a value
    other than the 0 the compiled program has)."""
    inputs: list[int] = []
    for value, havoc in zip(execution.inputs_used, execution.havocs, strict=True):
        if is_nondet_call(havoc.origin):
            inputs.append(value)
        elif value != 0:
            return f"{havoc.target} ({havoc.origin}) is {value} at {havoc.coord}; compiled, it is 0"
    return tuple(inputs)


def find_compiler() -> str | None:
    """The path of gcc, or of cc, or None."""
    return shutil.which("gcc") or shutil.which("cc")


def gcc_available() -> bool:
    return find_compiler() is not None


# ----------------------------------------------------------------------------- data model

_TOKEN = re.compile(r"[A-Za-z_]\w*|\d[\w.]*")
_MODEL_WORDS = frozenset(
    {"sizeof", "size_t", "ssize_t", "ptrdiff_t", "intptr_t", "uintptr_t", "off_t",
     "time_t", "wchar_t", "wint_t", "_Alignof", "alignof", "__VERIFIER_nondet_long",
     "__VERIFIER_nondet_ulong", "__VERIFIER_nondet_size_t", "__VERIFIER_nondet_sector_t"}
)  # fmt: skip
_MODEL_PARTS = ("LONG", "SIZE", "PTR", "WORD", "LP64", "x86_64", "i386", "__amd64")
_LONG_SUFFIX = re.compile(r"\d\w*?(?<![lL])[lL][uU]?$|\d\w*?[uU][lL]$")
_SIGNED_DECIMAL = re.compile(r"([1-9]\d*)[lL]*$")
_LLONG_MAX = (1 << 63) - 1


def data_model_dependence(source: str) -> str | None:
    """Why the program's behaviour might differ between ILP32 and LP64, or None (a conservative scan)."""
    words = _TOKEN.findall(blank_comments(source, literals=True))
    for k, word in enumerate(words):
        neighbours = (words[k - 1] if k else "", words[k + 1] if k + 1 < len(words) else "")
        if word == "long" and "long" not in neighbours:
            return "uses `long`"
        if word in _MODEL_WORDS:
            return f"uses `{word}`"
        if word[0].isdigit() and _LONG_SUFFIX.match(word):
            return f"uses the long constant {word}"
        if _wide_decimal(word):
            return f"uses the constant {word} (gcc: __int128 on LP64, long long on ILP32)"
        if "LLONG" not in word and any(part in word for part in _MODEL_PARTS):
            return f"uses `{word}`"
    return None


def _wide_decimal(word: str) -> bool:
    """A decimal constant without `u` above LLONG_MAX, whose type gcc chooses per target."""
    m = _SIGNED_DECIMAL.match(word)
    return m is not None and int(m.group(1)) > _LLONG_MAX


# ----------------------------------------------------------------------------- instrumentation


def _skip_blanks(text: str, pos: int) -> int:
    while pos < len(text) and text[pos].isspace():
        pos += 1
    return pos


def _first_semicolon(text: str, pos: int) -> int:
    """The position of the first `;` at nesting depth 0 from `pos` (-1 if none)."""
    depth = 0
    for k in range(pos, len(text)):
        c = text[k]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == ";" and depth == 0:
            return k
    return -1


def _trace_call(probe: LoopProbe) -> str:
    calls = [f"__quokka_head({probe.line}, {probe.column})"]
    for name, signed in probe.variables:
        kind = "s" if signed else "u"
        calls.append(f'__quokka_val_{kind}("{name}", {name})')
    return ", ".join(calls)


def _loop_keyword(scan: str, offset: int) -> str | None:
    for keyword in ("while", "for", "do"):
        end = offset + len(keyword)
        if scan.startswith(keyword, offset) and not (
            scan[end : end + 1].isalnum() or scan[end : end + 1] == "_"
        ):
            return keyword
    return None


def _insertion(scan: str, offset: int, probe: LoopProbe) -> tuple[int, str] | str:
    """(position, text) to insert for the loop whose keyword starts at `offset`, or why not."""
    keyword, where = _loop_keyword(scan, offset), f"{probe.line}:{probe.column}"
    if keyword is None:
        return f"no loop keyword at {where}"
    pos = _skip_blanks(scan, offset + len(keyword))
    if scan[pos : pos + 1] != ("{" if keyword == "do" else "("):
        return f"cannot instrument the {keyword} loop at {where}"
    call = _trace_call(probe)
    if keyword == "while":
        return pos + 1, f"{call}, "
    if keyword == "do":
        return pos + 1, f" {call};"
    semi = _first_semicolon(scan, pos + 1)
    if semi < 0:
        return f"malformed for loop at {where}"
    empty = scan[_skip_blanks(scan, semi + 1)] == ";"
    return semi + 1, f" {call}, 1" if empty else f" {call},"


def _line_starts(text: str) -> list[int]:
    starts = [0]
    for line in text.split("\n"):
        starts.append(starts[-1] + len(line) + 1)
    return starts


def _offset(starts: list[int], line: int, column: int, what: str) -> int:
    if not 1 <= line < len(starts) or column < 1:
        raise ValueError(f"{what} position {line}:{column} is not in the file")
    return starts[line - 1] + column - 1


def _initialiser(scan: str, pos: int, decl: InputDeclaration) -> tuple[int, str]:
    """(position, text) that initialises `decl` from the next input; ValueError unless the text at
    `pos` is its name ending a declarator (followed by `;` or `,`)."""
    end = pos + len(decl.name)
    before = scan[pos - 1 : pos]
    follows = scan[_skip_blanks(scan, end) : _skip_blanks(scan, end) + 1]
    if scan[pos:end] != decl.name or before.isalnum() or before == "_" or follows not in (";", ","):
        raise ValueError(f"no declaration of {decl.name} without initialiser at {decl.line}:{decl.column}")
    return end, _UNINIT_CALL


def instrument(
    source: str, probes: Sequence[LoopProbe], file_name: str, initialise: Sequence[InputDeclaration] = ()
) -> str:
    """`source` with a trace call at each probed loop head and the declarations `initialise` names
    initialised from the inputs; raises ValueError where it cannot."""
    scan, starts = blank_comments(source, literals=True), _line_starts(source)
    edits: dict[int, str] = {}
    for probe in probes:
        found = _insertion(scan, _offset(starts, probe.line, probe.column, "loop"), probe)
        if isinstance(found, str):
            raise ValueError(found)
        edits[found[0]] = found[1]
    for decl in initialise:
        pos, text = _initialiser(scan, _offset(starts, decl.line, decl.column, "declaration"), decl)
        edits[pos] = text
    for pos, text in sorted(edits.items(), reverse=True):
        source = source[:pos] + text + source[pos:]
    quoted = file_name.replace("\\", "\\\\").replace('"', '\\"')
    prototypes = (_PROTOTYPES if probes else "") + (_UNINIT_PROTOTYPE if initialise else "")
    return f'{prototypes}#line 1 "{quoted}"\n{source}'


# ----------------------------------------------------------------------------- compile and run


@dataclass(frozen=True)
class CompiledProgram:
    """An executable built from a C program and the harness; `run` it with inputs."""

    binary: Path
    note: str = ""
    error: str = "reach_error()"  # what the error is, for the details
    mark: str = f"{_MARK} REACHED"  # what the program writes to standard error when it reaches it

    def run(self, inputs: Sequence[int], *, timeout_s: float = 10) -> ReplayResult:
        """Run once; inputs feed the `__VERIFIER_nondet_*` calls in order (then 0s)."""
        done = self.execute(inputs, timeout_s=timeout_s)
        if done is None:
            return ReplayResult("error", f"the program ran longer than {timeout_s} s{self.note}")
        heads = _parse_heads(done.stderr)
        if self.reached(done):
            reached = f"the program reached {self.error}{self._report(done.stderr)}{self.note}"
            return ReplayResult("reached", reached, heads, inputs_read(done.stderr))
        return ReplayResult("not_reached", f"{_describe_exit(done.returncode, self.error)}{self.note}", heads)

    def execute(
        self, inputs: Sequence[int], *, timeout_s: float, lift_address_limit: bool = False
    ) -> subprocess.CompletedProcess[str] | None:
        """The finished run on `inputs` (its exit status and standard error), None past `timeout_s`.
        `lift_address_limit`: the run's soft address-space limit raised to the hard one first."""
        text = " ".join(str(v % (1 << 64)) for v in inputs) + "\n"
        lift = (sys.executable, "-c", LIFT_ADDRESS_LIMIT) if lift_address_limit else ()
        try:
            return subprocess.run(
                [*lift, str(self.binary)], input=text, capture_output=True, encoding="utf-8",
                errors="replace",
                timeout=timeout_s, check=False, cwd=self.binary.parent,  # what it writes stays there
                env={**os.environ, PARENT_VARIABLE: str(os.getpid())},  # it dies with this process
            )  # fmt: skip
        except subprocess.TimeoutExpired:
            return None

    def reached(self, done: subprocess.CompletedProcess[str]) -> bool:
        """Whether the finished run `done` reached the error."""
        return done.returncode == REACHED_STATUS and self.mark in done.stderr


    def _report(self, stderr: str) -> str:
        """The sanitizer's message, when it is the error (` (file:line:col: message)`)."""
        if self.mark != _SANITIZER_MARK:
            return ""
        line = next(x for x in stderr.splitlines() if _SANITIZER_MARK in x)
        return f" ({line.strip()})"


def inputs_read(stderr: str) -> int | None:
    """How many inputs a run that reached the error had asked for (None: it did not say)."""
    found = re.search(rf"^{_MARK} READ (\d+)$", stderr, re.MULTILINE)
    return int(found.group(1)) if found else None


def _describe_exit(code: int, error: str) -> str:
    if code == ASSUMPTION_STATUS:
        return f"an assumption (__VERIFIER_assume) failed before {error}: the run is discarded"
    if code < 0:
        return f"the program was killed by signal {-code} without reaching {error}"
    return f"the program exited with status {code} without reaching {error}"


def _parse_heads(stderr: str) -> tuple[HeadHit, ...]:
    hits: list[HeadHit] = []
    values: dict[str, int] = {}
    for line in stderr.split("\n"):
        if not line.startswith(_MARK):
            continue
        parts = line.split()
        if parts[1] == "H":
            values = {}
            hits.append(HeadHit(int(parts[2]), int(parts[3]), values))
        elif parts[1] == "V" and hits:
            values[parts[2]] = int(parts[3])
    return tuple(hits)


def _m32_links(compiler: str, workdir: Path) -> bool:
    probe = workdir / "m32_probe.c"
    probe.write_text("int main(void) { return 0; }\n")
    linked = subprocess.run(
        [compiler, "-m32", str(probe), "-o", str(workdir / "m32_probe")],
        capture_output=True, timeout=_COMPILE_TIMEOUT_S, check=False,
    )  # fmt: skip
    return linked.returncode == 0


def _model_flags(compiler: str, data_model: str, source: str, workdir: Path) -> tuple[list[str], str] | str:
    """Flags that give the program `data_model`, and a note; or why that is not possible."""
    if data_model == "LP64":
        return [], ""
    if data_model != "ILP32":
        return f"unknown data model {data_model}"
    if _m32_links(compiler, workdir):
        return ["-m32", *_SSE_FLOATS], ""
    reason = data_model_dependence(source)
    if reason is not None:
        return f"ILP32 program, `{compiler} -m32` does not link here, and the program {reason}"
    return [], " (ILP32 program run as LP64: -m32 is unavailable and nothing in it depends on the data model)"


def compile_c(
    c_file: Path,
    data_model: str,
    workdir: Path,
    probes: Sequence[LoopProbe] = (),
    property_name: str = ASSERT,
    initialise: Sequence[InputDeclaration] = (),
    extra_flags: Sequence[str] = (),
) -> CompiledProgram | ReplayResult:
    """Build `c_file` with the harness in `workdir`; a `ReplayResult` says why it could not.
    The error is what it is under `property_name` (see the module docstring); the declarations
    `initialise` names take their values from the inputs; `extra_flags` go to the compiler last
    (e.g. sanitizers, another optimisation level)."""
    compiler = find_compiler()
    if compiler is None:
        return ReplayResult("unavailable", "no C compiler (gcc or cc) found")
    try:
        source = c_file.read_text(errors="replace")
        program = instrument(source, probes, str(c_file), initialise) if probes or initialise else source
    except (OSError, ValueError) as exc:
        return ReplayResult("error", f"cannot prepare {c_file.name}: {exc}")
    model = _model_flags(compiler, data_model, source, workdir)
    if isinstance(model, str):
        return ReplayResult("unavailable", model)
    sources = _write_sources(workdir, program, c_file.suffix, harness(property_name))
    flags = [*model[0], *(_OVERFLOW_FLAGS if property_name == NO_OVERFLOW else ()), *extra_flags]
    error = _build(compiler, [*flags, *sources])
    if error is not None:  # SV-COMP files stripped of their includes use NULL and malloc undeclared
        error = error if _build(compiler, ["-include", "stdlib.h", *flags, *sources]) else None
    if error is not None:
        return ReplayResult("error", f"{c_file.name} does not compile: {error}")
    if property_name == NO_OVERFLOW:
        return CompiledProgram(workdir / "program.bin", model[1], "a signed overflow", _SANITIZER_MARK)
    targets = {ASSERT: "reach_error() or a failing assertion", UNREACH_VERIFIER_ERROR: "__VERIFIER_error()"}
    target = targets.get(property_name, "reach_error()")
    return CompiledProgram(workdir / "program.bin", model[1], target)


def _write_sources(workdir: Path, program: str, suffix: str, harness_text: str) -> list[str]:
    """Write the program and the harness; the compiler arguments that build them."""
    program_file = workdir / f"program{suffix if suffix in ('.c', '.i') else '.c'}"
    program_file.write_text(program)
    (workdir / "harness.c").write_text(harness_text)
    return [str(program_file), str(workdir / "harness.c"), "-o", str(workdir / "program.bin")]


def _build(compiler: str, args: list[str]) -> str | None:
    """Compile and link; retry without the options an older compiler lacks. The error, or None."""
    last = ""
    for extra in ([_ZERO_INIT, *_PERMISSIVE], [*_PERMISSIVE], []):
        done = subprocess.run(
            [compiler, *_BASE_FLAGS, *extra, *args], capture_output=True, encoding="utf-8", errors="replace",
            timeout=_COMPILE_TIMEOUT_S, check=False,
        )  # fmt: skip
        if done.returncode == 0:
            return None
        last = done.stderr.strip()
        if "unrecognized command-line option" not in last and "unknown argument" not in last:
            break
    return "\n".join(last.splitlines()[:5])


def replay_with_compiler(
    c_file: Path,
    inputs: Sequence[int],
    data_model: str,
    *,
    timeout_s: float = 10,
    property_name: str = ASSERT,
    initialise: Sequence[InputDeclaration] = (),
) -> ReplayResult:
    """Compile the original program with a nondet harness, run it on `inputs`, report whether
    the error of `property_name` was reached (`reach_error()` called; under `assert` also a failed
    `assert()`). Inputs are the values of the `__VERIFIER_nondet_*` calls and of the declarations
    `initialise` names, in the order they run."""
    with tempfile.TemporaryDirectory(prefix="quokka-replay-") as tmp:
        built = compile_c(
            Path(c_file), data_model, Path(tmp), property_name=property_name, initialise=initialise
        )
        if isinstance(built, ReplayResult):
            return built
        return built.run(inputs, timeout_s=timeout_s)


def replay_sanitized(
    c_file: Path,
    inputs: Sequence[int],
    data_model: str,
    *,
    timeout_s: float,
    property_name: str = ASSERT,
    initialise: Sequence[InputDeclaration] = (),
) -> ReplayResult:
    """`replay_with_compiler` built with AddressSanitizer and UndefinedBehaviorSanitizer
    (`SANITIZERS`): "reached" only when the run reaches the error and no sanitizer reported
    anything before (with how many inputs it read); a report, a crash or a time-out is
    "not_reached" or "error". Not for `no-overflow`, whose error is a sanitizer's report."""
    if property_name == NO_OVERFLOW:
        return ReplayResult("unavailable", "under no-overflow a sanitizer's report is the error itself")
    with tempfile.TemporaryDirectory(prefix="quokka-sanitized-") as tmp:
        built = compile_c(
            Path(c_file), data_model, Path(tmp), property_name=property_name, initialise=initialise,
            extra_flags=SANITIZERS,
        )  # fmt: skip
        if isinstance(built, ReplayResult):
            return built
        done = built.execute(inputs, timeout_s=timeout_s, lift_address_limit=True)
        return _sanitized_outcome(built, done, timeout_s)


def _sanitized_outcome(
    built: CompiledProgram, done: subprocess.CompletedProcess[str] | None, timeout_s: float
) -> ReplayResult:
    if done is None:
        return ReplayResult("error", f"the program ran longer than {timeout_s} s{built.note}")
    report = next((x for x in done.stderr.splitlines() if any(m in x for m in _SANITIZER_REPORTS)), None)
    if report is not None:
        return ReplayResult("not_reached", f"a sanitizer reported: {report.strip()}{built.note}")
    if not built.reached(done):
        return ReplayResult("not_reached", f"{_describe_exit(done.returncode, built.error)}{built.note}")
    read = inputs_read(done.stderr)
    return ReplayResult("reached", f"the program reached {built.error}{built.note}", inputs_read=read)
