"""A stand-in for `quokka verify --json` whose behaviour the program text sets, for plumbing tests.

Directives in the text: `// FAKE sleep=S` (sleep before answering), `// FAKE child=1` (start a
grandchild that sleeps, to test that the whole process group dies), `// FAKE verdict=false|unknown`,
`// FAKE exit=N` (exit without output), `// FAKE garbage=1` (print no JSON). With FAKE_VERIFY_LOG set
to a folder, each run writes `<pid>.start` (its argv and children) and `<pid>.done` when it answers.
"""

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from quokka.verifier.infra.processes import die_with_supervisor


def main() -> int:
    die_with_supervisor()  # as the real one does
    path = Path(sys.argv[1])
    text = path.read_text()
    lines = re.findall(r"//\s*FAKE\s+(.*)", text)
    opts = dict(re.findall(r"(\w+)=(\S+)", " ".join(lines)))
    log = os.environ.get("FAKE_VERIFY_LOG")
    children = []
    if opts.get("child"):
        children.append(subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"]).pid)
    if log:
        record = {"argv": sys.argv, "children": children, "text": text}
        (Path(log) / f"{os.getpid()}.start").write_text(json.dumps(record))
    time.sleep(float(opts.get("sleep", "0")))
    if "exit" in opts:
        return int(opts["exit"])
    if opts.get("garbage"):
        print("this is not JSON")
        return 1
    print(json.dumps(result(str(path), text, opts.get("verdict", "true"))))
    if log:
        (Path(log) / f"{os.getpid()}.done").write_text("")
    return 0 if opts.get("verdict", "true") != "unknown" else 1


def result(file: str, text: str, verdict: str) -> dict:
    invariants = []
    for index, line in enumerate(text.split("\n"), start=1):
        match = re.search(r"\b(while|for)\b", line)
        if match and "//" not in line[: match.start()]:
            invariants.append({"loop": f"L{index}", "line": index, "column": match.start() + 1,
                               "expr": f"fake_{index} >= 0", "proved_by": "houdini", "source": "dynamic"})
    return {"verdict": verdict, "reason": "fake", "file": file, "time_s": 0.01,
            "invariants": invariants if verdict == "true" else [], "counterexample": None, "engines": [],
            "candidates": [], "overflow_sites": [], "decided_by": "houdini", "extra": {}}


if __name__ == "__main__":
    sys.exit(main())
