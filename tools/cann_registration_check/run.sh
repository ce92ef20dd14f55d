#!/usr/bin/env bash
# Type-checks the CANN registration sources (op_host/<op>/cann/*.cpp: OpDef, tiling adapter, infershape)
# against CANN's real registration headers: every OpDef builder call, gert::TilingContext method,
# ge::DataType / ge::Format value and PlatformAscendC call they use. Syntax and types only
# (g++ -fsyntax-only): linking needs a CANN toolkit.
#
#   CANN_METADEF_DIR=<checkout of hicann/metadef> ASC_DEVKIT_DIR=<checkout of asc-devkit> \
#       tools/cann_registration_check/run.sh
#
# Without both variables it says so and exits 0 (CI has no network for the checkouts). The two
# things no public repository carries are stand-ins in build/cann_host_check/:
# platform/soc_spec.h (empty: included by platform_ascendc.h, nothing from it is used here) and
# securec.h (declarations of the bounds-checking C functions the exe_graph headers call; the one
# copy, tools/cann_host/standins/securec.h).
set -euo pipefail
cd "$(dirname "$0")/../.."
if [[ -z "${CANN_METADEF_DIR:-}" || -z "${ASC_DEVKIT_DIR:-}" ]]; then
  echo "cann-host-check: SKIPPED (set CANN_METADEF_DIR to a hicann/metadef checkout and" \
       "ASC_DEVKIT_DIR to an asc-devkit checkout to type-check op_host/*/cann/ against CANN's headers)"
  exit 0
fi
metadef="$CANN_METADEF_DIR"
devkit="$ASC_DEVKIT_DIR"
for required in "$metadef/inc/external/asc/register/op_def_registry.h" \
                "$devkit/include/utils/tiling/platform/platform_ascendc.h"; do
  [[ -f "$required" ]] || { echo "cann-host-check: $required not found" >&2; exit 1; }
done

stubs=build/cann_host_check
mkdir -p "$stubs/platform"
: > "$stubs/platform/soc_spec.h"
cp tools/cann_host/standins/securec.h "$stubs/securec.h"

# NO_OPERATOR_IMPL: op_def.h forward-declares ge::Operator instead of including graph headers
# that live in another repository. CANN's headers are system headers (their own warnings and
# deprecation notes are not ours); our sources compile with -Wall -Wextra -Werror. Each source
# sees the shared folders and its own operator's (op_host/<op>/cann/, op_host/<op>/, op_kernel/<op>/).
flags=(-std=c++17 -fsyntax-only -Wall -Wextra -Werror -DNO_OPERATOR_IMPL
       -isystem "$metadef/inc/external" -isystem "$metadef/inc/external/asc"
       -isystem "$metadef/inc" -isystem "$metadef/pkg_inc"
       -isystem "$devkit/include/utils" -isystem "$stubs"
       -I op_host/common -I op_host/common/cann -I op_kernel/common)
status=0
for src in op_host/*/cann/*.cpp; do
  echo "cann-host-check: $src"
  op="${src#op_host/}"
  op="${op%%/*}"
  # The headers announce their own deprecations with #pragma message: not diagnostics of ours.
  if ! out="$(g++ "${flags[@]}" -I "op_host/$op/cann" -I "op_host/$op" -I "op_kernel/$op" "$src" 2>&1)"; then
    status=1
  fi
  grep -v -e "#pragma message" -e "^In file included from" -e "^ *from " -e "^ *[0-9]* | " \
          -e "^ *| " <<< "$out" || true
done
if [[ $status -ne 0 ]]; then
  echo "cann-host-check: FAILED" >&2
  exit 1
fi
revision() { git -C "$1" rev-parse --short HEAD 2>/dev/null || echo "(not a git checkout)"; }
echo "cann-host-check: op_host/*/cann/ compiles against metadef $(revision "$metadef")" \
     "and asc-devkit $(revision "$devkit")"
