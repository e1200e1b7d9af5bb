#!/usr/bin/env bash
# The whole test suite: lint, type check, tests. Sets the environment up first when needed.
# Tests marked `slow` (pytest -m slow; e.g. the 500-program BMC fuzz sweep) are left out:
# QUOKKA_SLOW=1 bash scripts/test.sh runs them too, and a -m passed here (-m slow) replaces the default.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --no-run
. .venv/bin/activate
ruff check verifier invariants svcomp server tests
mypy
markers=(-m "not slow")
if [[ "${QUOKKA_SLOW:-0}" == 1 ]]; then
    markers=()
fi
python -m pytest -q -p no:cacheprovider ${markers[@]+"${markers[@]}"} "$@"
# A short torture campaign (QUOKKA_TORTURE_MINUTES=0 skips it): 0 wrong verdicts, crashes or hangs.
minutes="${QUOKKA_TORTURE_MINUTES:-3}"
if [[ "$minutes" != 0 ]]; then
    dev=../shared/benchmarks/quokka-dev/tasks.csv
    quokka torture --minutes "$minutes" --timeout 8 --quiet --out torture-findings $([[ -f $dev ]] && echo "$dev")
fi
