#!/usr/bin/env bash
# Device calls for issues 31-33 (memory, fairness, noise), on whatever single GPU the call gets:
#   hard    the CUDA IPC round trip and the GPU tests of the memory account, the host-bias probe, then upstream's
#           memory-heavy problems and the problems whose clocks drifted (a --match subset of the sweep)
#   start   upstream's level 1-3 identity sweep, started in its own session so it outlives the call, watched until
#           the call's time is nearly up
#   finish  wait for the sweep, then the GPU fixtures and the bundled examples if time is left
# Results land in OUT/<mode>/. Carry upstream/ (scripts/fetch_upstream.sh). Ends only the processes it started.
#
#     bash lab/gpu_session.sh hard|start|finish "$OUT" [EXTRA SWEEP ARGS...]
set -u
MODE=${1:?usage: gpu_session.sh hard|start|finish OUT_DIR}
OUT=${2:?usage: gpu_session.sh hard|start|finish OUT_DIR}
shift 2
. lab/device_steps.sh
SWEEP=/tmp/kj-sweep          # outside OUT, which each call empties
CACHE=/tmp/kj-cache
HARD='level1/(19|2[0-9]|3[0-9]|40|69|9[4-9]|100)_|level2/63_|level3/(20|34|35|36|39|40)_'
sweep_report() {
  mkdir -p "$W/sweep"
  cp "$1"/*.md "$1"/*.json "$1"/sweep.log "$W/sweep/" 2>/dev/null
  gzip -c "$1/results.jsonl" > "$W/sweep/results.jsonl.gz" 2>/dev/null
  gzip -c "$1/gpu_samples.csv" > "$W/sweep/gpu_samples.csv.gz" 2>/dev/null
  tail -5 "$1/sweep.log" 2>/dev/null; head -60 "$1"/report.md 2>/dev/null
}
case "$MODE" in
  hard)
    session_start "$OUT/hard"
    step ipc_tests 120 python3 -m pytest -q -p no:cacheprovider tests/test_ipc.py tests/test_turns.py -x
    step host_bias 240 python3 lab/host_bias_probe.py upstream/KernelBench/level3/20_MobileNetV2.py \
      upstream/KernelBench/level3/34_VanillaRNNHidden.py
    step hard_sweep 330 python3 scripts/upstream_sweep.py --out /tmp/kj-hard --device cuda --cache-dir "$CACHE" \
      --match "$HARD" "$@"
    cat "$W/steps.txt"; tail -30 "$W/ipc_tests.log"; cat "$W/host_bias.log"
    sweep_report /tmp/kj-hard
    ;;
  start)
    session_start "$OUT/start"
    rm -rf "$SWEEP"; mkdir -p "$SWEEP"
    date -u +%FT%TZ >"$SWEEP/started.txt"
    setsid python3 scripts/upstream_sweep.py --out "$SWEEP" --device cuda --cache-dir "$CACHE" "$@" \
      >"$SWEEP/sweep.log" 2>&1 < /dev/null &
    echo $! >"$SWEEP/pid"
    while [ $((SECONDS)) -lt 560 ] && kill -0 "$(cat "$SWEEP/pid")" 2>/dev/null; do sleep 5; done
    sweep_report "$SWEEP"
    ;;
  finish)
    session_start "$OUT/finish"
    while [ $((SECONDS)) -lt 420 ] && kill -0 "$(cat "$SWEEP/pid")" 2>/dev/null; do sleep 5; done
    kill -0 "$(cat "$SWEEP/pid")" 2>/dev/null && echo "the sweep is still running" || echo "the sweep ended"
    sweep_report "$SWEEP"
    [ $((SECONDS)) -lt 430 ] && step fixtures 150 python3 scripts/gpu_report.py fixtures --out "$W" --cache "$CACHE"
    cat "$W/steps.txt" 2>/dev/null; head -20 "$W/fixtures.md" 2>/dev/null
    ;;
esac
