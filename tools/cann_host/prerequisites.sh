#!/usr/bin/env bash
# What CANN's host stack on the CPU (tools/cann_host/build.sh) needs from Debian: cmake and ninja,
# protobuf (CANN's platform library; a cross build uses this machine's protoc with the target
# root's headers), nlohmann-json (opbase). Installed when missing and apt-get can (as `make
# aarch64-check` installs its tools), else named. `make npu-check` runs it first, so that a
# missing package stops it at once rather than after the checks before the host stack.
#   tools/cann_host/prerequisites.sh [WORK_DIR]   (apt-get's log: WORK_DIR/apt.log)
set -euo pipefail
work="${1:-$(cd "$(dirname "$0")/../.." && pwd)/build/cann_host}"

apt_needed() {
  command -v cmake > /dev/null || echo cmake
  command -v ninja > /dev/null || echo ninja-build
  command -v protoc > /dev/null || echo protobuf-compiler
  [[ -f /usr/include/google/protobuf/message.h ]] || echo libprotobuf-dev
  [[ -f /usr/include/nlohmann/json.hpp ]] || echo nlohmann-json3-dev
}
mapfile -t missing < <(apt_needed)
if [[ ${#missing[@]} -gt 0 && $(id -u) -eq 0 ]] && command -v apt-get > /dev/null; then
  mkdir -p "$work"
  echo "cann-host: installing ${missing[*]} (apt-get)"
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      "${missing[@]}"; } > "$work/apt.log" 2>&1 || true
  mapfile -t missing < <(apt_needed)
fi
if [[ ${#missing[@]} -gt 0 ]]; then
  echo "cann-host: FAILED: missing ${missing[*]}: apt-get install ${missing[*]} (CANN's platform library needs protobuf, opbase nlohmann-json)" >&2
  exit 1
fi
