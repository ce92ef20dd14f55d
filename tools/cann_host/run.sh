#!/usr/bin/env bash
# CANN's own host stack on this machine: op_build's generated aclnn for our three ops, opbase's
# individual-op executor (nnopbase), metadef (gert registry, exe_graph, OpDef) and CANN's platform
# library, compiled from the snapshots; only the closed runtime is stood in for
# (cann_runtime_standin.cpp, twin_device.cpp: our kernels run on the CPU twin from the argument
# buffer opbase packs). Run by `make npu-check` after tools/cann_op_build/run.sh:
#
#   CANN_OPBASE_DIR=<hicann/opbase> CANN_RUNTIME_DIR=<hicann/runtime> CANN_METADEF_DIR=<metadef>
#   ASC_DEVKIT_DIR=<asc-devkit> ASC_TOOLS_DIR=<asc-tools> tools/cann_host/run.sh
#
# Without them it says SKIPPED. Runs: the aclnn sample (examples/aclnn_sample/main.cpp,
# unchanged), the case table (cann_host_cases.cpp, each operator's cases in cases/) against our
# CPU aclnn layer, and three
# self-tests (a wrong OpDef dtype column, a NULL list, a 257-entry list; and a tiling key without
# a kernel). Prints the summary line; exits non-zero unless every case is as expected.
set -euo pipefail
cd "$(dirname "$0")/../.."
repo="$PWD"
# CANN_HOST_WORK, CANN_HOST_ARCH, CANN_HOST_CMAKE_ARGS: a cross build (build.sh); CANN_HOST_RUNNER
# runs its programs (qemu-aarch64 -L <root>).
work="${CANN_HOST_WORK:-$repo/build/cann_host}"
read -ra runner <<< "${CANN_HOST_RUNNER:-}"
say() { echo "cann-host: $*"; }

for v in CANN_OPBASE_DIR CANN_RUNTIME_DIR CANN_METADEF_DIR ASC_DEVKIT_DIR ASC_TOOLS_DIR; do
  if [[ -z "${!v:-}" ]]; then
    say "SKIPPED (set CANN_OPBASE_DIR, CANN_RUNTIME_DIR, CANN_METADEF_DIR, ASC_DEVKIT_DIR and" \
        "ASC_TOOLS_DIR to snapshots of hicann/opbase, hicann/runtime, hicann/metadef, asc-devkit and" \
        "asc-tools to run our ops through CANN's generated aclnn and opbase on the CPU)"
    exit 0
  fi
  [[ -d "${!v}" ]] || { echo "cann-host: $v=${!v} is not a directory" >&2; exit 1; }
done
for required in "$CANN_OPBASE_DIR/src/nnopbase/individual_op/executor/indv_executor.cpp" \
                "$CANN_RUNTIME_DIR/src/platform/platform_info.cpp" \
                "$CANN_RUNTIME_DIR/src/platform/platform_config/cann/Ascend910B2.ini"; do
  [[ -f "$required" ]] || { echo "cann-host: $required not found" >&2; exit 1; }
done

# The build and the cases, one run at a time in this checkout: a build beside running cases
# would lay the operator package out afresh under them (tools/common/cann_stack_lock.sh).
source tools/common/cann_stack_lock.sh; cann_stack_lock cann-host
start=$(date +%s)
tools/cann_host/build.sh
say "built in $(( $(date +%s) - start )) s (nnopbase, metadef, platform, generated aclnn, stand-ins;" \
    "cached in build/cann_host/)"

bin="$work/cmake"
cpu_lib="$bin/aea/runtime/acl/libascend_ema_adam_acl.so"
status=0
export ASCEND_GLOBAL_LOG_LEVEL="${ASCEND_GLOBAL_LOG_LEVEL:-3}"
export ASCEND_HOME_PATH="$work/ascend_home"  # scene.info and an empty built-in opp/ (build.sh)
export ASCEND_OPP_PATH="$ASCEND_HOME_PATH/opp"

# The sample, unchanged source, against CANN's host stack.
if (ASCEND_CUSTOM_OPP_PATH="$work/opp/aea" exec stdbuf -oL "${runner[@]}" "$bin/cann_host_sample" > "$work/sample.log" \
     2> "$work/sample.err") 2> /dev/null; then
  say "aclnn sample (examples/aclnn_sample/main.cpp, unchanged): all $(grep -c '^  \[ ok \]' "$work/sample.log")" \
      "checks passed through CANN's generated aclnn and opbase"
else
  grep -e '^[0-9]\.' -e 'FAIL' "$work/sample.log" | sed 's/^/  /'
  grep -e 'ascendc-twin' -e 'twin_device' "$work/sample.err" | sed 's/^/  /' | head -3
  say "FAILED: the aclnn sample through CANN's host stack, after $(grep -c '^  \[ ok \]' "$work/sample.log")" \
      "passed checks (logs: build/cann_host/sample.log, sample.err)"
  status=1
fi

# Self-tests: each must fail the way CANN would.
selftest() {  # name, opp dir, case filter, expected code (phase-1 status)
  local out
  out="$(ASCEND_CUSTOM_OPP_PATH="$2/aea" "${runner[@]}" "$bin/cann_host_cases" "$cpu_lib" --only "$3" --expect "$4" 2> /dev/null)" || true
  if grep -q "^cann-host: selftest ok" <<< "$out"; then
    say "self-test $1: $(grep '^cann-host: selftest ok' <<< "$out" | sed 's/^cann-host: selftest ok: //')"
  else
    echo "$out" | tail -5 | sed 's/^/  /'
    say "FAILED: self-test $1"
    status=1
  fi
}
selftest "wrong OpDef dtype column" "$work/opp_wrong_column" 'V1_gf32_pf32_sf32$' 561003
selftest "tiling key without a kernel (the runtime's 507027, reported by opbase as)" "$work/opp_missing_key" 'V1_gf32_pf32_sf32$' 361001
selftest "NULL list" "$work/opp" 'bad_V1_null-list$' 161001
selftest "257-entry list" "$work/opp" 'bad_V1_entries257$' 161002

# The case table.
# (CANN's own error log of the refusals goes to build/cann_host/cases.err)
ASCEND_CUSTOM_OPP_PATH="$work/opp/aea" "${runner[@]}" "$bin/cann_host_cases" "$cpu_lib" 2> "$work/cases.err" |
  tee "$work/cases.log" | grep -v "^cann-host: refused" || status=1
[[ ${PIPESTATUS[0]} -eq 0 ]] || status=1
exit $status
