#!/usr/bin/env bash
# Two device calls for issue 24, the second right after the first (the machine stays warm 30 s):
#   start  the verdicts that must not change (the GPU fixtures, the bundled examples, the model-written CUDA
#          replies: ~5 minutes), then upstream's level 1-3 identity copies (scripts/upstream_sweep.py) started in
#          their own process session so they outlive the call, watched until the call's time is nearly up
#   finish wait for the sweep to end, then copy its report into OUT
# Lands in OUT/sweep/. Carry upstream/ (scripts/fetch_upstream.sh). Ends only the processes it started.
#
#     bash lab/h200_sweep_session.sh start "$OUT"  &&  bash lab/h200_sweep_session.sh finish "$OUT"
set -u
MODE=${1:?usage: h200_sweep_session.sh start|finish OUT_DIR}
OUT=${2:?usage: h200_sweep_session.sh start|finish OUT_DIR}
. lab/device_steps.sh
SWEEP=/tmp/kj-sweep          # outside OUT, which each call empties
report() {
  mkdir -p "$W/sweep"
  cp "$SWEEP"/*.md "$SWEEP"/*.json "$SWEEP"/sweep.log "$W/sweep/" 2>/dev/null
  gzip -c "$SWEEP/results.jsonl" > "$W/sweep/results.jsonl.gz" 2>/dev/null
  tail -5 "$SWEEP/sweep.log" 2>/dev/null; head -40 "$SWEEP"/report.md 2>/dev/null
}
if [ "$MODE" = start ]; then
  session_start "$OUT/sweep-start"
  CACHE=/tmp/kj-checks-cache
  step fixtures 230 python3 scripts/gpu_report.py fixtures --out "$W" --cache "$CACHE"
  step examples 120 python3 scripts/gpu_report.py examples --out "$W" --cache "$CACHE"
  step bench_llm 150 python3 lab/gpu_bench_llm.py --out "$W/bench-llm"
  rm -rf "$SWEEP"; mkdir -p "$SWEEP"
  date -u +%FT%TZ >"$SWEEP/started.txt"
  setsid python3 scripts/upstream_sweep.py --out "$SWEEP" --device cuda --cache-dir /tmp/kj-sweep-cache \
    >"$SWEEP/sweep.log" 2>&1 < /dev/null &
  echo $! >"$SWEEP/pid"
  while [ $((SECONDS)) -lt 560 ] && kill -0 "$(cat "$SWEEP/pid")" 2>/dev/null; do sleep 5; done
  cat "$W/steps.txt"; head -14 "$W/fixtures.md" 2>/dev/null; tail -14 "$W/examples.md" 2>/dev/null
  report
else
  session_start "$OUT/sweep-finish"
  while [ $((SECONDS)) -lt 570 ] && kill -0 "$(cat "$SWEEP/pid")" 2>/dev/null; do sleep 5; done
  kill -0 "$(cat "$SWEEP/pid")" 2>/dev/null && echo "the sweep is still running" || echo "the sweep ended"
  report
fi
