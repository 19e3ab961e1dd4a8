#!/usr/bin/env bash
# Two device calls, the second right after the first (the machine stays warm 30 s), for issues 24 and 26 in one
# session's device time:
#   start  install the carried wheels (helion, the CuTe DSL: lab/install_carried.sh); every GPU-only fixture,
#          the five new backends' among them, against its label under strict, and the new backends'
#          library-fallback fixtures under lenient; then upstream's level 1-3 identity copies
#          (scripts/upstream_sweep.py) started in their own process session, watched until the call's time is
#          nearly up
#   finish wait for the sweep to end and copy its report; with time left, the new backends' bundled examples
# Lands in OUT/scale-backends-start.tgz and OUT/scale-backends-finish.tgz (a call brings back at most 8 files). Carry upstream/ (scripts/fetch_upstream.sh)
# and carry/ (CUTLASS_DSL_VERSION=4.3.5 PART_MIB=60 bash lab/carry_wheels.sh: one part).
#
#     bash lab/h200_scale_backends_session.sh start "$OUT"  &&  bash lab/h200_scale_backends_session.sh finish "$OUT"
set -u
MODE=${1:?usage: h200_scale_backends_session.sh start|finish OUT_DIR}
OUT=${2:?usage: h200_scale_backends_session.sh start|finish OUT_DIR}
. lab/device_steps.sh
SWEEP=/tmp/kj-sweep          # outside OUT, which each call empties
CACHE=/tmp/kj-checks-cache
NEW=(--match 'gpu_cupy_*' --match 'gpu_cuda_core_*' --match 'gpu_numba_*' --match 'gpu_helion_*' --match 'gpu_cute_*')
report() {
  mkdir -p "$W/sweep"
  cp "$SWEEP"/*.md "$SWEEP"/*.json "$W/sweep/" 2>/dev/null
  gzip -c "$SWEEP/results.jsonl" >"$W/sweep/results.jsonl.gz" 2>/dev/null
  gzip -c "$SWEEP/sweep.log" >"$W/sweep/sweep.log.gz" 2>/dev/null
  gzip -c "$SWEEP/gpu_samples.csv" >"$W/sweep/gpu_samples.csv.gz" 2>/dev/null
  tail -3 "$SWEEP/sweep.log" 2>/dev/null; head -40 "$SWEEP"/report.md 2>/dev/null
}
if [ "$MODE" = start ]; then
  session_start /tmp/kj-scale-backends-start
  step carried 90 bash lab/install_carried.sh
  step fixtures 260 python3 scripts/gpu_report.py fixtures --match 'gpu_*' --policy strict --out "$W" --cache "$CACHE"
  step lenient 60 python3 scripts/gpu_report.py fixtures --match 'gpu_*_hack_decoy_*' --policy lenient \
    --out "$W/lenient" --cache "$CACHE"
  rm -rf "$SWEEP"; mkdir -p "$SWEEP"
  date -u +%FT%TZ >"$SWEEP/started.txt"
  setsid python3 scripts/upstream_sweep.py --out "$SWEEP" --device cuda --cache-dir /tmp/kj-sweep-cache \
    >"$SWEEP/sweep.log" 2>&1 </dev/null &
  echo $! >"$SWEEP/pid"
  while [ $((SECONDS)) -lt 570 ] && kill -0 "$(cat "$SWEEP/pid")" 2>/dev/null; do sleep 5; done
  cat "$W/steps.txt"; tail -4 "$W/carried.log"
  sed -n '/got their labelled verdict/,$p' "$W/fixtures.md" 2>/dev/null | grep -v "| yes |" | head -40
  sed -n '/got their labelled verdict/,$p' "$W/lenient/fixtures.md" 2>/dev/null | head -12
  tail -3 "$SWEEP/sweep.log"
  tar -czf "$OUT/scale-backends-start.tgz" -C "$W" .
else
  session_start /tmp/kj-scale-backends-finish
  while [ $((SECONDS)) -lt 480 ] && kill -0 "$(cat "$SWEEP/pid")" 2>/dev/null; do sleep 3; done
  kill -0 "$(cat "$SWEEP/pid")" 2>/dev/null && echo "the sweep is still running" || echo "the sweep ended"
  if ! kill -0 "$(cat "$SWEEP/pid")" 2>/dev/null && [ $((SECONDS)) -lt 450 ]; then
    EX=src/kerneljudge/data/examples
    STAGED=/tmp/kj-new-examples
    rm -rf "$STAGED"; mkdir -p "$STAGED"
    for backend in cupy cuda_core numba helion cute; do cp "$EX"/solutions/*__"$backend".py "$STAGED"/; done
    step examples $((560 - SECONDS)) python3 -m kerneljudge run --problems "$EX/problems" --solutions "$STAGED" \
      --out "$W/examples-strict.jsonl" --device cuda --policy strict --cache-dir "$CACHE"
  fi
  report
  tail -12 "$W/examples.log" 2>/dev/null
  tar -czf "$OUT/scale-backends-finish.tgz" -C "$W" .
fi
