#!/usr/bin/env bash
# Builds the custom-operator package (ApplyFusedEmaAdam, ApplyFusedEmaAdamList and its V2) with a CANN
# toolkit.
#
# CANN's documented flow: msopgen generates the custom-op project from the op descriptions
# (op_host/<op>/cann/<name>.json with the attributes of the operator's spec, merged into one by
# cmake/gen_op_signature.py --msopgen); we then place this repository's sources where that project
# expects them (op_host/: OpDef + tiling per op, op_kernel/: the kernels) and run the project's
# own build.sh. Requires ASCEND_HOME_PATH (source <cann>/set_env.sh). Output:
# build_out/custom_opp_*.run.
#
# Two settings of the generated project are ours, applied below and checked by `make npu-check`
# (tools/cann_op_build/run.sh builds op_host with the template's own command, as edited here):
#   - the C++ standard: the template compiles op_host with -std=c++11 (cmake/func.cmake's
#     opbuild(), cmake/intf.cmake's intf_pub). op_host holds the C++17 validation and tiling the
#     CPU path runs too (one source of truth), and CANN's registration headers compile as C++17,
#     so the project is set to -std=c++17; _GLIBCXX_USE_CXX11_ABI=0 stays, as CANN's libraries
#     are built with it.
#   - the SoCs: every SoC the OpDefs advertise (AddConfig in op_host/<op>/cann/*_def.*) is built.
#
# `build.sh --stage <dir>` only lays the sources out in <dir>/op_host and <dir>/op_kernel as the
# project expects them (tools/cann_op_build/run.sh stages CANN's op_build run this way).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
compute_units=(ascend910b ascend910_93)  # Atlas A2, Atlas A3: the OpDefs' AddConfig SoCs

# The operators: every op_host/<op>/cann/<name>_def.cpp is one CANN op <name> with <name>.json
# (its inputs and outputs; the attributes are its spec's).
mapfile -t defs < <(cd "$repo" && ls op_host/*/cann/*_def.cpp)

# The project is flat: op_host/ holds each op's registration as <name>.cpp (replacing msopgen's stub
# of that name), the adapters' headers and the pure host code (platform, shared validation, tiling:
# the same sources the CPU runtime is built from); op_kernel/ exactly the kernel sources the twin
# verifies (replacing msopgen's stubs of the same names). Two of our sources of one name would
# overwrite each other: refused.
declare -A placed=()
place() {  # place <source> <destination>
  [[ -z "${placed[$2]:-}" ]] || { echo "build.sh: $1 and ${placed[$2]} stage as one file" >&2; exit 1; }
  placed[$2]="$1"
  cp -p "$1" "$2"  # timestamps kept: a build over the staged tree rebuilds only what changed
}
stage() {  # stage <project dir>
  local project="$1" src name
  mkdir -p "$project/op_host" "$project/op_kernel"
  for src in "${defs[@]}"; do
    name="$(basename "$src" _def.cpp)"
    place "$repo/$src" "$project/op_host/$name.cpp"
  done
  for src in "$repo"/op_host/*/cann/*.h "$repo"/op_host/*/*.h "$repo"/op_host/*/*.cpp; do
    [[ -e "$src" ]] && place "$src" "$project/op_host/$(basename "$src")"
  done
  for src in "$repo"/op_kernel/*/*.cpp "$repo"/op_kernel/*/*.h; do
    place "$src" "$project/op_kernel/$(basename "$src")"
  done
}
if [[ "${1:-}" == "--stage" ]]; then
  stage "${2:?build.sh --stage <dir>}"
  exit 0
fi

: "${ASCEND_HOME_PATH:?source the CANN set_env.sh first}"
project="$here/build_project"
rm -rf "$project"
mkdir -p "$project"
merged="$(mktemp --suffix=.json)"
trap 'rm -f "$merged"' EXIT
descriptions=()
for def in "${defs[@]}"; do descriptions+=("$repo/${def%_def.cpp}.json"); done
python3 "$repo/cmake/gen_op_signature.py" --msopgen "$merged" "${descriptions[@]}"
"$ASCEND_HOME_PATH/python/site-packages/bin/msopgen" gen -i "$merged" -c "ai_core-${compute_units[0]}" \
    -lan cpp -out "$project"
stage "$project"

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
