"""A stand-in for `quokka verify FILE --json ...` for the batch plumbing tests.

The program text steers it with `// SVFAKE key=value` directives:
  verdict=true|false|unknown   the answer (default true; TRUE comes with one invariant per loop)
  inv=EXPR                     the invariant text (default `x >= 0`), no spaces
  sleep=S                      sleep before answering
  spin=1                       burn CPU until killed
  oom=1                        allocate until MemoryError
  oom=thread                   die of MemoryError in a thread: exit code 0, no output
  exit=N                       exit with N and no output
  garbage=1                    print text that is not JSON
  child=1                      start a grandchild that sleeps (to see the process group die)
  badinput=1                   answer like bad input (exit 2, status error)
  failwith=ENGINE              answer unknown when run with `--engines ENGINE`
  slowwith=ENGINE              sleep 0.3 s more when run with `--engines ENGINE`
With SVFAKE_LOG set to a folder, each run writes `<pid>.json`: argv, start and end time.
`--version` prints `quokka 9.9.9`.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path


def _directives(text: str) -> dict[str, str]:
    opts: dict[str, str] = {}
    for line in text.splitlines():
        if "SVFAKE" in line:
            opts.update(re.findall(r"(\w+)=(\S+)", line.split("SVFAKE", 1)[1]))
    return opts


def _loops(text: str) -> list[tuple[int, int]]:
    out = []
    for number, line in enumerate(text.splitlines(), start=1):
        match = re.search(r"\b(while|for)\b", line)
        if match and not line.lstrip().startswith("//"):
            out.append((number, match.start() + 1))
    return out


def _first(text: str, pattern: str) -> tuple[int, int]:
    for number, line in enumerate(text.splitlines(), start=1):
        match = re.search(pattern, line)
        if match and not line.lstrip().startswith("//"):
            return number, match.start() + 1
    return 0, 0


def _answer(path: Path, text: str, opts: dict[str, str], invariant_args: list[str]) -> dict[str, object]:
    verdict = opts.get("verdict", "true")
    data: dict[str, object] = {
        "verdict": verdict, "reason": f"fake {verdict}", "file": str(path), "time_s": 0.01,
        "invariants": [], "counterexample": None,
        "engines": [{"engine": "houdini", "status": "safe", "time_s": 0.01, "reason": "fake"}],
        "candidates": [
            {"loop": "main.1", "expr": "x >= 0", "proposer": "dynamic", "status": "proven", "reason": ""},
            {"loop": "main.1", "expr": "x < 0", "proposer": "dynamic", "status": "rejected", "reason": "cex"},
            {"loop": "main.1", "expr": "y >= 0", "proposer": "llm", "status": "unused", "reason": ""},
        ],
        "overflow_sites": [], "decided_by": "houdini", "extra": {"invariant_args": invariant_args},
    }
    if verdict == "true":
        expr = opts.get("inv", "x >= 0")
        data["invariants"] = [
            {"loop": f"main.{i}", "line": line, "column": col, "expr": expr, "proved_by": "houdini",
             "source": "dynamic"}
            for i, (line, col) in enumerate(_loops(text), start=1)
        ]
    if verdict == "false":
        nondet_line, _ = _first(text, r"__VERIFIER_nondet_int\s*\(")
        error_line, error_col = _first(text, r"reach_error\s*\(\s*\)\s*;")
        data["counterexample"] = {
            "inputs": [{"origin": "__VERIFIER_nondet_int", "line": nondet_line, "value": -3}]
            if nondet_line else [],
            "error_line": error_line, "error_column": error_col, "path_lines": [error_line],
            "loop_heads": [["main.1", 0, [["x", -3]]]], "confirmed_by": ["interpreter"],
        }
    return data


def _hog() -> None:
    hog = []
    while True:
        hog.append(bytearray(50 * 1024 * 1024))


def _log(start: float) -> None:
    folder = os.environ.get("SVFAKE_LOG")
    if folder:
        record = {"argv": sys.argv, "start": start, "end": time.time()}
        (Path(folder) / f"{os.getpid()}.json").write_text(json.dumps(record))


def main() -> int:
    if sys.argv[1:] == ["--version"]:
        print("quokka 9.9.9")
        return 0
    start = time.time()
    path = Path(sys.argv[1])
    text = path.read_text()
    opts = _directives(text)
    argv = sys.argv[2:]
    invariant_args = [argv[i + 1] for i, a in enumerate(argv[:-1]) if a == "--invariant"]
    if opts.get("child"):
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    engines = argv[argv.index("--engines") + 1] if "--engines" in argv[:-1] else ""
    time.sleep(float(opts.get("sleep", "0")) + (0.3 if engines and opts.get("slowwith") == engines else 0))
    if engines and opts.get("failwith") == engines:
        opts["verdict"] = "unknown"
    if opts.get("spin"):
        while True:
            pass
    if opts.get("oom") == "thread":
        worker = threading.Thread(target=_hog)
        worker.start()
        worker.join()
        return 0
    if opts.get("oom"):
        _hog()
    if "exit" in opts:
        return int(opts["exit"])
    if opts.get("garbage"):
        print("this is not JSON")
        return 0
    if opts.get("badinput"):
        bad = {"verdict": "unknown", "status": "error", "reason": f"{path}:1:1: bad", "file": str(path),
               "line": 1, "column": 1, "kind": "bad input", "message": "bad"}
        print(json.dumps(bad))
        return 2
    data = _answer(path, text, opts, invariant_args)
    print(json.dumps(data))
    _log(start)
    return 1 if data["verdict"] == "unknown" else 0


if __name__ == "__main__":
    sys.exit(main())
