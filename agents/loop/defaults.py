"""Defaults shared by the scenario model, the CLI, the sandbox tools, the benchmarks and the tests."""

from __future__ import annotations

VERSION = "0.1.0"
"""codeduet's version (`agents.__version__`); the sandbox image's label carries it."""

SANDBOX_IMAGE = "codeduet-sandbox:latest"
"""The hardened sandbox image, built locally by `sandbox build`; a scenario's `sandbox.image` overrides it."""

COMMAND = "codeduet"
"""The console script (`python run.py` and `python -m agents` are the same app); error hints name it."""
