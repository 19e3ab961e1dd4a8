#!/usr/bin/env bash
# One device call for the speed and service issues on an H200: the latency of an already-built solution in a
# Judge session and a cold eval, with and without the warm template (scripts/latency_bench.py); the service
# under concurrent load from the reward function (scripts/service_bench.py); the level-1 numerics calibration
# (after a change to the bounds). Each step has its own time limit; everything lands in OUT/service/.
#
#     bash lab/h200_service_session.sh "$OUT"          # ~9 minutes; run from the repository root
set -u
OUT=${1:?usage: h200_service_session.sh OUT_DIR}
. lab/device_steps.sh
session_start "$OUT/service"
CACHE=/tmp/kj-service-cache
step template 60 python3 -c "
import json, os, sys
from kerneljudge.judging import environment, warm_start, boxing
env = boxing.start_env(environment.child_env('cuda', 1, '/tmp/kj-t'))
t = warm_start.Template(env)
print(t.usable(), t.error, json.dumps(t._ready))"
step latency 200 python3 scripts/latency_bench.py --out "$W" --device cuda --repeats 5 --compare-cold-start \
  --cache-dir "$CACHE"
step service 220 python3 scripts/service_bench.py --out "$W/bench" --device cuda
step calibration 110 python3 scripts/calibrate_numerics.py --device cuda --preset default --level 1 --jobs 8 \
  --timeout 90 --deadline-min 1.6 --out "$W/h200-numerics-calibration-level1.md"
cat "$W/steps.txt"
