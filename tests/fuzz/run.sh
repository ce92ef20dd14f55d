#!/usr/bin/env bash
# `make fuzz` / `make fuzz-short`: builds the libFuzzer targets (tests/fuzz/README.md) with clang
# into build/fuzz and runs each one: first every input of its seed corpus (tests/fuzz/corpus/<target>,
# read only) and what earlier runs found (build/fuzz/corpus/<target>), then fuzzing until FUZZ_S
# seconds have passed (libFuzzer's -max_total_time: the corpus's run counts).
# Prints `fuzz: N targets, E executions, F findings` and exits non-zero on any finding; a finding's
# input lands in build/fuzz/findings/<target>/ (replay: build/fuzz/bin/<target> <file>).
#
#   FUZZ_S        seconds per target (default 60; 0: the seed corpus once, no fuzzing); JOBS targets run at once
#   FUZZ_TARGETS  the targets to run (default: all three)
#   FUZZ_MERGE=1  afterwards, merge what the run found into the seed corpus (coverage-minimal)
set -euo pipefail
cd "$(dirname "$0")/../.."
repo="$PWD"
build="$repo/build/fuzz"
seconds="${FUZZ_S:-60}"
targets="${FUZZ_TARGETS:-fuzz_apply_fused_ema_adam fuzz_apply_fused_ema_adam_list fuzz_apply_fused_ema_adam8bit_list}"
jobs="${JOBS:-$(nproc)}"

# clang and its libFuzzer runtime, from Debian when missing: apt-get install clang libclang-rt-<its version>-dev
probe='extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }'
if ! echo "$probe" | clang++ -x c++ -fsanitize=fuzzer -o /dev/null - 2> /dev/null; then
    echo "fuzz: installing clang and its libFuzzer runtime (apt-get)"
    mkdir -p "$repo/build"
    {
        apt-get update -qq &&
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends clang &&
        major=$(clang --version | sed -n 's/.*clang version \([0-9]*\).*/\1/p' | head -1) &&
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "libclang-rt-$major-dev"
    } > "$repo/build/fuzz-apt.log" 2>&1 ||
        { tail "$repo/build/fuzz-apt.log" >&2; echo "fuzz: installing clang failed" >&2; exit 1; }
fi

# The whole tree instrumented (the runtime's branches are the coverage), optimized enough to run
# thousands of calls a minute under the sanitizers.
flags="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -g"
# through the compiler cache where .venv has it (the Makefile's COMPILER_LAUNCHER says why)
launcher=()
if [ -x "$repo/.venv/bin/ccache" ]; then
    ccache="$repo/.venv/bin/ccache"
    launcher=(-DCMAKE_C_COMPILER_LAUNCHER="$ccache" -DCMAKE_CXX_COMPILER_LAUNCHER="$ccache")
    export CCACHE_BASEDIR="$repo" CCACHE_NOHASHDIR=true
fi
if [ ! -f "$build/build.ninja" ]; then
    PATH="$repo/.venv/bin:$PATH" cmake -S . -B "$build" -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
        "${launcher[@]}" \
        -DCMAKE_BUILD_TYPE=Debug -DAEA_BUILD_TESTS=OFF -DAEA_BUILD_PYTHON=OFF -DAEA_BUILD_FUZZERS=ON \
        -DAEA_NATIVE_ISAS=host -DAEA_OPTIMIZE=-O1 -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_C_FLAGS="$flags" \
        > "$build.configure.log" 2>&1 ||
        { tail -20 "$build.configure.log" >&2; exit 1; }
fi
PATH="$repo/.venv/bin:$PATH" cmake --build "$build" -j "$jobs" --target fuzzers > "$build.log" 2>&1 ||
    { grep -A8 -e 'error' -e FAILED "$build.log" | head -40 >&2; exit 1; }

export ASAN_OPTIONS="abort_on_error=1:detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"  # the runtime's pools grow
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
# One target: its corpus, then fuzzing; its exit status in $build/$target.status (0: no finding).
run_target() {
    local target="$1"
    local seeds="$repo/tests/fuzz/corpus/$target" work="$build/corpus/$target" found="$build/findings/$target"
    local log="$build/$target.log" status=0
    mkdir -p "$seeds" "$work" "$found"
    local common=(-len_control=0 -max_len=4096 -print_final_stats=1 -artifact_prefix="$found/" -timeout=60
                  -rss_limit_mb=4096)
    # every seed and the inputs earlier runs found, then fuzzing (new inputs go to the working copy)
    if [ "$seconds" = 0 ]; then
        "$build/bin/$target" "${common[@]}" -runs=0 "$seeds" > "$log" 2>&1 || status=1
    else
        "$build/bin/$target" "${common[@]}" -max_total_time="$seconds" "$work" "$seeds" > "$log" 2>&1 || status=1
    fi
    if [ "${FUZZ_MERGE:-0}" = 1 ] && [ "$status" = 0 ]; then
        "$build/bin/$target" -merge=1 -len_control=0 -max_len=4096 "$seeds" "$work" >> "$log" 2>&1
    fi
    echo "$status" > "$build/$target.status"
}

# JOBS targets at a time (libFuzzer runs each in one process), reported in the order given.
pids=()
for target in $targets; do
    rm -f "$build/$target.status"
    run_target "$target" &
    pids+=($!)
    if (( ${#pids[@]} >= jobs )); then wait "${pids[0]}" || true; pids=("${pids[@]:1}"); fi
done
for pid in "${pids[@]}"; do wait "$pid" || true; done
count=0 executions=0 findings=0
for target in $targets; do
    log="$build/$target.log"
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | awk '{s += $1} END {print s + 0}')
    cover=$(grep -oE 'cov: [0-9]+' "$log" | tail -1 | sed 's/cov: //' || true)
    executions=$((executions + runs))
    count=$((count + 1))
    if [ "$(cat "$build/$target.status" 2> /dev/null || echo 1)" != 0 ]; then
        findings=$((findings + 1))
        grep -m3 -e 'fuzz finding' -e 'ERROR: ' -e 'runtime error' "$log" >&2 || tail -20 "$log" >&2
        echo "fuzz: $target: a finding (log: ${log#"$repo"/}, input: ${build#"$repo"/}/findings/$target/)" >&2
    else
        echo "fuzz: $target: $runs executions, coverage ${cover:-?} edges, no finding"
    fi
done
echo "fuzz: $count targets, $executions executions, $findings findings"
[ "$findings" = 0 ]
