#!/usr/bin/env bash
# Set up (if needed) and run the whole test suite on this machine (CPU: GPU tests are skipped).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
. .venv/bin/activate
export KERNELJUDGE_TEST_CACHE="${KERNELJUDGE_TEST_CACHE:-$PWD/.kj-cache/tests}"
python -m pytest -q -rs "$@"
