#!/usr/bin/env bash
# `make aarch64-check`: the package for the aarch64 hosts of Atlas A2/A3 (Kunpeng 920), cross-built
# here and run under qemu-user, no binfmt registration (docs/AARCH64.md).
#
#  1. Tools from Debian (installed when missing: g++-aarch64-linux-gnu (GCC 12),
#     g++-11-aarch64-linux-gnu (GCC 11, the oldest cross GCC Debian offers), qemu-user, mmdebstrap,
#     proot) and a Debian arm64 root with CPython 3.11 (build/aarch64/root: extracted, nothing run).
#  2. Per torch row (AARCH64_TORCH, default 2.7.1: PyPI's aarch64 wheel of the oldest row, a CPU
#     build; the newer rows' aarch64 wheels are CUDA 13 builds that do not import without 2.9 GB of
#     aarch64 nvidia-* wheels, so each says SKIPPED unless named here): the wheels installed for
#     aarch64 into build/aarch64/site-<torch>; the whole CMake project (C libraries, _kernels, _C,
#     the C++ tests) cross-built with cmake/aarch64-linux-gnu.cmake into build/aarch64/gcc<N>-torch-<v>,
#     configured as `pip install --no-build-isolation .` configures it (AEA_BUILD_PYTHON=ON, Release)
#     with the emulated CPython as Python_EXECUTABLE; installed into build/aarch64/prefix-<v>
#     (the package as a wheel lays it out: ascend_ema_adam/lib/libascend_ema_adam_acl.so and
#     ascend_ema_adam/include/ for C/C++ users, the extension modules and the Python sources).
#  3. Under qemu-aarch64: ctest, the C aclnn sample (examples/aclnn_sample, built against that
#     prefix), the Python subset (PYTHON_SUBSET below) and tools/aarch64/digest.py, whose every case
#     must print the digest the same script prints on this x86 machine.
#  4. The NPU extension: its sources compiled for aarch64 against the aarch64 torch_npu wheels
#     (AARCH64_TORCH_NPU: 2.7.1.post11 and 2.13.0) and the ABI check on those objects.
#  5. With the CANN snapshots of `make npu-check`: the aarch64 torch_npu (AARCH64_NPU_RUN,
#     2.7.1.post11) running the torch-npu case table under qemu (tools/aarch64/npu_run.sh).
#  6. GCC 11 (AARCH64_OLDEST_GCC): the same build and ctest with the oldest supported compiler.
#  7. GCC 13 (AARCH64_NEWEST_GCC), the first with _Float16 in C++ on aarch64, from a Debian 13 root:
#     the C libraries and the C++ tests, ctest under qemu.
#
# Prints one line: `aarch64: ctest N/N, M Python tests passed under qemu-aarch64 (torch X, GCC Y),
# native backend neon`, then the digest and GCC 11 lines; SKIPPED (why) for a missing piece. Exits
# non-zero on any failure. Logs: build/aarch64/*.log.
set -euo pipefail
cd "$(dirname "$0")/../.."
repo="$PWD"
work="$repo/build/aarch64"
host_python="${HOST_PYTHON:-$repo/.venv/bin/python}"
torch_rows="${AARCH64_TORCH:-2.7.1}"
oldest_gcc="${AARCH64_OLDEST_GCC:-11}"
jobs="${JOBS:-$(nproc)}"
root="$work/root"
mkdir -p "$work" "$repo/third_party/wheels"
say() { echo "aarch64: $*"; }
die() { echo "aarch64: $*" >&2; exit 1; }
timed() {  # timed LOG CMD...: runs CMD with its output in LOG, says how long it took on failure
    local log="$1"; shift
    local t0=$SECONDS
    if ! "$@" > "$log" 2>&1; then
        tail -40 "$log" >&2
        die "failed after $((SECONDS - t0)) s: $* (log: ${log#"$repo"/})"
    fi
}

