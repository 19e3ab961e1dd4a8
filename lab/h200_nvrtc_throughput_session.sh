#!/usr/bin/env bash
# One device call (~6 minutes), issue 26 point 8: the same four problems' CUDA kernels judged from a cold cache
# as load_inline builds, as CuPy (NVRTC) and as cuda.core (NVRTC) solutions, twelve distinct solutions each
# (scripts/gpu_report.py bench --form ...), then the new backends' bundled examples under both policies. The bar:
# NVRTC solutions judged at least 3x the rate of load_inline ones. Lands in OUT/nvrtc.tgz.
#
#     bash lab/h200_nvrtc_throughput_session.sh "$OUT"     # run from the repository root; carry carry/ for helion
set -u
OUT=${1:?usage: h200_nvrtc_throughput_session.sh OUT_DIR}
. lab/device_steps.sh
session_start /tmp/kj-nvrtc
[ -f carry/MANIFEST ] && step carried 90 bash lab/install_carried.sh
for form in cuda cupy cuda_core; do
  step "bench_$form" 150 python3 scripts/gpu_report.py bench --form "$form" --examples-only --count 12 \
    --out "$W/$form"
done
EX=src/kerneljudge/data/examples
STAGED=/tmp/kj-new-examples
rm -rf "$STAGED"; mkdir -p "$STAGED"
for backend in cupy cuda_core numba helion cute; do cp "$EX"/solutions/*__"$backend".py "$STAGED"/; done
for policy in strict lenient; do
  step "examples_$policy" 90 python3 -m kerneljudge run --problems "$EX/problems" --solutions "$STAGED" \
    --out "$W/examples-$policy.jsonl" --device cuda --policy "$policy" --cache-dir /tmp/kj-examples-cache
done
cat "$W/steps.txt"
for form in cuda cupy cuda_core; do head -12 "$W/$form/bench.md" 2>/dev/null | tail -6; done
tail -14 "$W/examples_strict.log" "$W/examples_lenient.log" 2>/dev/null
tar -czf "$OUT/nvrtc.tgz" -C "$W" .
