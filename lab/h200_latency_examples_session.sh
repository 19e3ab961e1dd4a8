#!/usr/bin/env bash
# One device call (~6 minutes): issue 12's latency bars after the slim CUDA headers (an already-built
# solution judged in a `Judge` session and by a cold `kerneljudge eval`: scripts/latency_bench.py), then the
# bundled examples' verdicts against their expected ones. Lands in OUT/latency-examples/.
#
#     bash lab/h200_latency_examples_session.sh "$OUT"          # run from the repository root
set -u
OUT=${1:?usage: h200_latency_examples_session.sh OUT_DIR}
. lab/device_steps.sh
session_start "$OUT/latency-examples"
CACHE=/tmp/kj-latency-cache
step latency 240 python3 scripts/latency_bench.py --out "$W" --device cuda --repeats 5 --compare-cold-start \
  --cache-dir "$CACHE"
step examples 200 python3 scripts/gpu_report.py examples --out "$W" --cache "$CACHE"
cat "$W/steps.txt"; cat "$W"/latency*.md 2>/dev/null | tail -12; tail -30 "$W/examples.md" 2>/dev/null
