"""Run the system C preprocessor with Quokka's own libc headers and GNU extensions neutralised.

The program text goes to cpp on stdin behind a `#line 1 "<file>"` marker, so the line markers
in cpp's output (which pycparser follows) name the user's file, never a temporary one.
"""

from __future__ import annotations

import math
import re
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from ..errors import Coord, InputError, OutOfTime, ToolMissing, UnsupportedFeature

INCLUDE_DIR = Path(__file__).resolve().parent / "include"
CPP_TIMEOUT_S = 30.0

# GNU spellings pycparser does not know, mapped to standard C (or to nothing).
GNU_DEFINES = (
    "__attribute__(x)=",
    "__attribute(x)=",
    "__extension__=",
    "__restrict=",
    "__restrict__=",
    "__inline=inline",
    "__inline__=inline",
    "__asm__(x)=",
    "__asm(x)=",
    "__const=const",
    "__const__=const",
    "__signed__=signed",
    "__signed=signed",
    "__volatile__=volatile",
    "__volatile=volatile",
    "__thread=",
    "__builtin_va_list=int",
    "__builtin_expect(e,c)=(e)",
    "_Noreturn=",
    "__noreturn__=",
    # gcc's _FloatN types as the standard types they are on x86 (the wider ones are unsupported
    # as `long double` where a program uses them: only its glibc headers mention them)
    "_Float128=long double",
    "_Float64=double",
    "_Float32=float",
    "_Float64x=long double",
    "_Float32x=double",
    "__float128=long double",
)

# gcc's predefined type macros (cpp runs with -undef), per data model: x86-64 and i386 Linux.
BUILTIN_TYPES: dict[str, dict[str, str]] = {
    "LP64": {"__SIZE_TYPE__": "unsigned long", "__PTRDIFF_TYPE__": "long", "__WCHAR_TYPE__": "int"},
    "ILP32": {"__SIZE_TYPE__": "unsigned int", "__PTRDIFF_TYPE__": "int", "__WCHAR_TYPE__": "long"},
}
# The standard typedef names a preprocessed file may use without declaring them (its headers were
# left out): each stands for the type of gcc's macro.
STANDARD_TYPEDEFS = {"size_t": "__SIZE_TYPE__", "ptrdiff_t": "__PTRDIFF_TYPE__", "wchar_t": "__WCHAR_TYPE__"}
BUILTIN_FILE = "<built-in>"

_CPP_ERROR = re.compile(r"^(.*?):(\d+):(\d+): (?:fatal )?error: (.*)$", re.MULTILINE)
_MISSING_HEADER = re.compile(
    r"([^\s:]+): No such file or directory|no include path in which to search for (\S+)"
)
_QUOTED_INCLUDE = re.compile(r'\s*#\s*include\s*"')


@dataclass(frozen=True)
class Preprocessed:
    """cpp's output (with line markers) and what is needed to map its coordinates back."""

    text: str
    filename: str
    source: str
    marker_name: str


def find_cpp() -> list[str]:
    """The command that runs the C preprocessor on stdin: `cpp`, else `gcc -E`, else `cc -E`."""
    for name, args in (("cpp", []), ("gcc", ["-E"]), ("cc", ["-E"])):
        path = shutil.which(name)
        if path:
            return [path, *args]
    raise ToolMissing("no C preprocessor found: install cpp or gcc (e.g. `apt-get install cpp`)")


def marker_name(filename: str) -> str:
    """`filename` as it appears between the quotes of a line marker."""
    return filename.replace("\\", "\\\\").replace('"', '\\"')


def cpp_command(data_model: str, directory: Path | None) -> list[str]:
    cmd = [*find_cpp(), "-x", "c", "-nostdinc", "-undef", "-I", str(INCLUDE_DIR)]
    if directory is not None:
        cmd += ["-iquote", str(directory)]
    cmd += ["-D__QUOKKA__", f"-D__QUOKKA_{data_model}__"]
    cmd += [f"-D{d}" for d in GNU_DEFINES]
    cmd += [f"-D{name}={ty}" for name, ty in BUILTIN_TYPES[data_model].items()]
    return [*cmd, "-"]


