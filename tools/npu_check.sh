#!/usr/bin/env bash
# Compiles every NPU-only source against the real torch_npu / op-plugin / ACL headers from the
# torch-npu wheel (unpacked, never installed) and torch's headers: syntax and types only, since
# linking needs CANN. The shared validation (op_host/*/) is ours and pure C++.
# Usage: tools/npu_check.sh <torch_npu include dir> <python>
set -euo pipefail
npu_inc="$1"
python="$2"
torch_inc="$("$python" -c 'import torch.utils.cpp_extension as e; print(" ".join(e.include_paths()))')"
py_inc="$("$python" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')"
flags=(-std=c++20 -fsyntax-only -Wall -Werror=return-type -D_GLIBCXX_USE_CXX11_ABI=1
       -DCURRENT_VERSION=V2R13 -isystem "$py_inc" -isystem "$npu_inc" -isystem "$npu_inc/third_party/op-plugin"
       -isystem "$npu_inc/third_party/acl/inc" -isystem "$npu_inc/third_party/hccl/inc"
       $(for dir in op_host/*/ op_kernel/*/ csrc/ops/*/; do printf -- '-I %s ' "$dir"; done))
for dir in $torch_inc; do flags+=(-isystem "$dir"); done
sources=(csrc/ops/*/*_npu.cpp)  # each operator's NPU kernel (csrc/ops/<op>/)
for src in "${sources[@]}"; do
  echo "npu-check: $src"
  g++ "${flags[@]}" "$src"
done
# The bindings as the NPU build compiles them (they reach the NPU code through AEA_WITH_NPU), with
# our C API headers first, as in the _C target.
bindings=(csrc/ops/*/*_bindings.cpp)
for src in "${bindings[@]}"; do
  echo "npu-check: $src (AEA_WITH_NPU=1)"
  g++ "${flags[@]}" -I include -DAEA_WITH_NPU=1 "$src"
done
echo "npu-check: ${#sources[@]} NPU source(s) and ${#bindings[@]} binding file(s) compile against torch-npu 2.13.0 headers"
