#!/usr/bin/env bash
# Builds the custom-operator package (ApplyFusedEmaAdam, ApplyFusedEmaAdamList and its V2) with a CANN
# toolkit.
#
# CANN's documented flow: msopgen generates the custom-op project from the op descriptions
# (*.json here, merged into one); we then place this repository's sources where that project
# expects them (op_host/: OpDef + tiling per op, op_kernel/: the kernels) and run the project's
# own build.sh. Requires ASCEND_HOME_PATH (source <cann>/set_env.sh). Output:
# build_out/custom_opp_*.run.
#
# Two settings of the generated project are ours, applied below and checked by `make npu-check`
# (tools/cann_op_build.sh builds op_host with the template's own command, as edited here):
#   - the C++ standard: the template compiles op_host with -std=c++11 (cmake/func.cmake's
#     opbuild(), cmake/intf.cmake's intf_pub). op_host holds the C++17 validation and tiling the
#     CPU path runs too (one source of truth), and CANN's registration headers compile as C++17,
#     so the project is set to -std=c++17; _GLIBCXX_USE_CXX11_ABI=0 stays, as CANN's libraries
#     are built with it.
#   - the SoCs: every SoC the OpDefs advertise (AddConfig in op_host/cann/*_def.*) is built.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
: "${ASCEND_HOME_PATH:?source the CANN set_env.sh first}"
compute_units=(ascend910b ascend910_93)  # Atlas A2, Atlas A3: the OpDefs' AddConfig SoCs
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
"$ASCEND_HOME_PATH/python/site-packages/bin/msopgen" gen -i "$merged" -c "ai_core-${compute_units[0]}" \
    -lan cpp -out "$project"

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

# The C++ standard of op_host (see the top of this file); fail if the template no longer says c++11.
for f in cmake/func.cmake cmake/intf.cmake; do
  grep -q -- "-std=c++11" "$project/$f" || { echo "build.sh: $f has no -std=c++11 to set" >&2; exit 1; }
  sed -i 's/-std=c++11/-std=c++17/g' "$project/$f"
done
# The vendor name and every SoC the OpDefs advertise.
python3 - "$project/CMakePresets.json" "${compute_units[@]}" <<'PY'
import json, sys
path, units = sys.argv[1], sys.argv[2:]
presets = json.load(open(path))
for preset in presets["configurePresets"]:
    variables = preset["cacheVariables"]
    variables["vendor_name"]["value"] = "ascend_ema_adam"
    variables["ASCEND_COMPUTE_UNIT"]["value"] = ";".join(units)
json.dump(presets, open(path, "w"), indent=4)
PY
(cd "$project" && bash build.sh)
mkdir -p "$here/build_out"
cp "$project"/build_out/custom_opp_*.run "$here/build_out/"
echo "built: $(ls "$here"/build_out/custom_opp_*.run)"