# The Python subset run under emulation (the whole suite emulated takes hours): golden compares of
# every operator (golden, twin kernels, native kernels of every instruction set), the torch ops,
# FusedEmaAdamW with fp32 and 8-bit state, checkpoints.
PYTHON_SUBSET=(
    tests/python/golden/test_golden.py
    tests/python/native/test_apply_fused_ema_adam_native.py
    tests/python/native/test_apply_fused_ema_adam_list_native.py
    tests/python/native/test_apply_fused_ema_adam8bit_list_native.py
    tests/python/kernel/test_apply_fused_ema_adam8bit_list_kernel.py
    tests/python/ops/test_ops.py
    tests/python/ops/test_apply_fused_ema_adam8bit_list_op.py
    tests/python/optim/test_optim.py
    tests/python/optim/test_optim_8bit.py
    tests/python/optim/test_optim_checkpoint_compat.py
)

# ---- 1. tools and the arm64 root ---------------------------------------------------------------
need=()
for tool in aarch64-linux-gnu-g++:g++-aarch64-linux-gnu aarch64-linux-gnu-g++-"$oldest_gcc":g++-"$oldest_gcc"-aarch64-linux-gnu \
            qemu-aarch64:qemu-user mmdebstrap:mmdebstrap proot:proot; do
    command -v "${tool%%:*}" > /dev/null || need+=("${tool#*:}")
