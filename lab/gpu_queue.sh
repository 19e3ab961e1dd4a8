#!/usr/bin/env bash
# The GPU work of issues 31-33 as one queue that runs in the background across several device calls, so the
# card never waits between calls (lab/gpu_session.sh queue starts it with setsid and watches it).
#
#     bash lab/gpu_queue.sh QUEUE_DIR ITEM...     # items in order; an item with QUEUE_DIR/ITEM/done is skipped
#
# Items:
#   checks          the GPU tests of the memory account: a reference process gives its memory back, IPC, turns
#   readme          the README's command as a new user on this image runs it (issue 31): `bash scripts/examples.sh` in
#                   a fresh copy of the tree with no .venv, so setup.sh must take the image's torch, not install one
#   probe           lab/profile_vs_graph_probe.py: why the profiler clock and graph replays disagree (issue 33)
#   sweep           upstream's level 1-3 identity sweep at its own sizes (the memory and noise bars)
#   hard24          the 30 most memory-hungry problems with --device-memory 24GiB (a 24 GB card's budget)
#   sweep24         the whole sweep with --device-memory 24GiB
#   honest_strict   the staged honest corpus (lab/stage_honest_corpus.py), source after source, strict
#   honest_lenient  the same, lenient
#   alone           12 verdicts of the strict honest run and the sweep judged again alone (lab/batch_vs_alone.py)
# Each item writes QUEUE_DIR/ITEM/ (its log, results, report) and QUEUE_DIR/status.txt lines
# "ITEM: exit S after T s". Steps run through run_step.py, so each ends only what it started.
set -u
Q=${1:?usage: gpu_queue.sh QUEUE_DIR ITEM...}
shift
LAB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE=${CACHE:-/tmp/kj-cache}
SOURCES=${HONEST_SOURCES:-upstream_triton leaderboard technoabsurdist cuda_l1}
export PYTHONUNBUFFERED=1
# the heartbeat lab/gpu_session.sh reads to tell a running queue (a fresh beat) from a dead one
# (written beside and renamed: a reader never sees the file empty)
( while :; do date +%s >"$Q/heartbeat.new" && mv -f "$Q/heartbeat.new" "$Q/heartbeat"; sleep 5; done ) &
BEAT=$!
trap 'kill "$BEAT" 2>/dev/null; rm -f "$Q/heartbeat"' EXIT
python3 -c "import kerneljudge, sys; sys.stdout.write(f'queue: kerneljudge from {kerneljudge.__file__}\\n')"

limited() {  # limited SECONDS LOG COMMAND...
  local limit=$1 log=$2
  shift 2
  python3 "$LAB_DIR/run_step.py" --limit "$limit" --grace 10 --log "$log" -- "$@"
}

honest() {  # honest POLICY DIR
  local policy=$1 dir=$2 src rc=0
  for src in $SOURCES; do
    limited 1800 "$dir/$src.log" python3 -m kerneljudge run --problems upstream/KernelBench \
      --solutions "upstream/honest/$src/solutions" --policy "$policy" --out "$dir/$src.jsonl" \
      --cache-dir "$CACHE" || rc=$?
  done
  python3 "$LAB_DIR/honest_corpus_report.py" "$dir"/*.jsonl --manifest upstream/honest/manifest.jsonl \
    --device cuda >"$dir/report.md" 2>&1
  return $rc
}

for item in "$@"; do
  dir=$Q/$item
  [ -e "$dir/done" ] && continue
  mkdir -p "$dir"
  started=$SECONDS
  echo "$item: started $(date -u +%FT%TZ)" >>"$Q/status.txt"
  case "$item" in
    checks)  limited 300 "$dir/checks.log" python3 -m pytest -q -p no:cacheprovider tests/test_reference_memory_gpu.py \
               tests/test_ipc.py tests/test_turns.py tests/test_device_clock_gpu.py ;;
    sweep)   limited 1500 "$dir/sweep.log" python3 scripts/upstream_sweep.py --out "$dir" --device cuda \
               --cache-dir "$CACHE" ;;
    hard24)  limited 600 "$dir/sweep.log" python3 scripts/upstream_sweep.py --out "$dir" --device cuda \
               --cache-dir "$CACHE" --hard 30 -- --device-memory 24GiB ;;
    sweep24) limited 1800 "$dir/sweep.log" python3 scripts/upstream_sweep.py --out "$dir" --device cuda \
               --cache-dir "$CACHE" -- --device-memory 24GiB ;;
    readme)  limited 900 "$dir/readme.log" env -u PYTHONPATH FRESH=/tmp/kj-fresh OUTDIR="$dir" bash -c '
               rm -rf "$FRESH" && mkdir -p "$FRESH" &&
               tar --exclude=./.venv --exclude=./upstream --exclude=./carry --exclude=./.kj-cache -cf - . |
                 tar -xf - -C "$FRESH" && cd "$FRESH" &&
               { python3 -c "import sys, torch; print(\"image:\", sys.executable, torch.__version__, torch.cuda.is_available())" ||
                 echo "image: python3 has no torch"; } &&
               time bash scripts/examples.sh --out "$OUTDIR/examples.jsonl" &&
               .venv/bin/python -c "import torch, kerneljudge; print(\"venv uses:\", torch.__file__, kerneljudge.__file__)"' ;;
    probe)   limited 300 "$dir/probe.log" python3 lab/profile_vs_graph_probe.py --out "$dir/probe.json" ;;
    honest_strict)  honest strict "$dir" ;;
    alone)   limited 900 "$dir/alone.log" python3 lab/batch_vs_alone.py "$Q"/honest_strict/*.jsonl \
               "$Q/sweep/results.jsonl" --out "$dir/report.md" --count 12 ;;
    honest_lenient) honest lenient "$dir" ;;
    *) echo "gpu_queue: unknown item $item" >&2; false ;;
  esac
  rc=$?
  echo "$item: exit $rc after $((SECONDS - started)) s" >>"$Q/status.txt"
  touch "$dir/done"
done
echo "queue: over $(date -u +%FT%TZ)" >>"$Q/status.txt"
