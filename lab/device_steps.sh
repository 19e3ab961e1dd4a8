# Shared by the lab/h200_*session.sh scripts (sourced, not run): one device call, several steps, each
# with its own time limit so a slow step cannot take the others down.
#
#     . lab/device_steps.sh
#     session_start "$OUT/name"        # W=the folder; writes W/machine.txt (date, GPU, driver, versions, cores)
#     step NAME SECONDS COMMAND...     # W/NAME.log, and "NAME: exit S after T s" in W/steps.txt
#
# A step runs through lab/run_step.py: in a process group of its own, ended at its limit, and when it is over
# every process it started (its group, and descendants that left it) is ended by id, so nothing a cut-short
# step left behind holds the GPU during the next one. No process is matched by name.
# The scripts import the installed package: session_start installs this tree (editable, no dependencies)
# where `import kerneljudge` fails, as on a bare device machine.

LAB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

session_start() {
  W=$1
  mkdir -p "$W"
  export PYTHONUNBUFFERED=1
  if ! python3 -c "import kerneljudge" >/dev/null 2>&1; then
    python3 -m pip install -q --no-deps --no-build-isolation -e . >"$W/install.log" 2>&1 \
      || { echo "session_start: installing kerneljudge failed (see $W/install.log); using PYTHONPATH=src" >&2
           export PYTHONPATH="$PWD/src"; }
  fi
  { date -u +%FT%TZ; git rev-parse HEAD 2>/dev/null
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
    python3 -c "import torch, triton, sys; print(sys.version.split()[0], torch.__version__, torch.version.cuda, triton.__version__)"
    nproc; lscpu 2>/dev/null | grep -E "^(Model name|Thread|Core|Socket|NUMA)"; } >"$W/machine.txt" 2>&1
}

step() {  # step NAME SECONDS COMMAND...
  local name=$1 limit=$2
  shift 2
  local started=$SECONDS
  python3 "$LAB_DIR/run_step.py" --limit "$limit" --grace 10 --log "$W/$name.log" -- "$@"
  echo "$name: exit $? after $((SECONDS - started)) s" | tee -a "$W/steps.txt"
}
