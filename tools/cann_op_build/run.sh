#!/usr/bin/env bash
# Runs CANN's own code generator, op_build, on this repository's OpDefs, the way CANN's custom-op
# project template does, and checks that the aclnn C API it generates is the one include/aclnnop/
# declares.
#
#   ASC_DEVKIT_DIR=<asc-devkit work tree> CANN_METADEF_DIR=<hicann/metadef work tree> \
#   ASC_TOOLS_DIR=<hicann/asc-tools work tree> tools/cann_op_build/run.sh
#
# Without the three variables it says SKIPPED and exits 0. Steps:
#  1. op_build: asc-devkit tools/build/opbuild/*.cpp (the sources and order of its CMakeLists.txt),
#     linked with metadef's real OpDef implementation (base/asc/opdef/*.cc, the OpDef registry
#     op_build reads) and the few other metadef sources those need.
#  2. Our op library, by the command of the template's opbuild() (asc-tools customize/cmake/
#     func.cmake, read at run time) over a staging copy laid out as op_host/common/cann/build.sh lays out
#     the generated project. Changed: -std=c++11 -> -std=c++17, the CANN install's include/ -> the
#     work trees' include dirs, its -lexe_graph -lregister -ltiling_api -> the libraries of step 1.
#  3. op_build <lib> <out>, with the environment the template's default preset gives it. Its output
#     (aclnn_<op>.h/.cpp, op_proto.h/.cc, aic-<soc>-ops-info.ini) stays in build/cann_op_build/out/.
#  4. The ops-info: its SoCs are those op_host/common/cann/build.sh builds, and its inputs, outputs,
#     dtype columns (one kernel binary each) and attributes those of the op descriptions msopgen
#     reads (op_host/<op>/cann/<op>.json with the spec's attributes).
#  5. The op types: none is the type of a CANN built-in operator (all of hicann/ops-nn's with
#     CANN_OPS_NN_DIR, else CANN's ApplyFusedEmaAdam): the package must not replace CANN's ops.
#  6. tools/cann_op_build/aclnn_decl_compare.py: every generated aclnn declaration against include/aclnnop/.
#
# CANN's code is compiled where it lies (never copied). What no public repository carries is
# generated into build/cann_op_build/standins/ as a minimal stand-in of our own:
#   securec.h            declarations of libboundscheck's functions (called by exe_graph headers)
#   dlog_pub.h + .cc     CheckLogLevel/DlogRecord (CANN's closed log library): warnings and errors
#                        to stderr (ASCEND_GLOBAL_LOG_LEVEL=0..3 shows more or less)
#   mmpa/mmpa_api.h      mmGetTid, MM_SYS_GET_ENV (plain getenv) and the system headers the real
#                        one pulls in (op_build relies on them for chmod, PATH_MAX)
#   base/err_msg.h       error_manager's REPORT_INNER_ERR_MSG, a no-op (metadef's AscendString)
#   platform/soc_spec.h  empty (included by platform_ascendc.h, nothing of it is used)
#   graph/operator_reg.h a forward declaration of ge::Operator: op_def.h includes the graph
#                        repository's header unless NO_OPERATOR_IMPL; our sources never use it
#   PlatformAscendC::GetCoreNumAiv/GetCoreMemSize/GetLibApiWorkSpaceSize (.cc): tiling_api's
#                        source needs the closed platform library; op_build never runs a tiling
#                        function, so these abort if called.
# Everything is built with g++ and -D_GLIBCXX_USE_CXX11_ABI=0 (CANN's ABI, the template's too), so
# op_build, metadef and the op library agree on std::string. Builds are cached (a generated
# Makefile with header dependencies): a second run rebuilds only the op library and reruns op_build.
set -euo pipefail
cd "$(dirname "$0")/../.."
repo="$PWD"
say() { echo "cann-op-build: $*"; }
die() { echo "cann-op-build: $*" >&2; exit 1; }

