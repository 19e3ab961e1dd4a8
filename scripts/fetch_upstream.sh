#!/usr/bin/env bash
# Extract upstream KernelBench's problem files (KernelBench/level1..level3) into upstream/KernelBench/level1..3
# at the repo root. That folder is git-ignored: upstream's files are never committed here, but they travel with
# the working tree to a GPU machine (scripts/upstream_sweep.py reads them).
#
#   bash scripts/fetch_upstream.sh [SOURCE]
#
# SOURCE: a path to a git directory or clone of KernelBench (a bare mirror works: the files are read from its
# HEAD), or a URL to clone (shallow, into a temporary folder removed afterwards). Default: $KERNELBENCH_MIRROR,
# else upstream's public repository, https://github.com/ScalingIntelligence/KernelBench.git.
set -euo pipefail
cd "$(dirname "$0")/.."
UPSTREAM_URL=https://github.com/ScalingIntelligence/KernelBench.git
SOURCE=${1:-${KERNELBENCH_MIRROR:-$UPSTREAM_URL}}
DEST=upstream
LEVELS=(KernelBench/level1 KernelBench/level2 KernelBench/level3)

fail() { echo "fetch_upstream: $*" >&2; exit 3; }

if [ -e "$SOURCE" ]; then
  REPO=$SOURCE
elif [[ "$SOURCE" == *://* || "$SOURCE" =~ ^[^/]+@[^/]+: ]]; then  # https://..., file://..., git@host:path
  SCRATCH=$(mktemp -d)
  trap 'rm -rf "$SCRATCH"' EXIT
  echo "fetch_upstream: cloning $SOURCE (shallow)" >&2
  git clone -q --bare --depth 1 "$SOURCE" "$SCRATCH/repo" || fail "could not clone $SOURCE"
  REPO=$SCRATCH/repo
else
  fail "$SOURCE does not exist and is not a URL (give a KernelBench clone, mirror or clone URL)"
fi
if ! git -C "$REPO" rev-parse --verify -q HEAD >/dev/null 2>&1; then
  fail "$SOURCE is not a git repository with a HEAD commit (give a KernelBench clone, mirror or clone URL)"
fi
for level in "${LEVELS[@]}"; do
  if [ -z "$(git -C "$REPO" ls-tree --name-only HEAD "$level/")" ]; then
    fail "$SOURCE has no $level at HEAD"
  fi
done
# replace, not merge: a file upstream removed must not linger from an earlier extraction
rm -rf "$DEST/KernelBench"
mkdir -p "$DEST"
git -C "$REPO" archive HEAD "${LEVELS[@]}" | tar -x -C "$DEST"
git -C "$REPO" rev-parse HEAD > "$DEST/KernelBench/COMMIT"
for level in "${LEVELS[@]}"; do
  echo "$DEST/$level: $(find "$DEST/$level" -maxdepth 1 -name '*.py' | wc -l) problem files"
done
echo "from $SOURCE at commit $(cat "$DEST/KernelBench/COMMIT")"
