#!/usr/bin/env bash
# On the device: install the wheels lab/carry_wheels.sh packed into carry/ (helion, the CuTe DSL, TileLang), offline.
#
#     bash lab/install_carried.sh              # run from the repository root
#
# Checks every pack against carry/MANIFEST, joins the CuTe DSL's and TileLang's parts (all of a pack's parts must
# be there: parts carried by earlier calls stay in the device's copy of the tree while the machine is warm), and
# installs with pip --no-index --no-deps into the interpreter's own site-packages (pip falls back to the user
# site where that is not writable). Not --target into a folder of our own: the box lets a solution read
# site-packages folders on sys.path and nothing under /tmp, and --target would skip nvidia-cutlass-dsl's .pth
# (it puts dsl_packages/ on sys.path). Only the packs MANIFEST lists are installed; one that is missing or fails
# its hash is reported and skipped, the others are still installed. Prints what imports, with versions. Exit
# status 0 when every pack listed was installed.
set -u
CARRY=${CARRY:-carry}
STAGE=$(mktemp -d /tmp/kj-carry-stage.XXXXXX)
trap 'rm -rf "$STAGE"' EXIT
status=0

if [ ! -f "$CARRY/MANIFEST" ]; then
  echo "install_carried: no $CARRY/MANIFEST (run lab/carry_wheels.sh and carry $CARRY/)" >&2
  exit 2
fi
head -1 "$CARRY/MANIFEST"

check() {  # check FILE...: each listed in MANIFEST with its sha256
  local f want got
  for f in "$@"; do
    want=$(awk -v n="$(basename "$f")" '$1 == "sha256" && $3 == n {print $2}' "$CARRY/MANIFEST")
    [ -f "$f" ] || { echo "install_carried: $f is missing"; return 1; }
    got=$(sha256sum "$f" | cut -d' ' -f1)
    [ -n "$want" ] && [ "$want" = "$got" ] || { echo "install_carried: $f does not match MANIFEST"; return 1; }
  done
}

# wheels carried in case the image lacks them: one whose module already imports is kept, not replaced
KEEP_IF_PRESENT="packaging.version:packaging cloudpickle:cloudpickle ml_dtypes:ml_dtypes"

install_pack() {  # install_pack NAME ARCHIVE_FILES...
  local name=$1 pair module prefix
  shift
  if ! check "$@"; then
    status=1
    return
  fi
  cat "$@" | xz -dc | tar -C "$STAGE" -xf - || { echo "install_carried: cannot unpack $name"; status=1; return; }
  for pair in $KEEP_IF_PRESENT; do
    module=${pair%%:*}
    prefix=${pair##*:}
    if python3 -c "import $module" >/dev/null 2>&1; then
      rm -f "$STAGE/$name/$prefix"-*.whl
    fi
  done
  python3 -m pip install --quiet --no-index --no-deps --upgrade "$STAGE/$name"/*.whl \
    || { echo "install_carried: pip could not install $name"; status=1; return; }
  echo "install_carried: $name installed ($(ls "$STAGE/$name" | tr '\n' ' '))"
}

parts() {  # parts NAME: the part files MANIFEST lists for a split pack, in order
  awk -v p="^$1\\\\.tar\\\\.xz\\\\.part-" '$1 == "sha256" && $3 ~ p {print $3}' "$CARRY/MANIFEST"
}

if awk '$1 == "sha256" && $3 == "helion.tar.xz"' "$CARRY/MANIFEST" | grep -q .; then
  install_pack helion "$CARRY/helion.tar.xz"
fi
for name in cute_dsl tilelang; do
  expected=$(parts "$name")
  if [ -n "$expected" ]; then
    install_pack "$name" $(for p in $expected; do echo "$CARRY/$p"; done)
  fi
done

python3 - <<'PY'
import importlib

for module in ("helion", "cutlass", "cutlass.cute", "tilelang", "tvm_ffi", "z3", "cupy", "cuda.core", "numba.cuda",
               "triton", "torch"):
    try:
        mod = importlib.import_module(module)
        print(f"  {module:12s} {getattr(mod, '__version__', '?')}  {getattr(mod, '__file__', '')}")
    except Exception as exc:  # report every failure, keep going
        print(f"  {module:12s} NOT IMPORTABLE: {type(exc).__name__}: {str(exc)[:200]}")
PY
exit $status