if [[ -z "${ASC_DEVKIT_DIR:-}" || -z "${CANN_METADEF_DIR:-}" || -z "${ASC_TOOLS_DIR:-}" ]]; then
  say "SKIPPED (set ASC_DEVKIT_DIR, CANN_METADEF_DIR and ASC_TOOLS_DIR to work trees of" \
      "asc-devkit, hicann/metadef and hicann/asc-tools to run CANN's op_build on op_host/*/cann/" \
      "and compare the generated aclnn declarations with include/aclnnop/)"
  exit 0
fi
for dir in "$ASC_DEVKIT_DIR" "$CANN_METADEF_DIR" "$ASC_TOOLS_DIR"; do
  [[ -d "$dir" ]] || die "$dir is not a directory"
done
devkit="$(cd "$ASC_DEVKIT_DIR" && pwd)"
metadef="$(cd "$CANN_METADEF_DIR" && pwd)"
asctools="$(cd "$ASC_TOOLS_DIR" && pwd)"
opbuild_dir="$devkit/tools/build/opbuild"
func_cmake="$asctools/utils/templates/op_project_templates/ascendc/customize/cmake/func.cmake"
for required in "$opbuild_dir/CMakeLists.txt" "$devkit/tools/build/common/ascendc_tool_log.h" \
                "$metadef/base/asc/opdef/op_def.cc" "$metadef/inc/external/asc/register/op_def.h" \
                "$devkit/include/utils/tiling/platform/platform_ascendc.h" "$func_cmake"; do
  [[ -f "$required" ]] || die "$required not found"
done
revision() { git -C "$1" rev-parse --short HEAD 2>/dev/null || echo "(not a git checkout)"; }
say "asc-devkit $(revision "$devkit"), metadef $(revision "$metadef")," \
    "asc-tools $(revision "$asctools"), $(g++ --version | head -1)"

# One run of CANN's host stack at a time in this checkout (tools/common/cann_stack_lock.sh).
source tools/common/cann_stack_lock.sh; cann_stack_lock cann-op-build

work="$repo/build/cann_op_build"
standins="$work/standins"
mkdir -p "$standins"/{mmpa,base,platform,graph} "$work"/{bin,lib}

# Writes stdin to $1 only if the content changed: unchanged stand-ins keep their mtimes, so make
# rebuilds nothing on a second run.
write_if_changed() {
  local tmp; tmp="$(mktemp "$1.XXXXXX")"
  cat > "$tmp"
  if cmp -s "$tmp" "$1"; then rm -f "$tmp"; else mv "$tmp" "$1"; fi
}

