# Sourced (not run) by the scripts that build or run CANN's host stack of a checkout:
# tools/cann_op_build/run.sh and tools/cann_host/build.sh write build/cann_op_build/ and
# build/cann_host/ (gen_opp.py lays the operator package out afresh on every build), and
# tools/cann_host/run.sh and tools/torch_npu_run/run.sh load kernels and tiling libraries from
# there while their cases run. A build beside a running case table removed the package under it:
# torch_npu's task queue then stops the process (SIGABRT). So each of them holds this lock, one at
# a time per checkout, for as long as it runs; a second run waits, saying so.
#
#   source tools/common/cann_stack_lock.sh; cann_stack_lock "<prefix for the waiting line>"
#
# A script called by one that holds the lock (run.sh -> build.sh) finds AEA_CANN_STACK_LOCK set
# and goes on: it shares its caller's lock, which the inherited descriptor keeps.

cann_stack_lock() {
  local lock
  lock="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/build/.cann_stack.lock"
  [[ "${AEA_CANN_STACK_LOCK:-}" == "$lock" ]] && return 0
  command -v flock > /dev/null || { echo "$1: flock (util-linux) is needed" >&2; exit 1; }
  mkdir -p "$(dirname "$lock")"
  exec {AEA_CANN_STACK_LOCK_FD}> "$lock"
  if ! flock -n "$AEA_CANN_STACK_LOCK_FD"; then
    echo "$1: waiting for another run of CANN's host stack in this checkout (build/cann_host/)"
    flock "$AEA_CANN_STACK_LOCK_FD"
  fi
  export AEA_CANN_STACK_LOCK="$lock"
}
