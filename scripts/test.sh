#!/usr/bin/env bash
# The whole test suite: lint, type check, tests. Sets the environment up first when needed.
# Tests marked `slow` (pytest -m slow; e.g. the 500-program BMC fuzz sweep) are left out:
# QUOKKA_SLOW=1 bash scripts/test.sh runs them too, and a -m passed here (-m slow) replaces the default.
# The VS Code real-editor test (code-server driven by headless Chromium) runs too: its tools are
# installed first when missing (Debian's chromium, as root; Node 24 and code-server from npm, ~4.5 min
# on 2 cores, once, into ~/.cache/quokka-e2e). QUOKKA_E2E=0 leaves it out.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --no-run
. .venv/bin/activate
ruff check verifier invariants svcomp server tests
mypy
if [[ "${QUOKKA_E2E:-1}" != 0 ]]; then
    SECONDS=0
    bash editors/vscode/e2e/run.sh --install || {
        echo "test.sh: the real-editor test's tools could not be installed (QUOKKA_E2E=0 leaves that test out)" >&2
        exit 1
    }
    echo "test.sh: the real-editor test's tools are installed (${SECONDS} s)"
    export QUOKKA_E2E=1  # the test runs, or fails: it does not skip
fi
markers=(-m "not slow")
if [[ "${QUOKKA_SLOW:-0}" == 1 ]]; then
    markers=()
fi
python -m pytest -q -p no:cacheprovider ${markers[@]+"${markers[@]}"} "$@"
# A short torture campaign (QUOKKA_TORTURE_MINUTES=0 skips it): 0 wrong verdicts, crashes or hangs.
minutes="${QUOKKA_TORTURE_MINUTES:-5}"
if [[ "$minutes" != 0 ]]; then
    dev=../shared/benchmarks/quokka-dev/tasks.csv
    quokka torture --minutes "$minutes" --timeout 8 --quiet --out torture-findings $([[ -f $dev ]] && echo "$dev")
fi
