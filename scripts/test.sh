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
