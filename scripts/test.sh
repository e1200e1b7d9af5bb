#!/usr/bin/env bash
# The whole test suite: lint, type check, tests. Sets the environment up first when needed.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --no-run
. .venv/bin/activate
ruff check verifier invariants svcomp server tests
mypy
python -m pytest -q -p no:cacheprovider "$@"
