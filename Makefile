# codeduet: `make demo` (everything + a real scenario with the local model) and `make test` (everything + tests).
PY      ?= python3
VENV    ?= .venv
BIN     := $(VENV)/bin
PYTHON  := $(BIN)/python
SCENARIO ?= scenarios/primes.yaml
PYTEST_ARGS ?=

.PHONY: setup system-deps venv model image demo test test-fast bench clean

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

# llama-cpp-python has no binary wheel: the first install compiles llama.cpp (~7.5 min on 2 cores; pip caches it).
# ray: the optional `--ray` batch fan-out (agents/scaleout/); installed here so its tests run in CI.
venv: $(PYTHON)
	$(BIN)/pip install -q -e ".[local,test,ray]"

model: venv
	$(PYTHON) run.py model pull

image: venv
	$(PYTHON) run.py sandbox status >/dev/null 2>&1 || $(PYTHON) run.py sandbox build

demo: setup
	$(PYTHON) run.py run $(SCENARIO)

test: setup
	$(PYTHON) -m pytest $(PYTEST_ARGS)

test-fast: venv image
	$(PYTHON) -m pytest -m "not model and not slow" $(PYTEST_ARGS)

clean:
	$(PYTHON) run.py sandbox clean --all
