#!/usr/bin/env bash
# Create .venv and install kerneljudge (editable) with the test tools.
#
# - The interpreter ($PYTHON, else python3) already imports a working torch (a stock PyTorch GPU image): .venv
#   is made with --system-site-packages, so that torch is the one used and no second torch is downloaded.
# - It does not: torch==2.13.0 is installed explicitly (an unpinned torch would download a multi-GB CUDA build).
# - Every requirement already met (scripts/missing_requirements.py): kerneljudge alone is installed, with
#   --no-deps, and with --no-build-isolation where setuptools can build it, so no package index is needed.
#   Where pip cannot build it without the index, scripts/link_source.py links src/ in as an editable install would.
# - Some missing and the index cannot supply them: kerneljudge is still installed if its own dependencies
#   (torch, numpy, tqdm) are met, and the missing test tools are named on stderr.
# An existing .venv is kept as it is, and so is a kerneljudge it already imports from this checkout.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
EXTRAS=(test triton)

say() { echo "setup: $*" >&2; }

working_torch() {  # "$1" imports torch and computes with it
  "$1" -c "import torch; assert torch.ones(2).sum().item() == 2" >/dev/null 2>&1
}

if [ ! -x .venv/bin/python ]; then
  if working_torch "$PY"; then
    about=$("$PY" -c "import sys, torch; print(f'{sys.executable}: torch {torch.__version__}, CUDA {torch.version.cuda}')")
    say "$about already; .venv is made with --system-site-packages and uses that torch (none is installed)"
    "$PY" -m venv --system-site-packages .venv
  else
    "$PY" -m venv .venv
  fi
fi
. .venv/bin/activate

if ! working_torch python; then
  python -m pip install -q --upgrade pip >/dev/null 2>&1 || true
  python -m pip install -q "torch==2.13.0"
fi

# setuptools that can make an editable install without an isolated build (which fetches setuptools itself)
can_build_here() {
  python -c "import setuptools, sys; sys.exit(int(setuptools.__version__.split('.')[0]) < 64)" >/dev/null 2>&1
}

install_no_deps() {  # kerneljudge alone: nothing for pip to fetch when the build needs no isolation
  if can_build_here && python -m pip install -q --no-deps --no-build-isolation -e . 2>/dev/null; then
    return 0
  fi
  # an isolated build fetches setuptools from the index
  if python -m pip install -q --no-deps -e . 2>/dev/null; then
    return 0
  fi
  # no index, and a setuptools that cannot build an editable wheel here (before 64 it has no editable builds;
  # before 70.1 it needs the `wheel` package, which a venv does not get): link src/ in as pip would have
  say "pip could not build kerneljudge without a package index; linking src/ into .venv instead (scripts/link_source.py)"
  python scripts/link_source.py
}

installed_here() {  # kerneljudge imports from this checkout's src/ (an earlier run of this script)
  python -c "import kerneljudge, os, sys
sys.exit(os.path.realpath(kerneljudge.__file__) != os.path.realpath('src/kerneljudge/__init__.py'))" >/dev/null 2>&1
}

if missing=$(python scripts/missing_requirements.py "${EXTRAS[@]}") && [ -z "$missing" ]; then
  if ! installed_here; then
    say "every requirement is met already: installing kerneljudge alone (--no-deps)"
    install_no_deps
  fi
else
  python -m pip install -q --upgrade pip >/dev/null 2>&1 || true
  extras=$(IFS=,; echo "${EXTRAS[*]}")
  if ! python -m pip install -q -e ".[$extras]"; then
    base_missing=$(python scripts/missing_requirements.py) || base_missing="(unknown)"
    if [ -n "$base_missing" ]; then
      say "could not install kerneljudge's own requirements: $(echo "$base_missing" | tr '\n' ' ')"
      exit 1
    fi
    say "could not install the [$extras] extras (no package index?); kerneljudge is installed without them." \
        "Missing: $(echo "$missing" | tr '\n' ' ')(scripts/test.sh needs them; judging does not)"
    installed_here || install_no_deps
  fi
fi
python -c "import torch, kerneljudge; print('kerneljudge', kerneljudge.__version__, 'with torch', torch.__version__)"
