#!/usr/bin/env bash
# Extract upstream KernelBench's problem files (KernelBench/level1..level3) from a git mirror into
# upstream/KernelBench/level1..3 at the repo root. That folder is git-ignored: upstream's files are never
# committed here, but they travel with the working tree to a GPU machine (scripts/upstream_sweep.py reads them).
#
#   bash scripts/fetch_upstream.sh [MIRROR]
#
# MIRROR: a git directory or clone of github.com/ScalingIntelligence/KernelBench (default: $KERNELBENCH_MIRROR,
# else /work/.mirror/ScalingIntelligence+KernelBench/repo). A bare mirror works: the files are read from HEAD.
set -euo pipefail
cd "$(dirname "$0")/.."
MIRROR=${1:-${KERNELBENCH_MIRROR:-/work/.mirror/ScalingIntelligence+KernelBench/repo}}
DEST=upstream
if ! git -C "$MIRROR" rev-parse --verify -q HEAD >/dev/null 2>&1; then
  echo "fetch_upstream: $MIRROR is not a git repository with a HEAD commit (give the mirror's path)" >&2
  exit 3
fi
LEVELS=(KernelBench/level1 KernelBench/level2 KernelBench/level3)
for level in "${LEVELS[@]}"; do
  if [ -z "$(git -C "$MIRROR" ls-tree --name-only HEAD "$level/")" ]; then
    echo "fetch_upstream: $MIRROR has no $level at HEAD" >&2
    exit 3
  fi
done
# replace, not merge: a file upstream removed must not linger from an earlier extraction
rm -rf "$DEST/KernelBench"
mkdir -p "$DEST"
git -C "$MIRROR" archive HEAD "${LEVELS[@]}" | tar -x -C "$DEST"
git -C "$MIRROR" rev-parse HEAD > "$DEST/KernelBench/COMMIT"
for level in "${LEVELS[@]}"; do
  echo "$DEST/$level: $(find "$DEST/$level" -maxdepth 1 -name '*.py' | wc -l) problem files"
done
echo "from $MIRROR at commit $(cat "$DEST/KernelBench/COMMIT")"
