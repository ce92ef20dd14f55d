# Two commands: `make demo` and `make test`. Each bootstraps what it needs (a local .venv with
# pinned packages, the C++ build, the Python extension) and reuses it when already set up.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
# One Release tree for the package and the C++ tests (pip builds it; ctest runs in it).
BUILD := build/release
JOBS ?= $(shell nproc)

# Everything the package's native build reads: a change to any of these rebuilds it (incrementally).
# The C++ tests' sources are not among them: `make test` builds the tree incrementally itself, so a
# test edit recompiles that test and does not reinstall the package.
NATIVE_SOURCES := $(shell find CMakeLists.txt cmake pyproject.toml twin op_kernel op_host runtime csrc include \
                    -type f \( -name '*.cpp' -o -name '*.h' -o -name 'CMakeLists.txt' -o -name '*.toml' \
                    -o -name '*.c' -o -name '*.map' -o -name '*.cmake' -o -name '*_signature.json' \
                    -o -name 'gen_op_signature.py' \) 2>/dev/null)
TEST_SOURCES := $(shell find tests/cpp -type f 2>/dev/null)
# The package's Python files by name (not content): the editable install maps each file, so adding
# or removing a module reinstalls the package; editing one needs nothing.
PY_MODULES := build/.python-modules
# The torch-npu 2.13.0 wheels, unpacked (never installed): the headers (CANN's ACL headers among
# them: the reference the C API headers are tested against) and each library's exported symbols.
TORCH_NPU := third_party/torch_npu
TORCH_NPU_STAMP := $(TORCH_NPU)/.stamp
ASAN_BUILD := build/asan
SAMPLE_BUILD := build/aclnn_sample
# The compiler cache (ccache, from requirements-dev.txt) in front of every compiler the builds of
# `make test` run, so that a fresh clone compiles only what no earlier build on this machine has:
# paths are hashed relative to the checkout (CCACHE_BASEDIR, and the build folder left out of the
# hash), so clones in other folders share the cache (~/.cache/ccache).
CCACHE := $(abspath $(VENV))/bin/ccache
COMPILER_LAUNCHER := -DCMAKE_C_COMPILER_LAUNCHER=$(CCACHE) -DCMAKE_CXX_COMPILER_LAUNCHER=$(CCACHE)
export CCACHE_BASEDIR := $(CURDIR)
export CCACHE_NOHASHDIR := true

.PHONY: demo test check cpp python venv clean sanitize sample third_party/torch_npu npu-check npu-prerequisites ascendc-check \
        aarch64-check fuzz fuzz-short

# The main job: train a small model with FusedEmaAdamW through the kernel, then the C++ aclnn
# sample, then the golden-compare sweep of the kernel on the CPU twin (short mode).
demo: python
	$(PY) -m ascend_ema_adam train-demo --out build/demo/train_demo.png
	$(MAKE) --no-print-directory sample
	$(PY) -m ascend_ema_adam check --quick

# The prerequisites build side by side (the sanitizer tree while the package builds, npu-check
# beside them: one build's serial steps leave a core to the others), each one's output printed
# whole when it ends. pytest runs on every core (pytest-xdist), a file's tests on one worker (a
# module fixture, such as the spawned ranks of test_distributed and test_integration_*, runs
# once), with its share of the cores for torch's threads (tests/python/conftest.py).
# AEA_REQUIRE_ENGINES: the engines' tests fail instead of skipping when their engine is missing.
test:
	$(MAKE) --no-print-directory -j $(JOBS) --output-sync=target test-prerequisites
	AEA_REQUIRE_ENGINES=1 AEA_CPP_BIN=$(abspath $(BUILD))/bin \
	    $(PY) -m pytest -q -n $(JOBS) --dist loadfile
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)
.PHONY: test-prerequisites
test-prerequisites: cpp sanitize npu-check fuzz-short $(VENV)/.engines.stamp

# The C API under libFuzzer (clang, ASan + UBSan; tests/fuzz/README.md): every target on its seed
# corpus, then fuzzing, FUZZ_S seconds per target in all, JOBS targets at a time. Prints `fuzz: N
# targets, E executions, F findings` and fails on any finding. `make test` runs the short form
# (about a minute here).
# `make fuzz` then runs FUZZ_EXAMPLES fresh sequences of the optimizer's state machine
# (tests/python/optim/test_optim_stateful.py; make test runs 300, the same ones every time).
FUZZ_S ?= 600
FUZZ_EXAMPLES ?= 5000
fuzz: python
	FUZZ_S=$(FUZZ_S) JOBS=$(JOBS) tests/fuzz/run.sh
	AEA_STATEFUL_EXAMPLES=$(FUZZ_EXAMPLES) HYPOTHESIS_PROFILE=dev $(PY) -m pytest -q \
	    tests/python/optim/test_optim_stateful.py
