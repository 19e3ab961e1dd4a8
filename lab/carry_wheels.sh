#!/usr/bin/env bash
# Fetch the wheels the H200 image lacks for two solution backends (helion, the CuTe DSL) and pack them so they
# can travel to the device with the source tree (a device call carries at most 64 MiB, tree included).
#
#     bash lab/carry_wheels.sh            # run from the repository root; writes carry/ (git-ignored)
#
# What the image already has: torch 2.11, triton 3.6, numpy, scipy, psutil, rich, tqdm, pyarrow, pandas,
# cupy-cuda13x, cuda-core, cuda-bindings, numba-cuda. So:
#   helion   - its own wheel, no dependencies (--no-deps), plus filecheck (declared; imported by nothing the
#              judge runs) and packaging (undeclared, imported by helion._compat, and not certain to be in
#              the image). Its other declared dependencies are there (numpy, psutil, rich,
#              typing-extensions; sympy comes with torch) except scikit-learn, which only the LFBO/surrogate
#              autotuners import, and only when they run: the judge never autotunes (docs/backends.md), so
#              it stays behind.
#              Version 1.4.0 by default: it imports and runs with the image's torch 2.11 on the H200 (1.5.1
#              does not: it needs torch._inductor's IntelGPUError); HELION_VERSION=... to change it.
#   CuTe DSL - nvidia-cutlass-dsl (a .pth that adds dsl_packages/ to sys.path) with -libs-base, -libs-core
#              and -libs-cu13. Not -libs-cu12 (declared, but the image's CUDA is 13) nor protobuf (declared;
#              no Python module of the DSL imports it).
#
# Trimming: nothing arch-specific can be dropped. 230 of the cu13 wheel's 237 MB (92 MB zipped) are two
# stripped host libraries, the MLIR/LLVM compiler (_cutlass_ir.cu13...so, 193 MB of .text) and the runtime
# (libcute_dsl_runtime.so, 44 MB); neither carries a fatbin section, so there is no sm_100/sm_120 code to cut
# for an sm_90 machine. The rest (aarch64 and QNX stubs, a 52 KB static library) is not worth breaking the
# wheels' RECORD for.
#
# Packing: every wheel is rewritten uncompressed (ZIP_STORED: same files, so its RECORD still holds), the lot
# is tarred and compressed with xz -9e (xz on stored wheels beats the wheels' own deflate by about a third),
# and the archive is cut into parts of at most PART_MIB (default 36) so that each part plus the ~20 MB tree
# fits one carry. helion's pack is separate and small: it can go with the first part.
# Result: carry/helion.tar.xz, carry/cute_dsl.tar.xz.part-NN, carry/MANIFEST (sizes, sha256).
# On the device: bash lab/install_carried.sh (joins the parts, checks the hashes, installs).
set -euo pipefail

HELION_VERSION=${HELION_VERSION:-1.4.0}
CUTLASS_DSL_VERSION=${CUTLASS_DSL_VERSION:-4.8.1}   # 4.3.5: one wheel that fits one carry with the tree
PY_VERSION=${PY_VERSION:-3.12}
PART_MIB=${PART_MIB:-36}
OUT=${OUT:-carry}
PYTHON=${PYTHON:-python3}

rm -rf "$OUT"
mkdir -p "$OUT/download/helion" "$OUT/download/cute_dsl"
fetch() {  # fetch FOLDER REQUIREMENT...
  local folder=$1
  shift
  "$PYTHON" -m pip download --quiet --no-deps --only-binary=:all: --python-version "$PY_VERSION" \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    -d "$OUT/download/$folder" "$@"
}
fetch helion "helion==$HELION_VERSION" filecheck packaging
fetch cute_dsl "nvidia-cutlass-dsl==$CUTLASS_DSL_VERSION"
# 4.4 and later split the libraries into -libs-* wheels; 4.3 and earlier hold them in the one wheel
for libs in base core cu13; do
  fetch cute_dsl "nvidia-cutlass-dsl-libs-$libs==$CUTLASS_DSL_VERSION" 2>/dev/null \
    || echo "carry_wheels: no nvidia-cutlass-dsl-libs-$libs $CUTLASS_DSL_VERSION (a single-wheel release)"
done

# rewrite each wheel with stored (uncompressed) members, same names, same order
"$PYTHON" - "$OUT/download" <<'EOF'
import sys
import zipfile
from pathlib import Path

for wheel in sorted(Path(sys.argv[1]).glob("*/*.whl")):
    stored = wheel.with_suffix(".stored")
    with zipfile.ZipFile(wheel) as src, zipfile.ZipFile(stored, "w", zipfile.ZIP_STORED) as dst:
        for info in src.infolist():
            data = src.read(info)   # before the member is marked stored: read() follows compress_type
            info.compress_type = zipfile.ZIP_STORED
            dst.writestr(info, data)
    stored.replace(wheel)
EOF

pack() {  # pack NAME: carry/NAME.tar.xz from carry/download/NAME/*.whl
  tar -C "$OUT/download" -cf - "$1" | xz -9e -T0 -c >"$OUT/$1.tar.xz"
}
pack helion
pack cute_dsl
split -b "${PART_MIB}M" -d -a 2 "$OUT/cute_dsl.tar.xz" "$OUT/cute_dsl.tar.xz.part-"
rm "$OUT/cute_dsl.tar.xz"

{
  echo "# made by lab/carry_wheels.sh on $(date -u +%FT%TZ): helion $HELION_VERSION, nvidia-cutlass-dsl $CUTLASS_DSL_VERSION, python $PY_VERSION"
  for f in "$OUT"/download/*/*.whl; do
    echo "wheel $(basename "$(dirname "$f")") $(basename "$f") $(stat -c %s "$f")"
  done
  (cd "$OUT" && sha256sum helion.tar.xz cute_dsl.tar.xz.part-* | sed 's/^/sha256 /')
} >"$OUT/MANIFEST"
rm -rf "$OUT/download"
cat "$OUT/MANIFEST"
ls -l "$OUT"
du -cb "$OUT"/helion.tar.xz "$OUT"/cute_dsl.tar.xz.part-* | tail -1
