#!/usr/bin/env bash
# The real torch_npu on this machine: the torch_npu 2.13.0 wheel, installed with --no-deps into a
# venv of its own (build/torch_npu/venv; never the main .venv), imports and runs with stand-in CANN
# libraries on LD_LIBRARY_PATH; our package is built there with its NPU extension (as an Ascend
# user builds it, README), our operator package is laid out where op-plugin finds custom ops, and
# cases.py runs our ops and FusedEmaAdamW on device="npu" tensors against the same calls on CPU
# tensors, in TASK_QUEUE_ENABLE = 0, 1 and 2. Run by `make npu-check` after tools/cann_host/run.sh:
#
#   CANN_OPBASE_DIR CANN_RUNTIME_DIR CANN_METADEF_DIR ASC_DEVKIT_DIR ASC_TOOLS_DIR: snapshots
#
# `make compat` runs it for each row of the supported-versions table (tools/compat/compat.py) with
#   TORCH_NPU_WHEEL        the row's torch_npu x86_64 wheel (default: third_party/wheels' 2.13.0)
#   TORCH_NPU_VERSION      its version (default 2.13.0)
#   TORCH_NPU_WORK         the work folder (default build/torch_npu)
#   TORCH_NPU_BASE_PYTHON  a venv's python whose packages (the row's torch, the build tools) the
#                          run's venv sees through a .pth file, instead of requirements.txt's
#   TORCH_NPU_TORCH_WHEEL  a torch wheel for the run's venv alone, in front of the base venv's
#                          (torch's CPU build: torch_npu's README asks for it on x86_64)
#
# Without them it says SKIPPED. What is whose:
#   real     torch 2.13.0, torch_npu 2.13.0 and its op-plugin (the wheel), op_build's generated
#            aclnn, opbase's nnopbase, metadef, CANN's platform library (tools/cann_host's build)
#   ours     the extension (csrc/, built against the wheel), the kernels on the twin
#   stood in libascendcl.so (tools/cann_host/cann_runtime_standin.cpp: host memory, streams in
#            order, the twin launch), libacl_op_compiler.so and libhccl.so (standins/), CANN's
#            built-in operators the optimizer's device code reaches (libopapi.so,
#            standins/builtin_ops.cpp), and every other CANN symbol the wheel links against as
#            a stub that aborts naming itself (gen_cann_absent.py)
# Logs: build/torch_npu/*.log. Prints the summary line; exits non-zero unless every case is as
# expected.
set -euo pipefail
cd "$(dirname "$0")/../.."
repo="$PWD"
npu_version="${TORCH_NPU_VERSION:-2.13.0}"
work="${TORCH_NPU_WORK:-$repo/build/torch_npu}"
base_python="${TORCH_NPU_BASE_PYTHON:-}"
say() { echo "torch-npu: $*"; }
die() { echo "torch-npu: $*" >&2; exit 1; }

for v in CANN_OPBASE_DIR CANN_RUNTIME_DIR CANN_METADEF_DIR ASC_DEVKIT_DIR ASC_TOOLS_DIR; do
  if [[ -z "${!v:-}" ]]; then
    say "SKIPPED (set CANN_OPBASE_DIR, CANN_RUNTIME_DIR, CANN_METADEF_DIR, ASC_DEVKIT_DIR and" \
        "ASC_TOOLS_DIR to snapshots of hicann/opbase, hicann/runtime, hicann/metadef, asc-devkit and" \
        "asc-tools to run the extension inside the real torch_npu $npu_version)"
    exit 0
  fi
done
# Our operator package comes from build/cann_host/: no build of it while the cases run
# (tools/common/cann_stack_lock.sh; a package laid out afresh under torch_npu stops the process).
source tools/common/cann_stack_lock.sh; cann_stack_lock torch-npu
cann_host="$repo/build/cann_host"
[[ -f "$cann_host/cmake/libcust_opapi.so" && -f "$cann_host/cmake/libascendcl.so" ]] ||
  die "FAILED: CANN's host stack is not built: tools/cann_host/run.sh runs first"
wheel="${TORCH_NPU_WHEEL:-$(ls "$repo"/third_party/wheels/torch_npu-2.13.0-*x86_64.whl 2> /dev/null | head -1)}"
[[ -n "$wheel" && -f "$wheel" ]] ||
  die "FAILED: no torch_npu $npu_version x86_64 wheel (make third_party/torch_npu, or TORCH_NPU_WHEEL)"
start=$(date +%s)
mkdir -p "$work"

# ---- the venv: torch and torch_npu (--no-deps), once. With TORCH_NPU_BASE_PYTHON its packages
# come from that venv (a .pth file naming its site-packages: torch_npu never enters that venv,
# where it would make `import torch` need CANN), else from requirements.txt. -----------------------
venv="$work/venv"
py="$venv/bin/python"
stamp="$venv/.stamp"
base_site=""
[[ -z "$base_python" ]] ||
  base_site="$("$base_python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
