#!/usr/bin/env bash
# Set up (if needed), lint (ruff, configured in pyproject.toml) and run the whole test suite on this machine
# (CPU: GPU tests are skipped).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
. .venv/bin/activate
export KERNELJUDGE_TEST_CACHE="${KERNELJUDGE_TEST_CACHE:-$PWD/.kj-cache/tests}"
ruff check src tests scripts lab
python -m pytest -q -rs "$@"
