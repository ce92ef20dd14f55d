#!/usr/bin/env bash
# Builds the custom-operator package (ApplyFusedEmaAdam, ApplyFusedEmaAdamList and its V2) with a CANN
# toolkit.
#
# CANN's documented flow: msopgen generates the custom-op project from the op descriptions
# (*.json here, merged into one); we then place this repository's sources where that project
# expects them (op_host/: OpDef + tiling per op, op_kernel/: the kernels) and run the project's
# own build.sh. Requires ASCEND_HOME_PATH (source <cann>/set_env.sh). Output:
# build_out/custom_opp_*.run.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
: "${ASCEND_HOME_PATH:?source the CANN set_env.sh first}"
soc="${SOC_VERSION:-ai_core-ascend910b}"
project="$here/build_project"
ops=(apply_fused_ema_adam apply_fused_ema_adam_list apply_fused_ema_adam_list_v2)  # <op>.json and <op>_def.cpp each

rm -rf "$project"
mkdir -p "$project"
merged="$(mktemp --suffix=.json)"
trap 'rm -f "$merged"' EXIT
python3 - "$merged" "${ops[@]/#/$here/}" <<'PY'
import json, sys
ops = [op for path in sys.argv[2:] for op in json.load(open(path + ".json"))]
json.dump(ops, open(sys.argv[1], "w"), indent=2)
PY
"$ASCEND_HOME_PATH/python/site-packages/bin/msopgen" gen -i "$merged" -c "$soc" -lan cpp \
    -out "$project"

# op_host: each op's registration replaces its generated stub (msopgen names it <op>.cpp); the
# adapters' shared header and the pure host code join them (platform, shared validation, tiling:
# the same sources the CPU runtime is built from).
for op in "${ops[@]}"; do
  cp "$here/${op}_def.cpp" "$project/op_host/${op}.cpp"
done
cp "$here"/*.h "$project/op_host/"
cp "$repo"/op_host/*.h "$repo"/op_host/*.cpp "$project/op_host/"
# op_kernel: exactly the kernel sources the twin verifies.
cp "$repo"/op_kernel/*.cpp "$repo"/op_kernel/*.h "$project/op_kernel/"

sed -i "s|\"value\": \"customize\"|\"value\": \"ascend_ema_adam\"|" "$project/CMakePresets.json"
(cd "$project" && bash build.sh)
mkdir -p "$here/build_out"
cp "$project"/build_out/custom_opp_*.run "$here/build_out/"
echo "built: $(ls "$here"/build_out/custom_opp_*.run)"