done
if [ ${#need[@]} -gt 0 ]; then
    say "installing ${need[*]} (apt-get)"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}"; } \
        > "$work/apt.log" 2>&1 || die "apt-get install ${need[*]} failed (log: build/aarch64/apt.log)"
fi
# (protobuf and nlohmann-json: CANN's host stack cross-built for the NPU run, npu_run.sh)
root_packages=python3.11,python3.11-dev,libpython3.11-dev,libstdc++6,libgomp1,libprotobuf-dev,nlohmann-json3-dev
if [ "$(cat "$root/.packages" 2> /dev/null)" != "$root_packages" ]; then
    rm -rf "$root"
    timed "$work/root.log" mmdebstrap --variant=extract --architectures=arm64 --include="$root_packages" \
        bookworm "$root"
    echo "$root_packages" > "$root/.packages"
fi
gcc_version() { "aarch64-linux-gnu-g++$1" -dumpfullversion; }

# An emulated CPython: proot binds an aarch64 /proc/cpuinfo (torch reads it and crashes on the x86
# host's) and runs every aarch64 program it starts under qemu too; the host's file system stays.
emulated_python() {  # emulated_python SITE [QEMU]: writes build/aarch64/python-[qemu-]<site>, echoes its path
    local site="$1" qemu="${2:-qemu-aarch64}" wrapper="$work/python-${2:+qemu-}$(basename "$1")"
    cat > "$wrapper" << EOF
#!/usr/bin/env bash
export PYTHONPATH="$site\${PYTHONPATH:+:\$PYTHONPATH}" PYTHONDONTWRITEBYTECODE=1
exec proot -q "$qemu -L $root" -b "$repo/tools/aarch64/cpuinfo:/proc/cpuinfo" "$root/usr/bin/python3.11" "\$@"
EOF
    chmod +x "$wrapper"
    echo "$wrapper"
}

# ---- the x86 digests (the reference of step 3) -----------------------------------------------------------
timed "$work/digest-x86.log" "$host_python" tools/aarch64/digest.py
cp "$work/digest-x86.log" "$work/digest-x86.txt"
! grep -q MISMATCH "$work/digest-x86.txt" || die "the x86 instruction sets disagree (build/aarch64/digest-x86.txt)"

cross_build() {  # cross_build GCC_SUFFIX PYTHON BUILD_DIR LOG (PYTHON: the torch row's emulated one)
    local suffix="$1" python="$2" dir="$3" log="$4" pybind11_dir
    pybind11_dir="$("$host_python" -m pybind11 --cmakedir)"
    # Debian's pyconfig.h includes its multiarch half, <aarch64-linux-gnu/python3.11/pyconfig.h>:
    # that folder alone, not the root's other multiarch headers (the cross compiler has its own).
    mkdir -p "$work/python-include/aarch64-linux-gnu"
    ln -sfn "$root/usr/include/aarch64-linux-gnu/python3.11" "$work/python-include/aarch64-linux-gnu/python3.11"
    AEA_AARCH64_GCC="${suffix#-}" AEA_AARCH64_SYSROOT="$root" timed "$log" \
        cmake -S "$repo" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release \
            -DCMAKE_TOOLCHAIN_FILE="$repo/cmake/aarch64-linux-gnu.cmake" \
            -DAEA_BUILD_PYTHON=ON -DAEA_BUILD_TESTS=ON -DPython_EXECUTABLE="$python" \
            -DPython_INCLUDE_DIR="$root/usr/include/python3.11" \
            -DCMAKE_CXX_FLAGS="-isystem $work/python-include" \
            -DPython_SOABI=cpython-311-aarch64-linux-gnu -Dpybind11_DIR="$pybind11_dir" \
            -DCMAKE_MAKE_PROGRAM="$repo/.venv/bin/ninja"
    PATH="$repo/.venv/bin:$PATH" AEA_AARCH64_GCC="${suffix#-}" AEA_AARCH64_SYSROOT="$root" \
        timed "${log%.log}-build.log" cmake --build "$dir" -j "$jobs"
}

run_ctest() {  # run_ctest BUILD_DIR LOG: echoes "passed/total"
    local dir="$1" log="$2"
    AEA_AARCH64_SYSROOT="$root" ctest --test-dir "$dir" -j "$jobs" --output-on-failure > "$log" 2>&1 || {
        tail -40 "$log" >&2; die "ctest failed in ${dir#"$repo"/} (log: ${log#"$repo"/})"; }
    sed -nE 's/.*tests passed, 0 tests failed out of ([0-9]+).*/\1\/\1/p' "$log"
}

status=0
for torch in $torch_rows; do
    site="$work/site-torch-$torch"
    # ---- 2. the row's wheels for aarch64 --------------------------------------------------------
    wanted="torch==$torch $(sha256sum tools/aarch64/requirements.txt | cut -c1-16)"
    if [ "$(cat "$site/.stamp" 2> /dev/null)" != "$wanted" ]; then
        rm -rf "$site"
        # --no-deps with the dependencies named: pip evaluates the wheels' markers for this x86
        # machine, not for --platform (it would ask for torch's x86-only CUDA wheels).
        timed "$work/site-$torch.log" "$host_python" -m pip install --quiet --disable-pip-version-check \
            --no-deps --only-binary=:all: --platform manylinux_2_28_aarch64 --platform manylinux2014_aarch64 \
            --python-version 3.11 --implementation cp --target "$site" \
            "torch==$torch" -r tools/aarch64/requirements.txt
        if ! grep -q '^Version: .*' "$site"/torch-*.dist-info/METADATA || \
           grep -q '^Requires-Dist: cuda-toolkit\|^Requires-Dist: nvidia-.*aarch64' "$site"/torch-*.dist-info/METADATA; then
            say "torch $torch SKIPPED (its aarch64 wheel is a CUDA build: it imports only with the aarch64 nvidia-* wheels)"
            rm -rf "$site"; continue
        fi
        echo "$wanted" > "$site/.stamp"
    fi
    python="$(emulated_python "$site")"
    gcc="$(gcc_version "")"
    build="$work/gcc${gcc%%.*}-torch-$torch"
    prefix="$work/prefix-torch-$torch"
    cross_build "" "$python" "$build" "$work/configure-$torch.log"
    rm -rf "$prefix"
    timed "$work/install-$torch.log" cmake --install "$build" --prefix "$prefix"
    # The Python package as a wheel lays it out: the sources beside the built modules, the C
    # library and headers (ascend_ema_adam/lib, ascend_ema_adam/include) where get_library() and
    # get_include() find them.
    (cd "$repo" && find ascend_ema_adam -name '*.py' -exec cp --parents {} "$prefix" \;)

    # ---- 3. under qemu ------------------------------------------------------------------------
    tests="$(run_ctest "$build" "$work/ctest-$torch.log")"
    sample="$work/sample-torch-$torch"
    AEA_AARCH64_SYSROOT="$root" timed "$work/sample-$torch.log" cmake -S examples/aclnn_sample -B "$sample" -G Ninja \
        -DCMAKE_TOOLCHAIN_FILE="$repo/cmake/aarch64-linux-gnu.cmake" -DCMAKE_MAKE_PROGRAM="$repo/.venv/bin/ninja" \
        -DAEA_INCLUDE_DIR="$prefix/ascend_ema_adam/include" \
        -DAEA_LIBRARY="$prefix/ascend_ema_adam/lib/libascend_ema_adam_acl.so"
    timed "$work/sample-$torch-build.log" cmake --build "$sample"
    timed "$work/sample-$torch-run.log" qemu-aarch64 -L "$root" "$sample/aclnn_apply_fused_ema_adam_sample"
    # (from build/aarch64: the checkout's own ascend_ema_adam/, without modules, is not on the path)
    backend="$(cd "$work" && PYTHONPATH="$prefix" "$python" -c \
        'from ascend_ema_adam import kernels; print(kernels.cpu_kernel()["isa"])' 2> "$work/python-$torch.log")" || {
        cat "$work/python-$torch.log" >&2; die "the package does not import under qemu"; }
    (cd "$work" && PYTHONPATH="$prefix" AEA_CPP_BIN="$build/bin" OMP_WAIT_POLICY=PASSIVE \
        "$python" -m pytest -q -p no:cacheprovider -n "$jobs" --dist loadfile "${PYTHON_SUBSET[@]/#/$repo/}") > "$work/pytest-$torch.log" 2>&1 || {
        tail -40 "$work/pytest-$torch.log" >&2; die "the Python subset failed (log: build/aarch64/pytest-$torch.log)"; }
    passed="$(sed -nE 's/^([0-9]+) passed.*/\1/p; s/^=+ ([0-9]+) passed.*/\1/p' "$work/pytest-$torch.log" | tail -1)"
    if grep -qE '[0-9]+ (failed|error)' "$work/pytest-$torch.log"; then die "pytest reported failures"; fi
    (cd "$work" && PYTHONPATH="$prefix" timed "$work/digest-aarch64-$torch.log" "$python" "$repo/tools/aarch64/digest.py")
    say "ctest $tests, $passed Python tests passed under qemu-aarch64 (torch $torch, GCC $gcc), native backend $backend"
    if diff <(cut -d' ' -f1,2 "$work/digest-x86.txt") <(cut -d' ' -f1,2 "$work/digest-aarch64-$torch.log") > "$work/digest-$torch.diff"; then
        say "digest: $(wc -l < "$work/digest-x86.txt") cases bit-identical to x86 (tools/aarch64/digest.py, torch $torch)"
    else
        cat "$work/digest-$torch.diff" >&2; say "digest: FAILED, cases differ from x86 (build/aarch64/digest-$torch.diff)"; status=1
    fi
    last_python="$python"; last_torch="$torch"
done
[ -n "${last_python:-}" ] || die "no torch row could run"

# ---- 4. the NPU extension for aarch64 ---------------------------------------------------------------
# The NPU-only sources compiled for aarch64 against each torch_npu of AARCH64_TORCH_NPU (its torch:
# the version before any .post), with that torch's aarch64 headers (the row's site, or the headers
# and libraries of its aarch64 wheel, which need not import), then the ABI check on those aarch64
# objects (tools/npu_abi_check/run.sh): every torch_npu / op-plugin / torch symbol they need is one the
# aarch64 (and x86_64) wheels export.
npu_rows="${AARCH64_TORCH_NPU:-2.7.1.post11 2.13.0}"
npu_summary=()
for npu in $npu_rows; do
    npu_torch="${npu%%.post*}"
    wheels="$repo/third_party/wheels/torch_npu-$npu"
    mkdir -p "$wheels"
    for arch in x86_64 aarch64; do
        ls "$wheels"/torch_npu-*"$arch".whl > /dev/null 2>&1 ||
            timed "$work/npu-download-$npu.log" "$host_python" -m pip download --quiet --disable-pip-version-check                 --no-deps --only-binary=:all: --platform "manylinux_2_28_$arch" --python-version 3.11                 "torch-npu==$npu" -d "$wheels"
    done
    unpacked="$work/npu-$npu/torch_npu"
    [ -f "$unpacked/VERSION" ] || timed "$work/npu-unpack-$npu.log" "$host_python" tools/npu_abi_check/unpack_torch_npu.py "$wheels" "$unpacked"
    if [ -d "$work/site-torch-$npu_torch/torch/include" ]; then
        torch_dir="$work/site-torch-$npu_torch/torch"
    else  # the aarch64 torch wheel's headers and libraries, unpacked (never imported)
        torch_dir="$work/torch-$npu_torch-unpacked/torch"
        if [ ! -f "$torch_dir/.stamp" ]; then
            torch_wheels="$repo/third_party/wheels/torch-$npu_torch-aarch64"
            ls "$torch_wheels"/torch-*aarch64.whl > /dev/null 2>&1 ||
                timed "$work/torch-download-$npu_torch.log" "$host_python" -m pip download --quiet                     --disable-pip-version-check --no-deps --only-binary=:all: --platform manylinux_2_28_aarch64                     --python-version 3.11 "torch==$npu_torch" -d "$torch_wheels"
            rm -rf "$(dirname "$torch_dir")" && mkdir -p "$(dirname "$torch_dir")"
            (cd "$(dirname "$torch_dir")" && unzip -q "$torch_wheels"/torch-*aarch64.whl 'torch/include/*' \
                torch/lib/libc10.so torch/lib/libtorch.so torch/lib/libtorch_cpu.so torch/lib/libtorch_python.so)
            touch "$torch_dir/.stamp"
        fi
    fi
    CPLUS_INCLUDE_PATH="$work/python-include" NPU_CHECK_CXX=aarch64-linux-gnu-g++ \
    NPU_CHECK_TORCH_INC="$torch_dir/include $torch_dir/include/torch/csrc/api/include" \
    NPU_CHECK_TORCH_LIB="$torch_dir/lib" NPU_CHECK_PY_INC="$root/usr/include/python3.11" \
    NPU_CHECK_TORCH_MINOR="$(echo "$npu_torch" | cut -d. -f2)" NPU_CHECK_CXX11_ABI=1 \
    NPU_CHECK_HOST_PYTHON="$host_python" \
        timed "$work/npu-check-$npu.log" tools/npu_abi_check/run.sh "$unpacked" "$last_python" "$work/gcc12-torch-$last_torch" \
            "$work/npu-check-$npu"
    npu_summary+=("$npu ($(grep -cE '^npu-check: csrc/' "$work/npu-check-$npu.log") sources, ABI check passed on the aarch64 objects)")
done
say "NPU extension compiled for aarch64 against torch_npu ${npu_summary[*]}"

# A Debian 13 root (build/aarch64/trixie: mmdebstrap, run with proot, this checkout bound at its own
# path): its cross GCC 13 for step 7, its qemu-aarch64 10.0 (a static binary, run from the host) for
# step 5, where Debian 12's 7.2 aborts forked children that start threads (npu_run.sh).
newest_gcc="${AARCH64_NEWEST_GCC:-13}"
trixie="$work/trixie"
if [ ! -x "$trixie/usr/bin/aarch64-linux-gnu-g++-$newest_gcc" ] || [ ! -x "$trixie/usr/bin/qemu-aarch64" ]; then
    rm -rf "$trixie"
    timed "$work/trixie.log" mmdebstrap --variant=apt \
        --include="g++-$newest_gcc-aarch64-linux-gnu,cmake,ninja-build,python3,qemu-user,binutils-aarch64-linux-gnu" \
        trixie "$trixie"
fi

# ---- 5. the real aarch64 torch_npu under qemu (tools/aarch64/npu_run.sh), with the CANN snapshots --------
npu_run_version="${AARCH64_NPU_RUN:-2.7.1.post11}"
missing_snapshots=()
for v in CANN_OPBASE_DIR CANN_RUNTIME_DIR CANN_METADEF_DIR ASC_DEVKIT_DIR ASC_TOOLS_DIR; do
    [ -n "${!v:-}" ] || missing_snapshots+=("$v")
done
if [ ${#missing_snapshots[@]} -gt 0 ]; then
    say "torch_npu $npu_run_version under qemu SKIPPED (set ${missing_snapshots[*]}: the snapshots of make npu-check)"
elif [ "${npu_run_version%%.post*}" != "$last_torch" ]; then
    say "torch_npu $npu_run_version under qemu SKIPPED (its torch ${npu_run_version%%.post*} is not a built row: AARCH64_TORCH)"
else
    AARCH64_QEMU="$trixie/usr/bin/qemu-aarch64" tools/aarch64/npu_run.sh "$npu_run_version" \
        "$work/site-torch-$last_torch" \
        "$(emulated_python "$work/site-torch-$last_torch" "$trixie/usr/bin/qemu-aarch64")" || status=1
fi

# ---- 6. the oldest supported compiler ------------------------------------------------------------
gcc="$(gcc_version "-$oldest_gcc")"
build="$work/gcc$oldest_gcc-torch-$last_torch"
cross_build "-$oldest_gcc" "$last_python" "$build" "$work/configure-gcc$oldest_gcc.log"
say "GCC $gcc (the oldest supported): the package built (C libraries, _kernels, _C), ctest $(run_ctest "$build" "$work/ctest-gcc$oldest_gcc.log") under qemu-aarch64"
# ---- 7. GCC 13, the first with _Float16 in C++ on aarch64: Debian 13's cross compiler in the Debian 13
# root, the C libraries and the C++ tests built and run under its qemu.
in_trixie() { proot -r "$trixie" -b "$repo" -b /proc -b /dev -b /tmp -w "$repo" "$@"; }
build="$work/gcc$newest_gcc-cpp"
AEA_AARCH64_GCC="$newest_gcc" timed "$work/configure-gcc$newest_gcc.log" in_trixie \
    cmake -S "$repo" -B "$build" -G Ninja -DCMAKE_TOOLCHAIN_FILE="$repo/cmake/aarch64-linux-gnu.cmake" \
        -DAEA_BUILD_PYTHON=OFF -DAEA_BUILD_TESTS=ON
AEA_AARCH64_GCC="$newest_gcc" timed "$work/build-gcc$newest_gcc.log" in_trixie cmake --build "$build" -j "$jobs"
in_trixie ctest --test-dir "$build" -j "$jobs" --output-on-failure > "$work/ctest-gcc$newest_gcc.log" 2>&1 || {
    tail -40 "$work/ctest-gcc$newest_gcc.log" >&2; die "ctest failed with GCC $newest_gcc"; }
say "GCC $(in_trixie "aarch64-linux-gnu-g++-$newest_gcc" -dumpfullversion) (Debian 13): the C libraries and" \
    "C++ tests built, ctest $(sed -nE 's/.*tests passed, 0 tests failed out of ([0-9]+).*/\1\/\1/p' \
    "$work/ctest-gcc$newest_gcc.log") under qemu-aarch64"
exit $status
