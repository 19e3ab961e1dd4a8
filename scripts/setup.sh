#!/usr/bin/env bash
# Create .venv and install kerneljudge with the test tools. CPU machines get torch==2.13.0 explicitly
# (an unpinned torch would download a multi-GB CUDA build); a machine with a working torch keeps it.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
. .venv/bin/activate
python -m pip install -q --upgrade pip >/dev/null 2>&1 || true
if ! python -c "import torch" >/dev/null 2>&1; then
  python -m pip install -q "torch==2.13.0"
fi
python -m pip install -q -e ".[test,triton]"
python -c "import torch, kerneljudge; print('kerneljudge', kerneljudge.__version__, 'with torch', torch.__version__)"
