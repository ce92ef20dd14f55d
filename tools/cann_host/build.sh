#!/usr/bin/env bash
# Builds CANN's host stack on the CPU (tools/cann_host/CMakeLists.txt) into build/cann_host/,
# then lays out the operator package opbase reads (gen_opp.py). Called by run.sh; cached: a
# second run rebuilds only what changed (ninja, header dependencies included).
#
#   CANN_OPBASE_DIR CANN_RUNTIME_DIR CANN_METADEF_DIR ASC_DEVKIT_DIR ASC_TOOLS_DIR: snapshots
#   JOBS (default 2): parallel compile jobs
#   CANN_HOST_WORK (default build/cann_host), CANN_HOST_ARCH (default x86_64) and
#   CANN_HOST_CMAKE_ARGS (words added to the configure): a cross build's (tools/aarch64/run.sh)
# Needs build/cann_op_build/out/ (tools/cann_op_build/run.sh: op_build's generated aclnn and ops-info).
set -euo pipefail
cd "$(dirname "$0")/../.."
repo="$PWD"

# ---- Paths to this repository's sources: the one place to re-point them (CMakeLists.txt has
# its own block for the sources it compiles). ---------------------------------------------------
host_dir="$repo/tools/cann_host"
op_build_out="$repo/build/cann_op_build/out"   # tools/cann_op_build/run.sh's output
work="${CANN_HOST_WORK:-$repo/build/cann_host}"
arch="${CANN_HOST_ARCH:-x86_64}"
read -ra cmake_extra <<< "${CANN_HOST_CMAKE_ARGS:-}"
staged="$work/project"                          # the sources as CANN's custom-op project has them
stage="$repo/op_host/common/cann/build.sh"      # ... laid out by its --stage
# ---------------------------------------------------------------------------------------------------

say() { echo "cann-host: $*"; }
die() { echo "cann-host: $*" >&2; exit 1; }

# op_build's ops-info, and its generated aclnn of every operator registration (each
# op_host/<op>/cann/<name>_def.cpp is CANN op <name>: aclnn_<name>.cpp).
needed=("$op_build_out/aic-ascend910b-ops-info.ini")
for def in "$repo"/op_host/*/cann/*_def.cpp; do
  needed+=("$op_build_out/aclnn_$(basename "$def" _def.cpp).cpp")
done
for f in "${needed[@]}"; do
  [[ -f "$f" ]] || die "FAILED: $f missing: tools/cann_op_build/run.sh runs first"
done

# One run of CANN's host stack at a time in this checkout (tools/common/cann_stack_lock.sh): run.sh
# holds it already.
source tools/common/cann_stack_lock.sh; cann_stack_lock cann-host

"$host_dir/prerequisites.sh" "$work"
# a cross build generates the protobuf sources with this machine's protoc (found only now: it may
# have just been installed)
[[ "$arch" == x86_64 ]] || cmake_extra+=("-DProtobuf_PROTOC_EXECUTABLE=$(command -v protoc)")

mkdir -p "$work"
# Staged afresh each run (timestamps kept: an unchanged source rebuilds nothing).
rm -rf "$staged"
"$stage" --stage "$staged" || die "FAILED: staging the sources ($stage --stage)"
# Configured every run (a second of work when cached): the paths are passed each time, so a moved
# tree or a changed option never leaves a stale cache behind.
cmake -S "$host_dir" -B "$work/cmake" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCANN_OPBASE_DIR="$CANN_OPBASE_DIR" -DCANN_METADEF_DIR="$CANN_METADEF_DIR" \
  -DCANN_RUNTIME_DIR="$CANN_RUNTIME_DIR" -DASC_DEVKIT_DIR="$ASC_DEVKIT_DIR" \
  -DAEA_REPO="$repo" -DAEA_OP_BUILD_OUT="$op_build_out" -DAEA_STAGED_DIR="$staged" "${cmake_extra[@]}" \
  > "$work/configure.log" 2>&1 ||
  { cat "$work/configure.log" >&2; die "FAILED: cmake configure (log: build/cann_host/configure.log)"; }
if ! ninja -C "$work/cmake" -j "${JOBS:-2}" > "$work/build.log" 2>&1; then
  grep -v -e "#pragma message" -e "^In file included from" -e "^ *from " -e "^ *[0-9]* | " -e "^ *| " \
    -e "note: " "$work/build.log" | grep -B2 -A3 -e "error" -e "undefined reference" | head -60 >&2
  die "FAILED: build (full log: build/cann_host/build.log)"
fi

# What opbase reads from a CANN install: ASCEND_HOME_PATH/share/info/opbase/scene.info (the
# package's OS and CPU, the op_tiling/lib/<os>/<cpu>/ directory of our tiling library).
# ASCEND_OPP_PATH is its opp/, empty: no built-in operators, ours come from the custom path.
mkdir -p "$work/ascend_home/share/info/opbase" "$work/ascend_home/opp/vendors"
printf 'os=linux\narch=%s\n' "$arch" > "$work/ascend_home/share/info/opbase/scene.info"

# The operator package: the normal one, and two broken ones for the self-tests of run.sh (cases of
# the list operator's table: its V1 fp32 launch).
gen() {
  python3 "$host_dir/gen_opp.py" --ini-dir "$1" --opp "$2/aea" --kernel-dir "$staged/op_kernel" \
    --tiling-lib "$work/cmake/libcust_opmaster_rt2.0.so" --asc-tools "$ASC_TOOLS_DIR" \
    --asc-devkit "$ASC_DEVKIT_DIR" --arch "$arch" "${@:3}" 2> "$work/gen_opp.log"
}
gen "$op_build_out" "$work/opp"
# A wrong dtype column in the OpDef: op_build's ops-info with the list ops' first column's grads
# dtype changed (float32 -> float16), as an OpDef with that typo would make op_build write it.
mkdir -p "$work/wrong_column"
python3 - "$op_build_out/aic-ascend910b-ops-info.ini" "$work/wrong_column/aic-ascend910b-ops-info.ini" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
def fix(m):
    cols = m.group(2).split(",")
    cols[0] = "float16" if cols[0] == "float32" else "float32"
    return m.group(1) + ",".join(cols)
out, n = re.subn(r"(\[ApplyFusedEmaAdamList\][^\[]*?input0\.dtype=)([^\n]*)", fix, text, count=1)
assert n == 1, "no [ApplyFusedEmaAdamList] input0.dtype in the ops-info"
open(sys.argv[2], "w").write(out)
PY
gen "$work/wrong_column" "$work/opp_wrong_column" > /dev/null
# A tiling key without a kernel: the fp32 list key dropped from every binary.
gen "$op_build_out" "$work/opp_missing_key" --drop-key 1000 > /dev/null
