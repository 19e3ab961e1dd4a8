#!/usr/bin/env bash
# One device call (~9 minutes): issue 23's checks on the H200. The whole-suite numerics calibration runs in the
# background while published reward hacks and their honest controls (lab/stage_trust_check.sh, carried in
# upstream/trust/) are judged with `kerneljudge run` under the default contract, lenient policy (so that the
# numerics decide, not the policy) and then strict. Lands in OUT/trust/. Ends only the processes it started.
#
#     bash lab/h200_trust_session.sh "$OUT"          # run from the repository root; carry upstream/
set -u
OUT=${1:?usage: h200_trust_session.sh OUT_DIR}
. lab/device_steps.sh
session_start "$OUT/trust"
CACHE=/tmp/kj-trust-cache
python3 scripts/calibrate_numerics.py --device cuda --preset default --jobs 10 --deadline-min 7.2 \
  --out "$W/calibration" >"$W/calibration.log" 2>&1 &
CALIBRATION=$!
step trust_lenient 300 python3 -m kerneljudge run --problems upstream/trust/problems \
  --solutions upstream/trust/solutions --policy lenient --out "$W/trust-lenient.jsonl" --cache-dir "$CACHE"
step trust_strict 120 python3 -m kerneljudge run --problems upstream/trust/problems \
  --solutions upstream/trust/solutions --policy strict --out "$W/trust-strict.jsonl" --cache-dir "$CACHE"
wait "$CALIBRATION"; echo "calibration: exit $?" >>"$W/steps.txt"
python3 - "$W" <<'PY'
import json, sys, pathlib
w = pathlib.Path(sys.argv[1])
for name in ("trust-lenient", "trust-strict"):
    path = w / f"{name}.jsonl"
    if not path.exists():
        continue
    print(f"== {name}")
    for line in path.read_text().splitlines():
        v = json.loads(line)
        n = v.get("numerics") or {}
        print(f"{v['solution'].split('/')[-1][:52]:52s} {v['verdict']:12s} acc={str(v['accepted'])[0]} "
              f"cls={n.get('class')} rel={n.get('rel_l2')} flags={','.join(v.get('flags', []))[:60]} | {v['reason'][:90]}")
PY
cat "$W/steps.txt"; sed -n '/## The issue/,/## Controls/p' "$W/calibration.md" 2>/dev/null | head -20
