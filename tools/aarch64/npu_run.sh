#!/usr/bin/env bash
# The real aarch64 torch_npu under qemu-aarch64: tools/torch_npu_run's case table, with every piece
# built for aarch64 here. Run by tools/aarch64/run.sh (which sets up the arm64 root, the row's
# aarch64 site and its emulated CPython) when the CANN snapshots are given (`make npu-check`'s
# CANN_OPBASE_DIR, CANN_RUNTIME_DIR, CANN_METADEF_DIR, ASC_DEVKIT_DIR, ASC_TOOLS_DIR), on op_build's
# output (build/cann_op_build/out, the same for every CPU: `make npu-check`'s, else run here first).
#
#   npu_run.sh <torch_npu version> <torch site> <emulated python>
#
# AARCH64_QEMU: the qemu-aarch64 to run under (run.sh gives Debian 13's, 10.0, for this step and
# the emulated python: Debian 12's 7.2 aborts a forked child of a threaded program when the child
# starts a thread, "cpu_exec: assertion failed: (cpu == current_cpu)", which every isolated case
# of the CANN host table does).
#
#  1. CANN's host stack (tools/cann_host: opbase, metadef, CANN's platform library, op_build's
#     generated aclnn, the stand-in runtime with our kernels on the twin) cross-built into
#     build/aarch64/cann_host, its aclnn sample and case table run under qemu (tools/cann_host/run.sh).
#  2. The aarch64 torch_npu wheel installed (--no-deps) into build/aarch64/site-torch_npu-<v>; the
#     stand-in CANN libraries it loads (tools/torch_npu_run/CMakeLists.txt) cross-built against it.
#  3. Our package cross-built with its NPU extension against that torch_npu (AEA_TORCH_NPU_ROOT, as
#     an Ascend user builds it), into build/aarch64/npu-package.
#  4. cases.py under the emulated CPython: our ops and FusedEmaAdamW on device="npu" tensors
#     bit-identical to the same calls on CPU tensors, TASK_QUEUE_ENABLE modes AARCH64_NPU_MODES
#     (default 0 2: queue off and the default queue; mode 1 costs another emulated process).
set -euo pipefail
cd "$(dirname "$0")/../.."
repo="$PWD"
npu="$1" site="$2" python="$3"
work="$repo/build/aarch64"
root="$work/root"
host_python="${HOST_PYTHON:-$repo/.venv/bin/python}"
jobs="${JOBS:-$(nproc)}"
modes="${AARCH64_NPU_MODES:-0 2}"
qemu="${AARCH64_QEMU:-qemu-aarch64}"
say() { echo "aarch64: $*"; }
die() { echo "aarch64: $*" >&2; exit 1; }
toolchain=(-DCMAKE_TOOLCHAIN_FILE="$repo/cmake/aarch64-linux-gnu.cmake" -DCMAKE_MAKE_PROGRAM="$repo/.venv/bin/ninja")
export AEA_AARCH64_SYSROOT="$root"
if [ ! -f "$repo/build/cann_op_build/out/aic-ascend910b-ops-info.ini" ]; then
    # op_build's output is the same for every CPU: made here as `make npu-check` makes it
    tools/cann_op_build/run.sh > "$work/cann_op_build.log" 2>&1 ||
        { tail -30 "$work/cann_op_build.log" >&2; die "NPU run: CANN's op_build failed (log: build/aarch64/cann_op_build.log)"; }
    say "CANN's op_build run first: $(tail -1 "$work/cann_op_build.log")"
fi

# The arm64 root's protobuf and nlohmann-json headers for the cross compiler, and nothing else of
# its /usr/include (the cross compiler has its own C library headers).
extra="$work/cann-include"
mkdir -p "$extra"
ln -sfn "$root/usr/include/google" "$extra/google"
ln -sfn "$root/usr/include/nlohmann" "$extra/nlohmann"

# ---- 1. CANN's host stack for aarch64 -----------------------------------------------------------
cann_host="$work/cann_host"
if ! CANN_HOST_WORK="$cann_host" CANN_HOST_ARCH=aarch64 CANN_HOST_RUNNER="$qemu -L $root" \
     CANN_HOST_CMAKE_ARGS="${toolchain[*]} -DCMAKE_CXX_FLAGS=-isystem$extra" \
     tools/cann_host/run.sh > "$work/cann_host.log" 2>&1; then
    tail -30 "$work/cann_host.log" >&2; die "NPU run: CANN's host stack for aarch64 failed (log: build/aarch64/cann_host.log)"
fi
say "CANN host stack under qemu-aarch64: $(grep -E '^cann-host: [0-9]+ cases' "$work/cann_host.log" | sed 's/^cann-host: //')"

# ---- 2. torch_npu and its stand-in CANN libraries -------------------------------------------------
npu_site="$work/site-torch_npu-$npu"
wheel="$(ls "$repo"/third_party/wheels/torch_npu-"$npu"/torch_npu-*aarch64.whl | head -1)"
if [ ! -f "$npu_site/.stamp" ]; then
    rm -rf "$npu_site"
    "$host_python" -m pip install --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
        --platform manylinux_2_28_aarch64 --platform manylinux2014_aarch64 --python-version 3.11 \
        --implementation cp --target "$npu_site" "$wheel" pyyaml > "$work/npu-site.log" 2>&1 ||
        { tail "$work/npu-site.log" >&2; die "NPU run: installing $wheel for aarch64"; }
    touch "$npu_site/.stamp"