torch_wheel="${TORCH_NPU_TORCH_WHEEL:-}"
if [[ ! -f "$stamp" || "$(cat "$stamp")" != "$wheel $base_site $torch_wheel" ||
      ( -z "$base_site" && tools/torch_npu_run/requirements.txt -nt "$stamp" ) ]]; then
  rm -rf "$venv"
  "${base_python:-python3}" -m venv "$venv"
  if [[ -n "$base_site" ]]; then
    echo "$base_site" > "$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/base_venv.pth"
  else
    "$py" -m pip install --quiet --disable-pip-version-check -r tools/torch_npu_run/requirements.txt \
      > "$work/venv.log" 2>&1 || { tail "$work/venv.log" >&2; die "FAILED: the venv's requirements"; }
  fi
  "$py" -m pip install --quiet --disable-pip-version-check --no-deps "$wheel" $torch_wheel \
    >> "$work/venv.log" 2>&1 || { tail "$work/venv.log" >&2; die "FAILED: installing $wheel $torch_wheel"; }
  echo "$wheel $base_site $torch_wheel" > "$stamp"
fi
site="$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
torch_npu_dir="$site/torch_npu"
# torch itself: in this venv, or in the base venv (found without importing it: an import would
# load torch_npu through torch's device-backend autoload before the stand-ins are in place)
torch_dir="$("$py" -c 'import importlib.util as u; print(u.find_spec("torch").submodule_search_locations[0])')"

# ---- the stand-in CANN libraries (CMakeLists.txt) ------------------------------------------------
libs="$work/cann"
# (the configure asks torch for its headers: without torch_npu's autoload, which needs the stand-ins)
TORCH_DEVICE_BACKEND_AUTOLOAD=0 cmake -S tools/torch_npu_run -B "$libs" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DTORCH_NPU_DIR="$torch_npu_dir" -DTORCH_LIB_DIR="$torch_dir/lib" \
  -DTORCH_PYTHON="$py" -DCANN_HOST_BUILD="$cann_host/cmake" \
  -DCANN_OPBASE_DIR="$CANN_OPBASE_DIR" -DCANN_RUNTIME_DIR="$CANN_RUNTIME_DIR" \
  -DCANN_METADEF_DIR="$CANN_METADEF_DIR" -DPYTHON_EXECUTABLE="$(command -v python3)" \
  > "$work/configure.log" 2>&1 || { tail -20 "$work/configure.log" >&2; die "FAILED: configuring the stand-ins"; }
ninja -C "$libs" > "$work/standins.log" 2>&1 ||
  { grep -A5 -e error -e FAILED "$work/standins.log" | head -30 >&2; die "FAILED: building the stand-ins"; }
for lib in $(cat "$libs/gen/cann_libraries.txt"); do
  [[ -f "$libs/$lib" || -f "$cann_host/cmake/$lib" ]] || die "FAILED: the wheel needs $lib and nothing stands in for it"
done
say "stand-ins: $(cat "$libs/gen/summary.txt")"

# ---- CANN's layout: ASCEND_HOME_PATH (torch_npu checks runtime/ and compiler/; opbase reads
# share/info/opbase/scene.info) and our operator package where op-plugin looks for a custom one:
# <ASCEND_CUSTOM_OPP_PATH>/op_api/lib/libcust_opapi.so, beside the kernels and tiling library
# nnopbase reads (tools/cann_host's opp tree).
home="$work/ascend_home"
mkdir -p "$home/runtime" "$home/compiler" "$home/opp/vendors" "$home/share/info/opbase"
printf 'os=linux\narch=x86_64\n' > "$home/share/info/opbase/scene.info"
opp="$work/opp/aea"
rm -rf "$work/opp"
mkdir -p "$opp/op_api/lib"
ln -s "$cann_host/opp/aea/op_impl" "$opp/op_impl"
cp "$cann_host/cmake/libcust_opapi.so" "$opp/op_api/lib/"  # op-plugin: owned by this user or root
# The fault injector's package (cases.py's failed address update): the same kernels, its library.
faulty="$work/opp_faulty/aea"
rm -rf "$work/opp_faulty"
mkdir -p "$faulty/op_api/lib"
ln -s "$cann_host/opp/aea/op_impl" "$faulty/op_impl"
cp "$libs/faulty/libcust_opapi.so" "$faulty/op_api/lib/"
export ASCEND_HOME_PATH="$home" ASCEND_OPP_PATH="$home/opp" ASCEND_CUSTOM_OPP_PATH="$opp"
export LD_LIBRARY_PATH="$libs:$cann_host/cmake${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export ASCEND_GLOBAL_LOG_LEVEL="${ASCEND_GLOBAL_LOG_LEVEL:-3}"

# ---- our package with its NPU extension, built as an Ascend user builds it (README) ---------------
if ! TORCH_DEVICE_BACKEND_AUTOLOAD=0 "$py" -m pip install --no-build-isolation --no-deps --disable-pip-version-check \
     --config-settings=build-dir="$work/package" \
     --config-settings=cmake.define.AEA_TORCH_NPU_ROOT="$torch_npu_dir" . \
     > "$work/package.log" 2>&1; then
  grep -B2 -A8 -e "error" "$work/package.log" | head -40 >&2
  die "FAILED: building ascend_ema_adam with its NPU extension (log: $work/package.log)"
fi
say "built in $(( $(date +%s) - start )) s (venv, stand-ins, ascend_ema_adam with its NPU extension;" \
    "cached in ${work#"$repo/"}/)"

# ---- the cases, in each task-queue mode (a fresh process each: torch_npu reads it at import) ----
(cd "$work" && AEA_TORCH_NPU_VERSION="$npu_version" "$py" "$repo/tools/torch_npu_run/cases.py" \
  --modes 0 1 2 --faulty-opp "$faulty" \
  2> "$work/cases.err") |
  tee "$work/cases.log"
exit "${PIPESTATUS[0]}"
