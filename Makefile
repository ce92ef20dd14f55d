# Two commands: `make demo` and `make test`. Each bootstraps what it needs (a local .venv with
# pinned packages, the C++ build, the Python extension) and reuses it when already set up.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
CPP_BUILD := build/cpp
JOBS ?= $(shell nproc)

# Everything the native build reads: a change to any of these rebuilds (incrementally).
NATIVE_SOURCES := $(shell find CMakeLists.txt pyproject.toml twin op_kernel op_host runtime csrc tests/cpp \
                    -type f \( -name '*.cpp' -o -name '*.h' -o -name 'CMakeLists.txt' -o -name '*.toml' \) 2>/dev/null)

.PHONY: demo test check cpp python venv clean

demo: python
	$(PY) -m ascend_ema_adam check

test: python cpp
	AEA_CPP_BIN=$(abspath $(CPP_BUILD))/bin $(PY) -m pytest -q
	ctest --test-dir $(CPP_BUILD) --output-on-failure -j $(JOBS)

check: python
	$(PY) -m ascend_ema_adam check

venv: $(VENV)/.requirements.stamp
$(VENV)/.requirements.stamp: requirements-dev.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	touch $@

# The Python package, built from the CMake project by scikit-build-core (editable, so the
# sources under ascend_ema_adam/ are used directly; build/ keeps the CMake cache).
python: $(VENV)/.python.stamp
$(VENV)/.python.stamp: $(VENV)/.requirements.stamp $(NATIVE_SOURCES)
	$(PY) -m pip install --quiet --no-build-isolation --no-deps --disable-pip-version-check \
	    -Ceditable.rebuild=false -e .
	touch $@

# C++ test programs (twin rule checks, tiling, kernel) in their own CMake build tree.
cpp: $(CPP_BUILD)/.stamp
$(CPP_BUILD)/.stamp: $(VENV)/.requirements.stamp $(NATIVE_SOURCES)
	PATH=$(abspath $(VENV))/bin:$$PATH cmake -S . -B $(CPP_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release \
	    -DAEA_BUILD_TESTS=ON -DAEA_BUILD_PYTHON=OFF > /dev/null
	PATH=$(abspath $(VENV))/bin:$$PATH cmake --build $(CPP_BUILD) -j $(JOBS)
	touch $@

clean:
	rm -rf build $(VENV)
