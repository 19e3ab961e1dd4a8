#!/usr/bin/env bash
# On the device: install the wheels lab/carry_wheels.sh packed into carry/ (helion, the CuTe DSL), offline.
#
#     bash lab/install_carried.sh              # run from the repository root
#
# Checks every pack against carry/MANIFEST, joins the CuTe DSL's parts (all of them must be there: parts
# carried by earlier calls stay in the device's copy of the tree while the machine is warm), and installs with
# pip --no-index --no-deps into the interpreter's own site-packages (pip falls back to the user site where that
# is not writable). Not --target into a folder of our own: the box lets a solution read site-packages folders
# on sys.path and nothing under /tmp, and --target would skip nvidia-cutlass-dsl's .pth (it puts
# dsl_packages/ on sys.path). A pack that is missing or fails its hash is reported and skipped; the other is
# still installed. Prints what imports, with versions. Exit status 0 when every pack present was installed.
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

install_pack() {  # install_pack NAME ARCHIVE_FILES...
  local name=$1
  shift
  if ! check "$@"; then
    status=1
    return
  fi
  cat "$@" | xz -dc | tar -C "$STAGE" -xf - || { echo "install_carried: cannot unpack $name"; status=1; return; }
  # packaging is carried in case the image lacks it; one already there is kept, not replaced
  if python3 -c "import packaging.version" >/dev/null 2>&1; then
    rm -f "$STAGE/$name"/packaging-*.whl
  fi
  python3 -m pip install --quiet --no-index --no-deps --upgrade "$STAGE/$name"/*.whl \
    || { echo "install_carried: pip could not install $name"; status=1; return; }
  echo "install_carried: $name installed ($(ls "$STAGE/$name" | tr '\n' ' '))"
}

expected_parts=$(awk '$1 == "sha256" && $3 ~ /^cute_dsl\.tar\.xz\.part-/ {print $3}' "$CARRY/MANIFEST")
install_pack helion "$CARRY/helion.tar.xz"
if [ -n "$expected_parts" ]; then
  install_pack cute_dsl $(for p in $expected_parts; do echo "$CARRY/$p"; done)
fi

python3 - <<'EOF'
import importlib

for module in ("helion", "cutlass", "cutlass.cute", "cupy", "cuda.core", "numba.cuda", "triton", "torch"):
    try:
        mod = importlib.import_module(module)
        print(f"  {module:12s} {getattr(mod, '__version__', '?')}  {getattr(mod, '__file__', '')}")
    except Exception as exc:  # report every failure, keep going
        print(f"  {module:12s} NOT IMPORTABLE: {type(exc).__name__}: {str(exc)[:200]}")
EOF
exit $status
