#!/usr/bin/env bash
# Set up (if needed), lint (ruff, configured in pyproject.toml) and run the whole test suite on this machine
# (CPU: GPU tests are skipped).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
. .venv/bin/activate
# The RL frameworks' extra (verifiers, openenv-core, trl: tests/test_integrations_*.py), for the tests only (setup.sh,
# which README command (1) runs, does not install it): a failure here (no index, a conflict on some image) costs only
# those tests, which skip without them. torch is held at the installed version (==X matches X+cuda): their
# dependencies must never pull a second torch.
if rl_missing=$(python scripts/missing_requirements.py rl) && [ -n "$rl_missing" ]; then
  held=$(python -c "import torch; print(torch.__version__.split('+')[0])")
  mapfile -t rl_wanted <<< "$rl_missing"     # the unmet requirements of pyproject.toml's [rl], one per line
  if ! python -m pip install -q "${rl_wanted[@]}" "torch==$held"; then
    echo "test: could not install the [rl] extra (verifiers, openenv-core, trl); the RL integration tests will skip" >&2
  fi
fi
export KERNELJUDGE_TEST_CACHE="${KERNELJUDGE_TEST_CACHE:-$PWD/.kj-cache/tests}"
ruff check src tests scripts lab
python -m pytest -q -rs "$@"
