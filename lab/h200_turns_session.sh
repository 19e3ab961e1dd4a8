#!/usr/bin/env bash
# One device call after checks started sharing the GPU (timing still alone, at most four judgements with
# state on the device, a problem with over 1 GiB of outputs checked alone): the cold-cache throughput batch
# of earlier results (40 CUDA load_inline + 10 Triton), then every GPU fixture's verdict against its label.
# Lands in OUT/turns/. Call 4 of docs/evidence/2026-12-02-h200-device-turns.md ran it with two more changes that
# were taken back after it (twice the cores in flight, solutions with nothing to build queued first).
#
#     bash lab/h200_turns_session.sh "$OUT"          # ~8 minutes; run from the repository root
set -u
OUT=${1:?usage: h200_turns_session.sh OUT_DIR}
. lab/device_steps.sh
session_start "$OUT/turns"
step bench 250 python3 scripts/gpu_report.py bench --count 40 --triton 10 --out "$W"
step fixtures 205 python3 scripts/gpu_report.py fixtures --out "$W" --cache /tmp/kj-turns-cache
cat "$W/steps.txt"
