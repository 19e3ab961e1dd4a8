#!/usr/bin/env bash
# Set up (if needed) and judge the bundled example solutions on this machine: CUDA if present, else CPU.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh >&2
. .venv/bin/activate
exec kerneljudge examples "$@"
