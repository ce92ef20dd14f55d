#!/usr/bin/env bash
# The NPU build of the torch extension against the real torch_npu wheels (unpacked, never
# installed; `make test`: 2.13.0, `make compat`: each row's): every NPU-only source compiled as the
# _C target compiles it with torch_npu (the same include order, AEA_WITH_NPU=1, the op-plugin
# version of the torch it runs with, -O2), then the ABI check (tools/npu_abi_check/abi_check.py): every
# symbol those objects need from torch_npu / op-plugin must be one the x86_64 and the aarch64
# wheels' libraries export, or the extension would not import on an Ascend host. Its self-test
# (tools/npu_abi_check/selftest/, a launch written with op-plugin's EXEC_NPU_CMD) must be refused.
# Linking and running the extension inside torch_npu is tools/torch_npu_run/ (with snapshots).
# Usage: tools/npu_abi_check/run.sh <third_party/torch_npu> <python> <package build dir (build/release)>
#                           [<objects dir (build/npu_check)>]
set -euo pipefail
npu="$1"
python="$2"
package_build="$3"
out="${4:-build/npu_check}"
mkdir -p "$out"
npu_inc="$npu/include"
npu_version="$(cat "$npu/VERSION" 2> /dev/null || echo '?')"  # (tools/npu_abi_check/unpack_torch_npu.py)
# What the build asks of the Python with torch; a cross build (tools/aarch64/run.sh) gives each
# as NPU_CHECK_<NAME> instead (asking the emulated Python costs half a minute a question), the
# compiler as NPU_CHECK_CXX, and runs the ABI check with NPU_CHECK_HOST_PYTHON.
ask() { "$python" -c "$1"; }
torch_inc="${NPU_CHECK_TORCH_INC:-$(ask 'import torch.utils.cpp_extension as e; print(" ".join(e.include_paths()))')}"
torch_lib="${NPU_CHECK_TORCH_LIB:-$(ask 'import torch, os; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')}"
py_inc="${NPU_CHECK_PY_INC:-$(ask 'import sysconfig; print(sysconfig.get_paths()["include"])')}"
# op-plugin's headers pick their code by the torch they compile against (CURRENT_VERSION=V2R<minor>,
# as csrc/CMakeLists.txt and torch_npu's own build define it); the C++11 ABI is torch's.
torch_minor="${NPU_CHECK_TORCH_MINOR:-$(ask 'import torch; print(torch.__version__.split(".")[1])')}"
cxx11_abi="${NPU_CHECK_CXX11_ABI:-$(ask 'import torch; print(int(torch._C._GLIBCXX_USE_CXX11_ABI))')}"
cxx="${NPU_CHECK_CXX:-g++}"
export NPU_CHECK_CXX="$cxx"
launcher="${NPU_CHECK_LAUNCHER:-}"  # a compiler cache to run the compiler through (`make test`: ccache)
# The _C target's include order with torch_npu: csrc/common, CANN's ACL headers (the wheel's; ours
# in include/acl/ are the same declarations, aclnn.acl_headers_match_cann), our C API headers (for
# aclnn/ and aclnnop/), the shared host folders, the source's own operator's folders (as
# cmake/aea_add_operator.cmake gives them: csrc/ops/<op>, its generated signature header's folder in
# the package build, op_host/<op>, op_kernel/<op>; none for a shared source), then torch and
# torch_npu.
flags=(-std=c++20 -O2 -fPIC -Wall -Werror=return-type -D_GLIBCXX_USE_CXX11_ABI="$cxx11_abi"
       -DCURRENT_VERSION=V2R"$torch_minor" -DAEA_WITH_NPU=1 -I csrc/common
       -I "$npu_inc/third_party/acl/inc" -I include -I op_host/common -I op_kernel/common)
system=(-isystem "$py_inc" -isystem "$npu_inc" -isystem "$npu_inc/third_party/op-plugin"
        -isystem "$npu_inc/third_party/hccl/inc")
for dir in $torch_inc; do system+=(-isystem "$dir"); done
operator_flags() {  # source: its operator's folders, if it is an operator's
  local op
  if [[ "$1" =~ ^csrc/ops/([^/]+)/ ]]; then
    op="${BASH_REMATCH[1]}"
    printf -- '-I\n%s\n' "csrc/ops/$op" "$package_build/generated/$op" "op_host/$op" "op_kernel/$op"
  fi
}

# What the NPU build adds to _C: the NPU op API, each operator's NPU kernel, and the torch op's
# bindings (they reach the NPU code through AEA_WITH_NPU; the _kernels module's have no NPU code).
sources=(csrc/common/npu_op_api.cpp csrc/ops/*/*_npu.cpp)
for src in csrc/ops/*/*_bindings.cpp; do
  [[ "$src" == *_kernels_bindings.cpp ]] || sources+=("$src")
done
objects=()
for src in "${sources[@]}"; do objects+=("$out/$(basename "${src%.cpp}").o"); done
selftest="$out/exec_npu_cmd.o"
compile() {  # source object
  echo "npu-check: $1"
  local own=()
  mapfile -t own < <(operator_flags "$1")
  ${launcher:+"$launcher"} "$cxx" "${flags[@]}" "${own[@]}" "${system[@]}" -c "$1" -o "$2"
}
pids=()
i=0
for src in "${sources[@]}" tools/npu_abi_check/selftest/exec_npu_cmd.cpp; do
  obj="${objects[$i]:-$selftest}"
  compile "$src" "$obj" &
  pids+=($!)
  i=$((i + 1))
  if (( ${#pids[@]} >= $(nproc) )); then wait "${pids[0]}"; pids=("${pids[@]:1}"); fi
done
for pid in "${pids[@]}"; do wait "$pid"; done
echo "npu-check: ${#sources[@]} NPU source(s) compile against torch-npu $npu_version headers"

# The rest of _C, as the package build made it: its definitions count as the extension's own.
ours=("$package_build"/csrc/CMakeFiles/_C.dir/ops/*/*.o
      "$package_build"/csrc/CMakeFiles/_C.dir/common/*.o
      "$package_build"/op_host/libaea_tiling.a)
"${NPU_CHECK_HOST_PYTHON:-$python}" tools/npu_abi_check/abi_check.py --objects "${objects[@]}" --ours "${ours[@]}" --torch-lib "$torch_lib" \
  --wheel "x86_64=$npu/symbols/x86_64" --wheel "aarch64=$npu/symbols/aarch64" \
  --expect-unresolved "$selftest"
