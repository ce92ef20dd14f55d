#!/usr/bin/env bash
# Builds the ApplyFusedEmaAdam custom-operator package with a CANN toolkit.
#
# CANN's documented flow: msopgen generates the custom-op project from the op description
# (apply_fused_ema_adam.json); we then place this repository's sources where that project expects
# them (op_host/: OpDef + tiling, op_kernel/: the kernel) and run the project's own build.sh.
# Requires ASCEND_HOME_PATH (source <cann>/set_env.sh). Output: build_out/custom_opp_*.run.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
: "${ASCEND_HOME_PATH:?source the CANN set_env.sh first}"
soc="${SOC_VERSION:-ai_core-ascend910b}"
project="$here/build_project"

rm -rf "$project"
"$ASCEND_HOME_PATH/python/site-packages/bin/msopgen" gen -i "$here/apply_fused_ema_adam.json" \
    -c "$soc" -lan cpp -out "$project"

# op_host: our registration replaces the generated stub; the pure host code joins it (platform,
# shared validation, tiling: the same sources the CPU runtime is built from).
cp "$here/apply_fused_ema_adam_def.cpp" "$project/op_host/apply_fused_ema_adam.cpp"
cp "$repo"/op_host/*.h "$repo"/op_host/*.cpp "$project/op_host/"
# op_kernel: exactly the kernel sources the twin verifies.
cp "$repo"/op_kernel/*.cpp "$repo"/op_kernel/*.h "$project/op_kernel/"

sed -i "s|\"value\": \"customize\"|\"value\": \"ascend_ema_adam\"|" "$project/CMakePresets.json"
(cd "$project" && bash build.sh)
mkdir -p "$here/build_out"
cp "$project"/build_out/custom_opp_*.run "$here/build_out/"
echo "built: $(ls "$here"/build_out/custom_opp_*.run)"
