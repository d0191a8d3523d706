# codeduet: `make demo` (everything + a real scenario with the local model), `make test` (everything + tests),
# `make check` (the fast tier: ruff and the tests that need no Docker and no model).
PY      ?= python3
VENV    ?= .venv
BIN     := $(VENV)/bin
PYTHON  := $(BIN)/python
SCENARIO ?= scenarios/primes.yaml
PYTEST_ARGS ?=

.PHONY: setup system-deps llama-wheel venv model image demo check test test-fast bench clean

setup: system-deps venv model image

# Debian packages: mmdebstrap builds the sandbox rootfs offline; chromium renders the HTML export in tests.
system-deps:
	@need=""; command -v mmdebstrap >/dev/null || need="$$need mmdebstrap"; \
	 command -v chromium >/dev/null || need="$$need chromium"; \
	 if [ -n "$$need" ]; then \
	   if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$need; \
	   else echo "please install:$$need (sudo apt-get install$$need)"; exit 3; fi; fi

$(PYTHON):
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

# llama-cpp-python has no binary wheel: it is compiled once (5-7.5 min on 2 cores) into a wheelhouse of ours, for
# this CPU but without AMX: llama.cpp's AMX matrix kernels (0.3.36) crash with a segfault on the first token on
# Xeons that have AMX (measured 2026-11-24). pip's own cache is not used: it may hold a build with AMX.
# ray: the optional `--ray` batch fan-out (agents/scaleout/); installed here so its tests run in CI.
LLAMA_VERSION := 0.3.36
LLAMA_FLAGS := -mno-amx-tile -mno-amx-int8 -mno-amx-bf16
WHEELHOUSE ?= $(HOME)/.cache/codeduet/wheels/llama-cpp-noamx

llama-wheel: $(PYTHON)
	@ls $(WHEELHOUSE)/llama_cpp_python-$(LLAMA_VERSION)-*.whl >/dev/null 2>&1 || { \
	  echo "compiling llama-cpp-python $(LLAMA_VERSION) (llama.cpp, without AMX): 5-7.5 minutes on 2 cores"; \
	  CMAKE_ARGS="-DCMAKE_C_FLAGS='$(LLAMA_FLAGS)' -DCMAKE_CXX_FLAGS='$(LLAMA_FLAGS)'" \
	    $(BIN)/pip wheel -q --no-deps --no-cache-dir -w $(WHEELHOUSE) llama-cpp-python==$(LLAMA_VERSION); }

venv: llama-wheel
	$(BIN)/pip install -q --find-links $(WHEELHOUSE) -e ".[local,test,ray]"
	$(BIN)/pip install -q --no-deps --force-reinstall $(WHEELHOUSE)/llama_cpp_python-$(LLAMA_VERSION)-*.whl

model: venv
	$(PYTHON) run.py model pull

image: venv
	$(PYTHON) run.py sandbox status >/dev/null 2>&1 || $(PYTHON) run.py sandbox build

demo: setup
	$(PYTHON) run.py run $(SCENARIO)

# The fast tier: no Docker, no model, under a minute on 2 cores; the leak guard fails any test in it that starts a
# container (tests/plugins/leak_guard.py).
check:
	@test -x $(BIN)/ruff || $(MAKE) venv
	$(BIN)/ruff check agents tests run.py
	$(PYTHON) -m pytest -q -n 2 -p no:cacheprovider -m "not docker and not model and not slow" $(PYTEST_ARGS)

test: setup
	$(PYTHON) -m pytest $(PYTEST_ARGS)

test-fast: venv image
	$(PYTHON) -m pytest -m "not model and not slow" $(PYTEST_ARGS)

clean:
	$(PYTHON) run.py sandbox clean --all
