# Shared by the scripts/h200_*_session.sh scripts (sourced, not run): one device call, several steps, each
# with its own time limit so a slow step cannot take the others down.
#
#     . scripts/device_steps.sh
#     session_start "$OUT/name"        # W=the folder; writes W/machine.txt (date, GPU, driver, versions, cores)
#     step NAME SECONDS COMMAND...     # W/NAME.log, and "NAME: exit S after T s" in W/steps.txt

session_start() {
  W=$1
  mkdir -p "$W"
  export PYTHONPATH="$PWD/src" PYTHONUNBUFFERED=1
  { date -u +%FT%TZ; git rev-parse HEAD 2>/dev/null
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
    python3 -c "import torch, triton, sys; print(sys.version.split()[0], torch.__version__, torch.version.cuda, triton.__version__)"
    nproc; lscpu 2>/dev/null | grep -E "^(Model name|Thread|Core|Socket|NUMA)"; } >"$W/machine.txt" 2>&1
}

step() {  # step NAME SECONDS COMMAND...
  local name=$1 limit=$2
  shift 2
  local started=$SECONDS
  timeout --kill-after=10 "$limit" "$@" >"$W/$name.log" 2>&1
  echo "$name: exit $? after $((SECONDS - started)) s" | tee -a "$W/steps.txt"
}
