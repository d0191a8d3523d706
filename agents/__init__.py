"""codeduet: an AssistantAgent writes code, a UserProxyAgent runs it in a hardened Docker sandbox.

`from agents import run, load_run` is the Python API (agents/cli/api.py), imported on first use so that
`import agents` stays light.
"""

from typing import Any

from agents.loop.defaults import VERSION as __version__

API = {"run", "load_run", "Run", "CodeduetError", "BadInputError"}
"""Names `agents` lends from agents/cli/api.py on first use (PEP 562)."""


def __getattr__(name: str) -> Any:
    """The Python API, imported when first asked for."""
    if name in API:
        from agents.cli import api

        return getattr(api, name)
    raise AttributeError(f"module 'agents' has no attribute {name!r}")


__all__ = ["__version__", *sorted(API)]