fi
export PYTHONPATH="$npu_site:$site"
export TORCH_DEVICE_BACKEND_AUTOLOAD=0  # until the stand-ins are on the library path (cases.py loads it)
libs="$work/torch_npu/cann"
cmake -S tools/torch_npu_run -B "$libs" -G Ninja -DCMAKE_BUILD_TYPE=Release "${toolchain[@]}" \
    -DCMAKE_CXX_FLAGS="-isystem $work/python-include" \
    -DTORCH_NPU_DIR="$npu_site/torch_npu" -DTORCH_LIB_DIR="$site/torch/lib" -DTORCH_PYTHON="$python" \
    -DCANN_HOST_BUILD="$cann_host/cmake" -DCANN_OPBASE_DIR="$CANN_OPBASE_DIR" \
    -DCANN_RUNTIME_DIR="$CANN_RUNTIME_DIR" -DCANN_METADEF_DIR="$CANN_METADEF_DIR" \
    -DPYTHON_EXECUTABLE="$(command -v python3)" > "$work/npu-standins-configure.log" 2>&1 ||
    { tail -20 "$work/npu-standins-configure.log" >&2; die "NPU run: configuring the stand-ins"; }
ninja -C "$libs" > "$work/npu-standins.log" 2>&1 ||
    { grep -A5 -e error -e FAILED "$work/npu-standins.log" | head -30 >&2; die "NPU run: building the stand-ins"; }
say "stand-in CANN libraries for aarch64: $(cat "$libs/gen/summary.txt")"

# CANN's layout (as tools/torch_npu_run/run.sh lays it out), for an aarch64 host.
home="$work/torch_npu/ascend_home"
mkdir -p "$home/runtime" "$home/compiler" "$home/opp/vendors" "$home/share/info/opbase"
printf 'os=linux\narch=aarch64\n' > "$home/share/info/opbase/scene.info"
opp="$work/torch_npu/opp/aea"
faulty="$work/torch_npu/opp_faulty/aea"
rm -rf "$work/torch_npu/opp" "$work/torch_npu/opp_faulty"
mkdir -p "$opp/op_api/lib" "$faulty/op_api/lib"
ln -s "$cann_host/opp/aea/op_impl" "$opp/op_impl"
ln -s "$cann_host/opp/aea/op_impl" "$faulty/op_impl"
cp "$cann_host/cmake/libcust_opapi.so" "$opp/op_api/lib/"
cp "$libs/faulty/libcust_opapi.so" "$faulty/op_api/lib/"
export ASCEND_HOME_PATH="$home" ASCEND_OPP_PATH="$home/opp" ASCEND_CUSTOM_OPP_PATH="$opp"
export ASCEND_GLOBAL_LOG_LEVEL="${ASCEND_GLOBAL_LOG_LEVEL:-3}"

# ---- 3. our package with its NPU extension ---------------------------------------------------------
build="$work/npu-package"
prefix="$work/npu-prefix"
cmake -S "$repo" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release "${toolchain[@]}" \
    -DAEA_BUILD_PYTHON=ON -DAEA_BUILD_TESTS=OFF -DPython_EXECUTABLE="$python" \
    -DPython_INCLUDE_DIR="$root/usr/include/python3.11" -DCMAKE_CXX_FLAGS="-isystem $work/python-include" \
    -DPython_SOABI=cpython-311-aarch64-linux-gnu -Dpybind11_DIR="$("$host_python" -m pybind11 --cmakedir)" \
    -DAEA_TORCH_NPU_ROOT="$npu_site/torch_npu" > "$work/npu-package-configure.log" 2>&1 ||
    { tail -20 "$work/npu-package-configure.log" >&2; die "NPU run: configuring the package with its NPU extension"; }
PATH="$repo/.venv/bin:$PATH" cmake --build "$build" -j "$jobs" > "$work/npu-package.log" 2>&1 ||
    { grep -B2 -A8 error "$work/npu-package.log" | head -40 >&2; die "NPU run: building the package with its NPU extension"; }
rm -rf "$prefix"
cmake --install "$build" --prefix "$prefix" > /dev/null
(cd "$repo" && find ascend_ema_adam -name '*.py' -exec cp --parents {} "$prefix" \;)

# ---- 4. the case table under qemu ------------------------------------------------------------------
export LD_LIBRARY_PATH="$libs:$cann_host/cmake"
export PYTHONPATH="$prefix:$npu_site:$site"
unset TORCH_DEVICE_BACKEND_AUTOLOAD
read -ra mode_list <<< "$modes"
(cd "$work/torch_npu" && AEA_TORCH_NPU_VERSION="$npu" "$python" "$repo/tools/torch_npu_run/cases.py" \
    --modes "${mode_list[@]}" --faulty-opp "$faulty" 2> "$work/npu-cases.err") | tee "$work/npu-cases.log"
exit "${PIPESTATUS[0]}"
