#!/usr/bin/env bash
# Device calls for issues 31-33 (memory, fairness, noise), on whatever single GPU the call gets:
#   hard    the CUDA IPC round trip and the GPU tests of the memory account, the host-bias probe, the device clock's
#           GPU tests, then upstream's 30 most memory-hungry problems (--hard 30) and the copies whose clocks drifted
#   start   the IPC round trip and the host-bias probe again, then upstream's level 1-3 identity sweep, started
#           in its own session so it outlives the call, watched until the call's time is nearly up
#   finish  wait for the sweep, then the GPU fixtures and the bundled examples if time is left
#   last    one call for all of it: the checks, the GPU fixtures, then as much of the sweep as fits (it resumes
#           from a carried OUT folder's results.jsonl next time: --out points at it)
#   honest  the staged honest corpus (lab/stage_honest_corpus.py), source after source, under HONEST_POLICY
#           (default strict), then lab/honest_corpus_report.py; each source's log is upstream/honest_runs/POLICY/,
#           copied to OUT/honest/: put it back there and carry upstream/ again to resume (lab/README.md)
#   queue   lab/gpu_queue.sh QUEUE_ITEMS (default: checks sweep readme sweep24 honest_strict alone honest_lenient) in the background,
#           from a copy of the tree in /tmp/kj-tree (started by the first such call, with setsid, so it outlives the
#           call), watched until QUEUE_UNTIL seconds; every call returns OUT/queue/queue.tgz, all the queue has
#           written so far. Call again within the machine's warm time (30 s) to keep watching
# Results land in OUT/<mode>/. Carry upstream/ (scripts/fetch_upstream.sh). Ends only the processes it started.
#
#     bash lab/gpu_session.sh hard|start|finish|last|honest "$OUT" [EXTRA SWEEP OR RUN ARGS...]
set -u
MODE=${1:?usage: gpu_session.sh hard|start|finish|last|honest OUT_DIR}
OUT=${2:?usage: gpu_session.sh hard|start|finish OUT_DIR}
shift 2
. lab/device_steps.sh
SWEEP=/tmp/kj-sweep          # outside OUT, which each call empties
CACHE=/tmp/kj-cache
CLOCKS='level1/69_|level2/63_|level3/(20|34|35|39)_'   # the copies whose clocks drifted on the H100
sweep_report() {   # three files beside the call's others: at most 8 come back from OUT
  mkdir -p "$W"; rm -f "$W/install.log"
  cp "$1/report.md" "$W/sweep-report.md" 2>/dev/null
  cp "$1/floor.json" "$W/sweep-floor.json" 2>/dev/null
  gzip -c "$1/results.jsonl" > "$W/sweep-results.jsonl.gz" 2>/dev/null
  tail -5 "$1/sweep.log" 2>/dev/null; head -60 "$1"/report.md 2>/dev/null
}
case "$MODE" in
  hard)
    session_start "$OUT/hard"
    step ipc_tests 120 python3 -m pytest -q -p no:cacheprovider tests/test_ipc.py tests/test_turns.py -x
    step host_bias 150 python3 lab/host_bias_probe.py upstream/KernelBench/level3/20_MobileNetV2.py \
      upstream/KernelBench/level3/34_VanillaRNNHidden.py
    step device_clock_tests 120 python3 -m pytest -q -p no:cacheprovider tests/test_device_clock_gpu.py
    step hard_sweep 200 python3 scripts/upstream_sweep.py --out /tmp/kj-hard --device cuda --cache-dir "$CACHE" \
      --hard 30 "$@"
    step clock_sweep 100 python3 scripts/upstream_sweep.py --out /tmp/kj-clocks --device cuda --cache-dir "$CACHE" \
      --match "$CLOCKS" "$@"
    cat "$W/steps.txt"; tail -30 "$W/ipc_tests.log"; cat "$W/host_bias.log"; tail -30 "$W/device_clock_tests.log"
    sweep_report /tmp/kj-hard
    W="$W/clocks" sweep_report /tmp/kj-clocks
    ;;
  start)
    session_start "$OUT/start"
    step ipc_test 60 python3 -m pytest -q -p no:cacheprovider tests/test_ipc.py
    step host_bias 90 python3 lab/host_bias_probe.py upstream/KernelBench/level3/34_VanillaRNNHidden.py
    cat "$W/steps.txt"; tail -3 "$W/ipc_test.log"; cat "$W/host_bias.log"
    rm -rf "$SWEEP"; mkdir -p "$SWEEP"
    date -u +%FT%TZ >"$SWEEP/started.txt"
    setsid python3 scripts/upstream_sweep.py --out "$SWEEP" --device cuda --cache-dir "$CACHE" "$@" \
      >"$SWEEP/sweep.log" 2>&1 < /dev/null &
    echo $! >"$SWEEP/pid"
    while [ $((SECONDS)) -lt 560 ] && kill -0 "$(cat "$SWEEP/pid")" 2>/dev/null; do sleep 5; done
    sweep_report "$SWEEP"
    ;;
  last)   # one call: the checks, the GPU fixtures, then as much of the sweep as the call allows (resumable)
    session_start "$OUT/last"
    rm -f "$W/install.log"
    step ipc_test 60 python3 -m pytest -q -p no:cacheprovider tests/test_ipc.py
    step host_bias 90 python3 lab/host_bias_probe.py upstream/KernelBench/level3/34_VanillaRNNHidden.py
    step fixtures 200 python3 scripts/gpu_report.py fixtures --out /tmp/kj-fixtures --cache "$CACHE"
    cp /tmp/kj-fixtures/fixtures.md "$W/" 2>/dev/null
    mkdir -p "$SWEEP"
    step sweep $((${LAST_UNTIL:-560} - SECONDS)) python3 scripts/upstream_sweep.py --out "$SWEEP" --device cuda --cache-dir "$CACHE" "$@"
    python3 scripts/upstream_sweep.py --from-jsonl "$SWEEP/results.jsonl" --out "$SWEEP" >/dev/null 2>&1
    cp "$SWEEP/report.md" "$W/sweep-report.md" 2>/dev/null
    gzip -c "$SWEEP/results.jsonl" > "$W/sweep-results.jsonl.gz" 2>/dev/null
    cat "$W/steps.txt"; tail -3 "$W/ipc_test.log"; cat "$W/host_bias.log"; head -16 "$W/fixtures.md"
    grep -E "^\| (correct|runtime|unjudgeable|wrong|timeout|rejected|build)|within|outside|fast_1.05|memory used" \
      "$W/sweep-report.md" | head -30
    ;;
  honest)   # HONEST_SOURCES (space-separated) in order, until HONEST_UNTIL seconds into the call
    session_start "$OUT/honest"
    POLICY=${HONEST_POLICY:-strict}
    RUNS=upstream/honest_runs/$POLICY   # outside upstream/honest, which staging replaces
    mkdir -p "$RUNS"
    for src in ${HONEST_SOURCES:-upstream_triton leaderboard technoabsurdist cuda_l1}; do
      left=$((${HONEST_UNTIL:-560} - SECONDS))
      [ "$left" -gt 30 ] || break
      step "honest_$src" "$left" python3 -m kerneljudge run --problems upstream/KernelBench \
        --solutions "upstream/honest/$src/solutions" --policy "$POLICY" --out "$RUNS/$src.jsonl" --cache-dir "$CACHE" "$@"
    done
    cp "$RUNS"/*.jsonl "$W/" 2>/dev/null
    python3 lab/honest_corpus_report.py "$RUNS"/*.jsonl --manifest upstream/honest/manifest.jsonl --device cuda \
      >"$W/report.md" 2>&1
    cat "$W/steps.txt"; head -14 "$W/report.md"
    ;;
  queue)
    session_start "$OUT/queue"
    rm -f "$W/install.log"
    QDIR=/tmp/kj-queue
    mkdir -p "$QDIR"
    ITEMS=${QUEUE_ITEMS:-checks sweep readme sweep24 honest_strict alone honest_lenient}
    # running: the queue's heartbeat (lab/gpu_queue.sh) is fresh. Not `kill -0` on a saved pid: a later call may
    # not see the first call's processes, and on 2026-12-07 a second call took a running queue for dead, replaced
    # the tree under its sweep (every reference process started after that failed) and ran a second sweep beside it
    running() { [ -f "$QDIR/heartbeat" ] && [ $(($(date +%s) - $(cat "$QDIR/heartbeat" 2>/dev/null || echo 0))) -lt 30 ]; }
    if ! running && ! grep -q "^queue: over" "$QDIR/status.txt" 2>/dev/null; then
      # the queue runs from a copy of the tree: each call copies the working tree here afresh, and a file replaced
      # under a running judge fails its judgement (upstream's level 3 AlexNet, "No such file", on 2026-12-07)
      rm -rf /tmp/kj-tree && mkdir -p /tmp/kj-tree && tar --exclude=.git --exclude=.venv --exclude=.kj-cache -cf - . | tar -xf - -C /tmp/kj-tree
      # PYTHONPATH comes before the editable install: the judge and its children import the copy
      date +%s >"$QDIR/heartbeat"   # fresh until the queue's own beat takes over
      (cd /tmp/kj-tree && PYTHONPATH=/tmp/kj-tree/src setsid bash lab/gpu_queue.sh "$QDIR" $ITEMS \
        >"$QDIR/queue.log" 2>&1 < /dev/null & echo $! >"$QDIR/pid")
      echo "queue started: $ITEMS"
    else
      echo "queue running (heartbeat $(cat "$QDIR/heartbeat" 2>/dev/null)) or over: watching"
    fi
    while [ $((SECONDS)) -lt "${QUEUE_UNTIL:-560}" ] && running; do sleep 5; done
    tar czf "$W/queue.tgz" -C "$QDIR" --exclude=solutions . 2>/dev/null
    cat "$QDIR/status.txt"; tail -3 "$QDIR/queue.log"; tail -4 "$QDIR/checks/checks.log" 2>/dev/null
    for d in "$QDIR"/*/; do
      [ -f "$d/report.md" ] && { echo "== $d"; grep -E "^\| (correct|runtime|unjudgeable|wrong|timeout|rejected|build|accepted)|within|outside|fast_1.05|memory used|Wall|wall" "$d/report.md" | head -24; }
      ls "$d"/*.jsonl >/dev/null 2>&1 && wc -l "$d"/*.jsonl | tail -1
    done
    ;;
  finish)
    session_start "$OUT/finish"
    while [ $((SECONDS)) -lt 420 ] && kill -0 "$(cat "$SWEEP/pid")" 2>/dev/null; do sleep 5; done
    kill -0 "$(cat "$SWEEP/pid")" 2>/dev/null && echo "the sweep is still running" || echo "the sweep ended"
    sweep_report "$SWEEP"
    [ $((SECONDS)) -lt 430 ] && step fixtures 150 python3 scripts/gpu_report.py fixtures --out /tmp/kj-fixtures --cache "$CACHE"
    cp /tmp/kj-fixtures/fixtures.md "$W/" 2>/dev/null
    cat "$W/steps.txt" 2>/dev/null; head -20 "$W/fixtures.md" 2>/dev/null
    ;;
esac