def preprocess(
    source: str, filename: str, data_model: str, directory: Path | None = None, deadline: float = math.inf
) -> Preprocessed:
    """Preprocess `source` (the text of `filename`); raise a located InputError on cpp errors, and
    OutOfTime("preprocessing") when cpp is still running at `deadline` (`time.monotonic()`)."""
    name = marker_name(filename)
    timeout = min(CPP_TIMEOUT_S, max(0.0, deadline - time.monotonic()))
    stdin = f'#line 1 "{name}"\n{source}'
    if not source.endswith("\n"):
        stdin += "\n"
    try:
        done = subprocess.run(
            cpp_command(data_model, directory),
            input=stdin,
            capture_output=True,
            encoding="utf-8",
            errors="replace",  # cpp may cut a multi-byte character in what it quotes of the source
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        if timeout < CPP_TIMEOUT_S:
            raise OutOfTime("preprocessing") from None
        raise InputError(None, f"{filename}: the C preprocessor took over {CPP_TIMEOUT_S:.0f} s") from None
    except OSError as exc:
        raise ToolMissing(f"cannot run the C preprocessor: {exc}") from None
    if done.returncode != 0:
        raise _cpp_error(done.stderr, filename, name, source)
    return Preprocessed(done.stdout, filename, source, name)


def standard_typedefs(text: str, data_model: str) -> str:
    """Typedefs (under a `<built-in>` line marker) for the standard typedef names that cpp's output
    `text` uses but declares in no typedef of its own; '' when there are none."""
    names = [
        name
        for name in STANDARD_TYPEDEFS
        if re.search(rf"\b{name}\b", text) and not re.search(rf"\btypedef\b[^;]*\b{name}\s*[;,]", text)
    ]
    if not names:
        return ""
    types = BUILTIN_TYPES[data_model]
    lines = "".join(f"typedef {types[STANDARD_TYPEDEFS[n]]} {n};\n" for n in names)
    return f'# 1 "{BUILTIN_FILE}"\n{lines}'


def _cpp_error(stderr: str, filename: str, name: str, source: str) -> InputError | UnsupportedFeature:
    m = _CPP_ERROR.search(stderr)
    if m is None:
        first = stderr.strip().splitlines()[:1]
        return InputError(None, f"{filename}: preprocessor failed: {first[0] if first else 'no message'}")
    in_source = m.group(1) in (name, "<stdin>")
    coord = Coord(filename if in_source else m.group(1), int(m.group(2)), int(m.group(3)))
    message = m.group(4)
    missing = _MISSING_HEADER.search(message)
    if missing:
        line = _line_of(source if in_source else None, coord)
        return _missing_header(coord, missing.group(1) or missing.group(2), line)
    return InputError(coord, f"preprocessor: {message}")


def _missing_header(coord: Coord, header: str, line: str) -> InputError | UnsupportedFeature:
    """`#include "h"` names the program's own file: its absence is bad input. `#include <h>` names
    a library header that Quokka's libc subset lacks: the program is valid C, but unsupported."""
    if _QUOTED_INCLUDE.match(line):
        return InputError(coord, f'#include "{header}": file not found (looked beside the program '
                          "and among Quokka's headers)")
    return UnsupportedFeature(coord, f"#include <{header}>", "Quokka ships no such header")


def _line_of(source: str | None, coord: Coord) -> str:
    """Line `coord.line` of `source`, or of the file `coord` names (an included header); '' if none."""
    if source is None:
        try:
            source = Path(coord.file).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
    lines = source.split("\n")  # as cpp counts lines
    return lines[coord.line - 1] if 0 < coord.line <= len(lines) else ""
