#!/usr/bin/env bash
# One device call (~8 minutes), after lab/h200_trust_session.sh showed that a calibration running beside a
# batch takes the GPU memory both need: the trust check alone (lenient, then strict), the calibration of the
# problems that ran out of memory there and of the recurrent networks, then every GPU fixture's verdict against
# its label. Lands in OUT/trust-rerun/. Carry upstream/. Ends only the processes it started.
#
#     bash lab/h200_trust_rerun_session.sh "$OUT" PROBLEM_GLOBS
set -u
OUT=${1:?usage: h200_trust_rerun_session.sh OUT_DIR PROBLEM_GLOBS}
GLOBS=${2:?usage: h200_trust_rerun_session.sh OUT_DIR PROBLEM_GLOBS}
. lab/device_steps.sh
session_start "$OUT/trust-rerun"
CACHE=/tmp/kj-trust-cache
for policy in lenient strict; do
  step "trust_$policy" 200 python3 -m kerneljudge run --problems upstream/trust/problems \
    --solutions upstream/trust/solutions --policy $policy --out "$W/trust-$policy.jsonl" --cache-dir "$CACHE"
done
step calibration 150 python3 scripts/calibrate_numerics.py --device cuda --preset default --jobs 8 \
  --problems "$GLOBS" --out "$W/calibration"
step fixtures 230 python3 scripts/gpu_report.py fixtures --out "$W" --cache "$CACHE"
python3 - "$W" <<'PY'
import json, sys, pathlib
w = pathlib.Path(sys.argv[1])
for name in ("trust-lenient", "trust-strict"):
    path = w / f"{name}.jsonl"
    for line in (path.read_text().splitlines() if path.exists() else []):
        v = json.loads(line)
        kind = (v.get("problem_outcome") or {}).get("kind") or ""
        print(f"{name[6:]:7s} {v['solution'].split('/')[-1][:50]:50s} {v['verdict']:12s} {kind:20s} "
              f"acc={str(v['accepted'])[0]} flags={','.join(v.get('flags', []))[:40]} | {v['reason'][:70]}")
PY
cat "$W/steps.txt"; sed -n '/## The issue/,/## Controls/p' "$W/calibration.md" 2>/dev/null | head -16
head -16 "$W/fixtures.md" 2>/dev/null