fuzz-short: $(VENV)/.requirements.stamp
	FUZZ_S=30 JOBS=$(JOBS) tests/fuzz/run.sh

# The NPU-only sources compiled against the real torch_npu / op-plugin / ACL headers of the
# torch-npu 2.13.0 wheel (downloaded and unpacked, never installed: without CANN an installed
# torch_npu breaks `import torch`), and the ABI check: every torch_npu / op-plugin symbol they need
# is exported by the x86_64 and aarch64 wheels (tools/npu_abi_check/run.sh).
# Then op_host/*/cann/ against CANN's registration headers, when CANN_METADEF_DIR and
# ASC_DEVKIT_DIR name checkouts of hicann/metadef and asc-devkit, and CANN's own op_build on our
# OpDefs, built from those checkouts and hicann/asc-tools' project template (ASC_TOOLS_DIR): the
# aclnn declarations it generates must be include/aclnnop/'s (each says SKIPPED otherwise).
# Then CANN's host stack on the CPU (tools/cann_host/run.sh): op_build's generated aclnn, opbase's
# executor, metadef and CANN's platform library compiled from snapshots (CANN_OPBASE_DIR,
# CANN_RUNTIME_DIR beside the above), the closed runtime stood in, our kernels launched on the twin:
# the aclnn sample and a case table bit-identical to our CPU aclnn layer (SKIPPED without them).
# Last, the real torch_npu 2.13.0 wheel in a venv of its own with stand-in CANN libraries, our
# package built there with its NPU extension, our ops and FusedEmaAdamW on device="npu" tensors
# bit-identical to the same calls on CPU tensors (tools/torch_npu_run/run.sh; SKIPPED likewise).
npu-check: npu-prerequisites build/npu-check.stamp ascendc-check $(TORCH_NPU_STAMP)
	@tools/cann_registration_check/run.sh
	@tools/cann_op_build/run.sh
	@tools/cann_host/run.sh
	@tools/torch_npu_run/run.sh
# What CANN's host stack needs from apt, checked (and installed) before anything else runs.
npu-prerequisites:
	@if [ -n "$$CANN_OPBASE_DIR" ] && [ -n "$$CANN_RUNTIME_DIR" ]; then tools/cann_host/prerequisites.sh; fi