# ---------------------------------------------------------------------------------------------
# Stand-ins (see the header comment).
write_if_changed "$standins/securec.h" < tools/cann_host/standins/securec.h
write_if_changed "$standins/dlog_pub.h" <<'EOF'
/* Stand-in generated by tools/cann_op_build/run.sh: the dlog API of CANN's closed log library. */
#ifndef CANN_OP_BUILD_DLOG_PUB_H
#define CANN_OP_BUILD_DLOG_PUB_H
#include <stdint.h>
#define DLOG_DEBUG 0
#define DLOG_INFO 1
#define DLOG_WARN 2
#define DLOG_ERROR 3
#define RUN_LOG_MASK (0x01000000U)
enum { GE = 45, ASCENDCKERNEL = 69 }; /* the module ids the compiled sources log under */
#ifdef __cplusplus
extern "C" {
#endif
int32_t CheckLogLevel(int32_t moduleId, int32_t logLevel);
void DlogRecord(int32_t moduleId, int32_t level, const char* fmt, ...)
    __attribute__((format(printf, 3, 4)));
#ifdef __cplusplus
}
#endif
#define CANN_OP_BUILD_DLOG(moduleId, level, fmt, ...)                                  \
  do {                                                                                 \
    if (CheckLogLevel((int32_t)(moduleId), (level)) == 1) {                            \
      DlogRecord((int32_t)(moduleId), (level), fmt, ##__VA_ARGS__);                    \
    }                                                                                  \
  } while (0)
#define dlog_error(moduleId, fmt, ...) CANN_OP_BUILD_DLOG(moduleId, DLOG_ERROR, fmt, ##__VA_ARGS__)
#define dlog_warn(moduleId, fmt, ...) CANN_OP_BUILD_DLOG(moduleId, DLOG_WARN, fmt, ##__VA_ARGS__)
#define dlog_info(moduleId, fmt, ...) CANN_OP_BUILD_DLOG(moduleId, DLOG_INFO, fmt, ##__VA_ARGS__)
#define dlog_debug(moduleId, fmt, ...) CANN_OP_BUILD_DLOG(moduleId, DLOG_DEBUG, fmt, ##__VA_ARGS__)
#endif
EOF
write_if_changed "$standins/mmpa/mmpa_api.h" <<'EOF'
/* Stand-in generated by tools/cann_op_build/run.sh: the part of mmpa op_build uses. */
#ifndef CANN_OP_BUILD_MMPA_API_H
#define CANN_OP_BUILD_MMPA_API_H
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
static inline int32_t mmGetTid(void) { return (int32_t)syscall(SYS_gettid); }
/* MM_SYS_GET_ENV(MM_ENV_X, value): the environment variable X. */
#define MM_SYS_GET_ENV(IdName, value) \
  do { (value) = getenv(&(#IdName)[sizeof("MM_ENV_") - 1]); } while (0)
#endif
EOF
write_if_changed "$standins/base/err_msg.h" <<'EOF'
/* Stand-in generated by tools/cann_op_build/run.sh: error_manager's report macro, a no-op. */
#ifndef CANN_OP_BUILD_ERR_MSG_H
#define CANN_OP_BUILD_ERR_MSG_H
#define REPORT_INNER_ERR_MSG(error_code, format, ...) ((void)0)
#endif
EOF
write_if_changed "$standins/platform/soc_spec.h" <<'EOF'
/* Stand-in generated by tools/cann_op_build/run.sh: nothing of it is used. */
EOF
write_if_changed "$standins/graph/operator_reg.h" <<'EOF'
/* Stand-in generated by tools/cann_op_build/run.sh: all op_def.h needs of the graph repository. */
#ifndef CANN_OP_BUILD_OPERATOR_REG_H
#define CANN_OP_BUILD_OPERATOR_REG_H
namespace ge {
class Operator;
}
#endif
EOF
write_if_changed "$standins/cann_standins.cc" <<'EOF'
// Stand-in generated by tools/cann_op_build/run.sh: the log functions and the PlatformAscendC methods
// the compiled sources reference.
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "dlog_pub.h"
#include "tiling/platform/platform_ascendc.h"

extern "C" int32_t CheckLogLevel(int32_t, int32_t level)
{
    const char* env = std::getenv("ASCEND_GLOBAL_LOG_LEVEL");
    const int32_t threshold = (env != nullptr && *env != '\0') ? std::atoi(env) : DLOG_WARN;
    return level >= threshold ? 1 : 0;
}

extern "C" void DlogRecord(int32_t, int32_t level, const char* fmt, ...)
{
    static const char* const kNames[] = {"DEBUG", "INFO", "WARNING", "ERROR"};
    std::fprintf(stderr, "[%s]", (level >= 0 && level <= DLOG_ERROR) ? kNames[level] : "LOG");
    va_list args;
    va_start(args, fmt);
    std::vfprintf(stderr, fmt, args);
    va_end(args);
    if (std::strchr(fmt, '\n') == nullptr) {
        std::fputc('\n', stderr);
    }
}

namespace {
[[noreturn]] void NotForOpBuild(const char* what)
{
    std::fprintf(stderr, "cann_standins: %s is a stand-in: op_build never runs tiling\n", what);
    std::abort();
}
}  // namespace

namespace platform_ascendc {
uint32_t PlatformAscendC::GetCoreNumAiv() const { NotForOpBuild(__func__); }
void PlatformAscendC::GetCoreMemSize(const CoreMemType&, uint64_t&) const
{
    NotForOpBuild(__func__);
}
uint32_t PlatformAscendC::GetLibApiWorkSpaceSize() const { NotForOpBuild(__func__); }
}  // namespace platform_ascendc
EOF

# ---------------------------------------------------------------------------------------------
# Step 1: op_build, metadef and the stand-ins, through a generated Makefile (header dependencies
# by -MMD). The include dirs are those of a CANN install's include/ (as tools/cann_registration_check/run.sh).
cann_includes=(-I "$standins" -I "$metadef/inc/external" -I "$metadef/inc/external/asc"
               -I "$metadef/inc" -I "$metadef/pkg_inc" -I "$devkit/include/utils")
# The metadef sources: the OpDef implementation (metadef's OP_DEF_FILES), and from libmetadef
# what it and the op library call: ge::AscendString, ge::GetFormatName,
# TypeUtils::GetDataTypeLength, gert::RuntimeAttrs::GetPointerByIndex.
metadef_srcs=("$metadef"/base/asc/opdef/*.cc
              "$metadef/base/type/ascend_string_impl.cc" "$metadef/base/type/types_impl.cc"
              "$metadef/base/utils/type_utils_impl.cc" "$metadef/base/runtime/runtime_attrs.cc")
# op_build's sources in its CMakeLists.txt order: the generators register themselves from
# constructors into a static map of op_generator_factory.cpp, so link order matters.
mapfile -t opbuild_srcs < <(tr -s ' \t()' '\n' < "$opbuild_dir/CMakeLists.txt" |
  awk '/^add_executable$/ {on = 1; next} on && /^op_build$/ {take = 1; next}
       take && /\.cpp$/ {print; next} take {exit}')
[[ ${#opbuild_srcs[@]} -gt 0 ]] || die "no op_build sources found in $opbuild_dir/CMakeLists.txt"

# Make rules, one per object (named after its path in the work tree).
object() { local rel="${2#"$3"/}"; echo "obj/$1/${rel//\//_}.o"; }
rule() {  # rule <object> <source> <flags variable>
  printf '%s: %s tools.mk\n\t@mkdir -p $(@D); echo "compile %s"\n\t$(CXX) $(%s) -c $< -o $@\n' \
    "$1" "$2" "$2" "$3"
}
metadef_objs=() opbuild_objs=()
for src in "${metadef_srcs[@]}"; do metadef_objs+=("$(object metadef "$src" "$metadef")"); done
for src in "${opbuild_srcs[@]}"; do
  opbuild_objs+=("$(object opbuild "$opbuild_dir/$src" "$opbuild_dir")")
done
{
  echo "# Generated by tools/cann_op_build/run.sh (rewritten only when it changes)."
  echo "CXX := g++"
  # CANN's flags (metadef base/host.cmake, opbuild CMakeLists.txt) except -Werror: a new g++
  # warning in a snapshot must not stop this check.
  echo "BASE := -std=c++17 -D_GLIBCXX_USE_CXX11_ABI=0 -O2 -fno-common -Wextra -Wfloat-equal" \
       "-MMD -MP ${cann_includes[*]}"
  echo "METADEF := \$(BASE) -fPIC -DNO_METADEF_ABI_COMPATIABLE -DNO_OPERATOR_IMPL" \
       "-Dgoogle=ascend_private -DOS_TYPE=0"
  echo "OPBUILD := \$(BASE) -fpie -DNO_OPERATOR_IMPL -I $devkit/tools/build/common"
  echo "STANDINS := \$(BASE) -fPIC"
  echo "all: bin/op_build"
  for i in "${!metadef_srcs[@]}"; do rule "${metadef_objs[i]}" "${metadef_srcs[i]}" METADEF; done
  for i in "${!opbuild_srcs[@]}"; do
    rule "${opbuild_objs[i]}" "$opbuild_dir/${opbuild_srcs[i]}" OPBUILD
  done
  rule obj/standins/cann_standins.o standins/cann_standins.cc STANDINS
  # Shared libraries, so that op_build and the op library it dlopens share one OpDef registry.
  echo "lib/libcann_standins.so: obj/standins/cann_standins.o"
  printf '\t$(CXX) -shared -o $@ $^ -Wl,--no-undefined\n'
  echo "lib/libcann_metadef.so: ${metadef_objs[*]} lib/libcann_standins.so"
  printf '\t$(CXX) -shared -Wl,-Bsymbolic -o $@ %s -Llib -lcann_standins %s\n' \
    "${metadef_objs[*]}" "-Wl,-rpath,'\$\$ORIGIN' -Wl,--no-undefined"
  echo "bin/op_build: ${opbuild_objs[*]} lib/libcann_metadef.so lib/libcann_standins.so"
  printf '\t$(CXX) -pie -o $@ %s -Llib -lcann_metadef -lcann_standins -ldl %s\n' \
    "${opbuild_objs[*]}" "-Wl,-rpath,'\$\$ORIGIN/../lib'"
  echo "-include \$(shell find obj -name '*.d' 2>/dev/null)"
} | write_if_changed "$work/tools.mk"

n_tools=$(( ${#metadef_srcs[@]} + ${#opbuild_srcs[@]} + 1 ))
# Compiler output minus the headers' own #pragma message deprecation notes and include traces.
filter_diagnostics() {
  grep -v -e "#pragma message" -e "^In file included from" -e "^ *from " -e "^ *[0-9]* | " \
          -e "^ *| " || true
}
if make -s -q -C "$work" -f tools.mk all 2>/dev/null; then
  say "op_build, metadef and stand-ins: up to date ($n_tools sources, cached in" \
      "build/cann_op_build/)"
else
  if ! make -s -C "$work" -f tools.mk -j2 all > "$work/tools.log" 2>&1; then
    filter_diagnostics < "$work/tools.log" >&2
    die "FAILED to build op_build (full log: build/cann_op_build/tools.log)"
  fi
  say "op_build, metadef and stand-ins: compiled $(grep -c '^compile ' "$work/tools.log") of" \
      "$n_tools sources (${#opbuild_srcs[@]} asc-devkit tools/build/opbuild," \
      "${#metadef_srcs[@]} metadef, 1 stand-in)"
fi

# ---------------------------------------------------------------------------------------------
# Step 2: the op library, staged by op_host/common/cann/build.sh --stage exactly as that script lays
# the sources out in the generated project (each op's <op>_def.cpp as op_host/<op>.cpp, the host
# sources and the kernels flat into op_host/ and op_kernel/).
project="$work/project"
rm -rf "$project"
op_host/common/cann/build.sh --stage "$project" || die "staging the sources failed"
# The template's op_host/CMakeLists.txt: aux_source_directory(op_host) -> OPS_SRC.
mapfile -t ops_src < <(find "$project/op_host" -maxdepth 1 -type f \
                         \( -name '*.cpp' -o -name '*.cc' -o -name '*.c' -o -name '*.cxx' \) | sort)

# The compile command of the template's opbuild(), from `execute_process(COMMAND ${CMAKE_COMPILE}`
# to RESULT_VARIABLE.
read -r -a template <<< "$(awk '
  /^function\(opbuild\)/ {in_fn = 1}
  in_fn && /execute_process\(COMMAND \$\{CMAKE_COMPILE\}/ {grab = 1}
  grab && /RESULT_VARIABLE/ {exit}
  grab {sub(/.*execute_process\(COMMAND/, ""); printf "%s ", $0}
  in_fn && /^endfunction/ {exit}' "$func_cmake")"
[[ ${#template[@]} -gt 0 ]] || die "no compile command found in opbuild() of $func_cmake"
say "template command (asc-tools customize/cmake/func.cmake, opbuild()): ${template[*]}"
template_std=""
for tok in "${template[@]}"; do [[ "$tok" != -std=* ]] || template_std="${tok#-std=}"; done
[[ -n "$template_std" ]] || die "the template command has no -std= to substitute"
[[ " ${template[*]} " == *' ${OPBUILD_OPS_SRC} '* ]] ||
  die "the template command names no \${OPBUILD_OPS_SRC}"

# Sets cmd to the template command with CANN's paths replaced; $1: the -std to use, $2: the output.
template_libs=()
resolve_template() {
  local std="$1" output="$2" i tok arg libs_done=0 here='${CMAKE_CURRENT_SOURCE_DIR}/'
  cmd=()
  for ((i = 0; i < ${#template[@]}; i++)); do
    tok="${template[i]}"
    case "$tok" in
      '${CMAKE_COMPILE}') cmd+=(g++) ;;
      '${OPBUILD_OPS_SRC}') cmd+=("${ops_src[@]}") ;;
      -std=*) cmd+=("-std=$std") ;;
      -I|-L|-o)
        arg="${template[++i]}"
        case "$tok $arg" in
          '-I ${ASCEND_CANN_PACKAGE_PATH}/include') cmd+=("${cann_includes[@]}") ;;
          '-I ${CMAKE_CURRENT_SOURCE_DIR}/'*)  # opbuild() is called from op_host/CMakeLists.txt
            cmd+=(-I "$project/op_host/${arg#"$here"}") ;;
          '-L ${ASCEND_CANN_PACKAGE_PATH}/lib64') cmd+=(-L "$work/lib") ;;
          '-o ${OPBUILD_OUT_DIR}/'*) cmd+=(-o "$output") ;;
          *) die "unexpected argument in the template command: $tok $arg" ;;
        esac ;;
      -l*)  # exe_graph, register, tiling_api: the libraries of step 1
        template_libs+=("$tok")
        if [[ $libs_done -eq 0 ]]; then
          cmd+=(-lcann_metadef -lcann_standins "-Wl,-rpath,\$ORIGIN/../lib"); libs_done=1
        fi ;;
      *'${'*) die "unexpected variable in the template command: $tok" ;;
      *) cmd+=("$tok") ;;
    esac
  done
}

out="$work/out"
rm -rf "$out"
mkdir -p "$out"
template_libs=()
resolve_template c++17 "$out/libascend_all_ops.so"
say "-I \${ASCEND_CANN_PACKAGE_PATH}/include -> metadef inc/external, inc/external/asc, inc," \
    "pkg_inc, asc-devkit include/utils, build/cann_op_build/standins"
say "${template_libs[*]} -> build/cann_op_build/lib: libcann_metadef.so (metadef's OpDef" \
    "registry, AscendString, RuntimeAttrs) + libcann_standins.so (dlog, PlatformAscendC)"
# op_host is C++17 (the validation and tiling the CPU path runs too); op_host/common/cann/build.sh sets
# the generated project to it, the one substitution made here.
grep -q "sed -i 's/-std=c++11/-std=c++17/g'" op_host/common/cann/build.sh ||
  die "op_host/common/cann/build.sh does not set the generated project to -std=c++17"
say "-std=$template_std -> -std=c++17, as op_host/common/cann/build.sh sets the generated project"
library_ok=1
(cd "$project/op_host" && "${cmd[@]}") > "$work/op_library.log" 2>&1 || library_ok=0
if [[ $library_ok -eq 0 ]]; then
  sed "s|$project/||g" "$work/op_library.log" | filter_diagnostics | awk '!seen[$0]++' >&2
  die "FAILED to compile the op library (full log: build/cann_op_build/op_library.log)"
fi
say "op library: ${#ops_src[@]} sources of project/op_host -> out/libascend_all_ops.so" \
    "(-std=c++17)"

# ---------------------------------------------------------------------------------------------
# Step 3: op_build <lib> <out>, as opbuild() runs it with the template's default preset: no
# OPS_PROJECT_NAME/OPS_DIRECT_ACCESS_PREFIX (not passed), ENABLE_SOURCE_PACAKGE set to the empty
# ENABLE_SOURCE (CMake then clears it; op_cfg_generator.cpp reads ENABLE_SOURCE_PACKAGE anyway),
# no ASCEND_VENDOR_NAME etc. (ASCEND_PACK_SHARED_LIBRARY is False). The generators' other
# variables are cleared too, so the caller's environment cannot change the output.
if ! env -u OPS_PROJECT_NAME -u OPS_DIRECT_ACCESS_PREFIX -u ENABLE_SOURCE_PACAKGE \
         -u ENABLE_SOURCE_PACKAGE -u ASCEND_VENDOR_NAME -u OPS_PRODUCT_NAME -u SYSTEM_PROCESSOR \
         -u OPS_PROTO_SEPARATE -u OPS_ACLNN_GEN -u ACLNN_OPTIONAL_PARAM_CHECK \
         "$work/bin/op_build" "$out/libascend_all_ops.so" "$out"; then
  die "FAILED: op_build exited with an error"
fi
mapfile -t ops < <(grep -ho '^\[[A-Za-z0-9_]*\]' "$out"/aic-*-ops-info.ini 2>/dev/null |
                   tr -d '[]' | awk '!seen[$0]++')
mapfile -t socs < <(cd "$out" && ls aic-*-ops-info.ini 2>/dev/null |
                    sed 's/^aic-\(.*\)-ops-info\.ini$/\1/')
[[ ${#ops[@]} -gt 0 ]] || die "FAILED: op_build generated no ops-info .ini"
say "op_build: ${#ops[@]} OpDefs (${ops[*]}) -> build/cann_op_build/out/:" \
    "$(cd "$out" && ls aclnn_*.h aclnn_*.cpp op_proto.* 2>/dev/null | paste -sd' ')"
say "ops-info .ini for ${#socs[@]} SoCs: ${socs[*]}" \
    "($(cd "$out" && ls aic-*-ops-info.ini | paste -sd' '))"

# ---------------------------------------------------------------------------------------------
# Step 4: what CANN's build takes from op_build's ops-info: the SoCs (one per AddConfig) must be
# those op_host/common/cann/build.sh builds, and every OpDef's inputs, outputs and attributes those
# of its op description as build.sh gives it to msopgen (gen_op_signature.msopgen_description: the
# op JSON's inputs and outputs, the spec's attributes): names, parameter types, dtype columns (one
# kernel binary each), attribute types and defaults. tests/python/host/test_op_signature.py holds the
# JSONs' inputs and outputs to the operators' signatures, test_cann_op_json.py the list ops'
# columns to ApplyFusedEmaAdamListOpDefColumns, and op_host.test_apply_fused_ema_adam_list_opdef those to CANN's
# kernel selection.
read -r -a build_units <<< "$(sed -n 's/^compute_units=(\([^)]*\)).*/\1/p' op_host/common/cann/build.sh)"
[[ "$(printf '%s\n' "${socs[@]}" | sort)" == "$(printf '%s\n' "${build_units[@]}" | sort)" ]] ||
  die "FAILED: the OpDefs advertise ${socs[*]}, op_host/common/cann/build.sh builds ${build_units[*]}"
say "SoCs: op_host/common/cann/build.sh builds every SoC the OpDefs advertise (${build_units[*]})"
python3 - "$out" op_host "$repo/cmake/gen_op_signature.py" <<'PY' || die "FAILED: the ops-info differs from the op descriptions"
import configparser, importlib.util, pathlib, sys
out, op_host = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
spec = importlib.util.spec_from_file_location("gen_op_signature", sys.argv[3])
gen = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = gen  # its dataclasses look their module up
spec.loader.exec_module(gen)
JSON_NAME = {"float32": "float", "float16": "float16", "bfloat16": "bfloat16", "int64": "int64",
             "uint8": "uint8"}
ok = True
for ini in sorted(out.glob("aic-*-ops-info.ini")):
    info = configparser.ConfigParser()
    info.read(ini)
    for path in sorted(op_host.glob("*/cann/*.json")):
        desc = gen.msopgen_description(path)  # what build.sh gives msopgen
        section = info[desc["op"]]
        for side in ("input", "output"):
            for k, param in enumerate(desc[f"{side}_desc"]):
                got = [JSON_NAME[d] for d in section[f"{side}{k}.dtype"].split(",")]
                name, kind = section[f"{side}{k}.name"], section[f"{side}{k}.paramType"]
                if (name, kind, got) != (param["name"], param["param_type"], param["type"]):
                    ok = False
                    print(f"cann-op-build: {ini.name} [{desc['op']}] {side}{k}: {name} {kind} "
                          f"{got} != {path.name}'s {param['name']} {param['param_type']} "
                          f"{param['type']}")
            if f"{side}{len(desc[f'{side}_desc'])}.name" in section:
                ok = False
                print(f"cann-op-build: {ini.name} [{desc['op']}] has more {side}s than {path.name}")
        names = section.get("attr.list", "")
        if names.split(",") != [a["name"] for a in desc["attr"]]:
            ok = False
            print(f"cann-op-build: {ini.name} [{desc['op']}] attributes {names} != the spec's")
        for attr in desc["attr"]:
            key = f"attr_{attr['name']}"
            got = (section.get(f"{key}.type"), section.get(f"{key}.paramType"),
                   section.get(f"{key}.defaultValue"))
            want = (attr["type"], attr["param_type"], attr["default_value"])
            same_default = got[2] is not None and (
                float(got[2]) == float(want[2]) if attr["type"] in ("float", "int") else
                got[2].lower() == want[2].lower())
            if got[:2] != want[:2] or not same_default:
                ok = False
                print(f"cann-op-build: {ini.name} [{desc['op']}] attribute {attr['name']}: "
                      f"{got} != the spec's {want}")
        if ini.name.startswith("aic-ascend910b-"):
            columns = len(desc["input_desc"][0]["type"])
            print(f"cann-op-build: {desc['op']}: {columns} dtype columns (kernel binaries), "
                  f"as {path.name} lists them")
sys.exit(0 if ok else 1)
PY

# Step 5: the op types are the package's own. A custom package's operator wins over CANN's
# built-in one of the same type (op-plugin's GetOpApiFuncAddr and opbase's indv_collector.cpp
# search the vendors first), so an OpDef named like one of CANN's would replace it for every
# program in the environment (docs/ACLNN.md, "The op type"). With CANN_OPS_NN_DIR (a snapshot of
# hicann/ops-nn, CANN's own operators) every OP_ADD there is compared; without it, CANN's
# ApplyFusedEmaAdam, the one known to clash, is.
builtin=(ApplyFusedEmaAdam)
builtin_from="CANN's ApplyFusedEmaAdam (set CANN_OPS_NN_DIR to a hicann/ops-nn snapshot for all of CANN's op types)"
if [[ -n "${CANN_OPS_NN_DIR:-}" ]]; then
  mapfile -t builtin < <(grep -rhoE 'OP_ADD\(\s*[A-Za-z0-9_]+' "$CANN_OPS_NN_DIR" --include='*_def.cpp' |
                         sed -E 's/OP_ADD\(\s*//' | sort -u)
  [[ ${#builtin[@]} -gt 0 ]] || die "FAILED: no OP_ADD in CANN_OPS_NN_DIR=$CANN_OPS_NN_DIR"
  builtin_from="${#builtin[@]} op types of CANN's hicann/ops-nn"
fi
for op in "${ops[@]}"; do
  for b in "${builtin[@]}"; do
    [[ "$op" != "$b" ]] || die "FAILED: the OpDef $op has the type of a CANN built-in operator: installing the package would replace CANN's"
  done
done
say "op types: ${ops[*]}: none is one of $builtin_from"

# Step 6: the declarations.
python3 tools/cann_op_build/aclnn_decl_compare.py "$out" include/aclnnop
