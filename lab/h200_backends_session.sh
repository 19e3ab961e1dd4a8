#!/usr/bin/env bash
# One device call (~9 minutes): the solution backends of issues 26 and 34 (cupy, cuda_core, numba, helion, cute,
# tilelang) on an H100/H200. Installs the carried wheels (helion, the CuTe DSL, TileLang: lab/install_carried.sh),
# runs the new backends' fixtures against their labels under the strict and the lenient policy (a fixture whose
# library does not import is listed as skipped), then judges the new backends' bundled examples under both
# policies. Lands in OUT/backends/. BACKENDS="tilelang" (say) limits the fixtures and examples to those backends.
#
#     bash lab/h200_backends_session.sh "$OUT"          # run from the repository root
#
# carry/ must hold what lab/carry_wheels.sh made; its CuTe DSL and TileLang parts may arrive over two calls (the
# first call's part stays in the device's copy of the tree while the machine is warm). Without them the helion,
# cute and tilelang rows say "skipped (needs ...)" and the rest still runs.
set -u
OUT=${1:?usage: h200_backends_session.sh OUT_DIR}
. lab/device_steps.sh
session_start "$OUT/backends"
BACKENDS=${BACKENDS:-cupy cuda_core numba helion cute tilelang}
MATCH=()
for backend in $BACKENDS; do MATCH+=(--match "gpu_${backend}_*"); done
CACHE=/tmp/kj-backends-cache

step carried 240 bash lab/install_carried.sh
step fixtures_strict 300 python3 scripts/gpu_report.py fixtures "${MATCH[@]}" --policy strict --out "$W" --cache "$CACHE"
step fixtures_lenient 200 python3 scripts/gpu_report.py fixtures "${MATCH[@]}" --policy lenient --out "$W" \
  --cache "$CACHE"

# the bundled examples of the new backends only (kerneljudge examples judges cuda and triton ones)
EX=src/kerneljudge/data/examples
STAGED="$W/example-solutions"
mkdir -p "$STAGED"
for backend in $BACKENDS; do
  cp "$EX"/solutions/*__"$backend".py "$STAGED"/ 2>/dev/null
done
ls "$STAGED" >"$W/example-solutions.txt"
for policy in strict lenient; do
  step "examples_$policy" 240 python3 -m kerneljudge run --problems "$EX/problems" --solutions "$STAGED" \
    --out "$W/examples-$policy.jsonl" --device cuda --policy "$policy" --cache-dir "$CACHE"
done

{
  echo "# issue 26/34 backends ($BACKENDS) on $(head -1 "$W/machine.txt")"
  echo
  echo '```'
  cat "$W/steps.txt"
  echo '```'
  echo
  echo '## carried wheels'
  echo
  echo '```'
  tail -12 "$W/carried.log" 2>/dev/null
  echo '```'
  for name in fixtures fixtures-lenient; do
    echo
    [ -f "$W/$name.md" ] && sed -n '/got their labelled verdict/,$p' "$W/$name.md"
  done
  for policy in strict lenient; do
    echo
    echo "## examples ($policy)"
    echo
    echo '```'
    grep -v "^judging\|^\s*$" "$W/examples_$policy.log" | tail -20
    echo '```'
  done
} >"$W/summary.md"
cat "$W/summary.md"