build/npu-check.stamp: $(TORCH_NPU_STAMP) $(VENV)/.python.stamp tools/npu_abi_check/run.sh \
                       tools/npu_abi_check/abi_check.py \
                       $(wildcard csrc/ops/*/*.cpp csrc/ops/*/*.h op_host/*/*.h op_host/*/*_signature.json \
                                  tools/npu_abi_check/selftest/*)
	NPU_CHECK_LAUNCHER=$(CCACHE) tools/npu_abi_check/run.sh $(TORCH_NPU) $(PY) $(BUILD)
	mkdir -p build && touch $@

# The aarch64 hosts of Atlas A2/A3 (Kunpeng 920), not part of `make test` (it takes longer than
# CI's budget): the package cross-built for aarch64 (cmake/aarch64-linux-gnu.cmake, Debian's cross
# GCC 12 and GCC 11, the oldest supported) against PyPI's aarch64 torch 2.7.1 (AARCH64_TORCH: the
# rows to build against; newer rows' aarch64 wheels are CUDA builds and say SKIPPED), then, under
# qemu-aarch64 with a Debian arm64 CPython (no binfmt registration): ctest, the C aclnn sample, a
# Python subset and digests of every layer that must equal this machine's; the NPU sources compiled
# for aarch64 against the aarch64 torch_npu wheels with the ABI check on those objects; GCC 13 from a
# Debian 13 root (tools/aarch64/run.sh, which lists its steps and settings).
# Outputs under build/aarch64/ (prefix-torch-<v>/ascend_ema_adam/{lib,include}: the C library).
aarch64-check: $(VENV)/.python.stamp
	tools/aarch64/run.sh

# The AscendC kernels (op_kernel/*.cpp) type-checked, then run once per tiling key, against the real AscendC
# headers, then computed through the real AscendC library over emulated intrinsics with a pipe-hazard checker,
# bit-identical to the golden (beside CANN's own ApplyFusedEmaAdam kernel when CANN_OPS_NN_DIR names a
# hicann/ops-nn work tree): needs work trees of mirror-cann/asc-devkit and hicann/asc-tools
# (tools/ascendc_check/run.py); without them it is skipped, and says so.
ASCENDC_CHECK_ARGS ?= --run --emulate
ascendc-check: $(VENV)/.python.stamp
	@if [ -n "$$ASC_DEVKIT_DIR" ] && [ -n "$$ASC_TOOLS_DIR" ]; then tools/ascendc_check/run.py $(ASCENDC_CHECK_ARGS); \
	else echo "npu-check: AscendC kernel check SKIPPED: set ASC_DEVKIT_DIR and ASC_TOOLS_DIR (see tools/ascendc_check/run.py)"; fi

check: python
	$(PY) -m ascend_ema_adam check

# --no-compile: the modules a run imports are byte-compiled when first imported, not the whole of
# torch at install (half of the install's time).
venv: $(VENV)/.requirements.stamp
$(VENV)/.requirements.stamp: requirements-dev.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check --no-compile -r requirements-dev.txt
	touch $@

# The Python package, built from the CMake project by scikit-build-core in $(BUILD) (editable, so
# the sources under ascend_ema_adam/ are used directly). The same tree builds the C++ test programs
# (twin rule checks, tiling, the C API), so every source is compiled once in Release.
python: $(VENV)/.python.stamp
$(VENV)/.python.stamp: $(VENV)/.requirements.stamp $(TORCH_NPU_STAMP) $(NATIVE_SOURCES) $(PY_MODULES)
	$(PY) -m pip install --quiet --no-build-isolation --no-deps --disable-pip-version-check \
	    -Ceditable.rebuild=false -Cbuild-dir=$(BUILD) -Ccmake.define.AEA_BUILD_TESTS=ON \
	    -Ccmake.define.CMAKE_C_COMPILER_LAUNCHER=$(CCACHE) -Ccmake.define.CMAKE_CXX_COMPILER_LAUNCHER=$(CCACHE) -e .
	touch $@

$(PY_MODULES): FORCE
	@mkdir -p build && find ascend_ema_adam -name '*.py' | sort > $@.new && \
	    { cmp -s $@.new $@ && rm $@.new || mv $@.new $@; }
.PHONY: FORCE
FORCE:

# The C++ test programs: the package's tree, brought up to date (a test edit rebuilds only that test).
cpp: python
	PATH=$(abspath $(VENV))/bin:$$PATH cmake --build $(BUILD) -j $(JOBS)

# The aclnn sample (examples/aclnn_sample), built like a user would: against the installed package.
sample: python
	PATH=$(abspath $(VENV))/bin:$$PATH cmake -S examples/aclnn_sample -B $(SAMPLE_BUILD) -G Ninja \
	    -DPython3_EXECUTABLE=$(abspath $(PY)) > /dev/null
	PATH=$(abspath $(VENV))/bin:$$PATH cmake --build $(SAMPLE_BUILD)
	$(SAMPLE_BUILD)/aclnn_apply_fused_ema_adam_sample

# The C API tests (ctest label aclnn) under AddressSanitizer + UndefinedBehaviorSanitizer. The tree
# builds only what those tests run: the native loops of this machine's instruction set (the one the
# tests pick), and everything at -O0 (the same checks on the same runs; the native loops at -O1 with
# ASan take minutes per file to compile, at -O0 half a minute).
SANITIZE_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
sanitize: $(ASAN_BUILD)/.stamp
$(ASAN_BUILD)/.stamp: $(VENV)/.requirements.stamp $(TORCH_NPU_STAMP) $(NATIVE_SOURCES) $(TEST_SOURCES)
	PATH=$(abspath $(VENV))/bin:$$PATH cmake -S . -B $(ASAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Debug \
	    -DAEA_BUILD_TESTS=ON -DAEA_BUILD_PYTHON=OFF -DAEA_NATIVE_ISAS=host -DAEA_OPTIMIZE=-O0 $(COMPILER_LAUNCHER) \
	    -DCMAKE_CXX_FLAGS="$(SANITIZE_FLAGS)" -DCMAKE_C_FLAGS="$(SANITIZE_FLAGS)" > /dev/null
	PATH=$(abspath $(VENV))/bin:$$PATH cmake --build $(ASAN_BUILD) -j $(JOBS) --target aclnn_tests
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
	    ctest --test-dir $(ASAN_BUILD) -L aclnn --output-on-failure
	touch $@

# Downloads the torch-npu 2.13.0 wheels for x86_64 and aarch64 (about 45 MB each, never installed;
# kept in third_party/wheels/ for tools/torch_npu_run) and unpacks the headers and each library's
# exported symbols (tools/npu_abi_check/unpack_torch_npu.py).
third_party/torch_npu: $(TORCH_NPU_STAMP)
$(TORCH_NPU_STAMP): tools/npu_abi_check/unpack_torch_npu.py | $(VENV)/.requirements.stamp
	rm -rf $(TORCH_NPU)
	mkdir -p third_party/wheels
	for arch in x86_64 aarch64; do $(PY) -m pip download --quiet --disable-pip-version-check --no-deps \
	    --only-binary=:all: --platform manylinux_2_28_$$arch --python-version 3.11 torch-npu==2.13.0 \
	    -d third_party/wheels || exit 1; done
	$(PY) tools/npu_abi_check/unpack_torch_npu.py third_party/wheels $(TORCH_NPU)
	test -f $(TORCH_NPU)/include/third_party/acl/inc/acl/acl.h
	touch $@

# The distributed training engines the integration tests run (ascend_ema_adam.integrations,
# tests/python/integrations/test_integration_*.py): their extras of pyproject.toml (the engines' pins live
# there), installed into .venv once, after torch and without build isolation (DeepSpeed builds
# against the CPU torch installed), what they bring pinned by requirements-engines.txt. Only the
# requirements: the package stays as `python` built it. megatron-core goes in without its declared
# dependencies (pyproject.toml says why).
ENGINE_EXTRAS := deepspeed megatron
PIP_FLAGS_megatron := --no-deps
extra_requirements = $(shell $(PY) -c 'import tomllib; \
    print(*tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]["$(1)"])')
.PHONY: engines
engines: $(VENV)/.engines.stamp
# (After the package's own install: two pips never write .venv at once under make -j.)
$(VENV)/.engines.stamp: $(VENV)/.requirements.stamp pyproject.toml requirements-engines.txt | $(VENV)/.python.stamp
	$(foreach extra,$(ENGINE_EXTRAS),$(PY) -m pip install --quiet --no-build-isolation --no-compile \
	    --disable-pip-version-check -c requirements-engines.txt $(PIP_FLAGS_$(extra)) \
	    $(call extra_requirements,$(extra)) &&) true
	touch $@

# The supported stacks, not part of `make test`: each row of tools/compat/versions.toml (the
# README's "Supported versions": the oldest, MindSpeed's torch 2.7.1 + torch_npu 2.7.1 on Python
# 3.10, to the newest, what `make test` uses) in a venv of its own under build/compat/<row>/ with
# cached downloads (build/compat/wheels/; a row whose downloads are impossible says SKIPPED): the
# package built against that torch as a user builds it, the CPU Python suite, the error-path test,
# the NPU sources against that row's torch_npu headers with the ABI check, and with the CANN
# snapshots the real torch_npu of the row on stand-in CANN libraries (tools/compat/compat.py).
# COMPAT_ARGS: e.g. --rows oldest,newest or --steps python,venv,build,tests.
COMPAT_ARGS ?=
.PHONY: compat
compat:
	$(PYTHON) tools/compat/compat.py $(COMPAT_ARGS)

# CPU benchmark, not part of `make test`: the fused op vs torch fused AdamW and DeepSpeed CPUAdam
# (each + a lerp EMA) and a bandwidth roofline; table on stdout, JSON and PNG in build/bench.
# Installs the bench extra once (DeepSpeed JIT-builds its CPU Adam on first use, ~1 min, cached
# under ~/.cache/torch_extensions). BENCH_ARGS=--quick for a run under a minute;
# BENCH_ARGS=--zero-offload for a DeepSpeed ZeRO-2 offload engine step instead (~8 GB of memory).
.PHONY: bench
BENCH_ARGS ?=
bench: $(VENV)/.bench.stamp
	$(PY) -m ascend_ema_adam bench --out build/bench $(BENCH_ARGS)

$(VENV)/.bench.stamp: $(VENV)/.python.stamp pyproject.toml
	$(PY) -m pip install --quiet --no-build-isolation --disable-pip-version-check \
	    -Ceditable.rebuild=false -e '.[bench]'
	touch $@

clean:
	rm -rf build $(VENV)
