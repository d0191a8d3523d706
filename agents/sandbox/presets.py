"""Sandbox presets (`sandbox.preset: backend | frontend | web`): the languages and Debian packages a kind of task
needs, and the larger limits a server or a browser runs in. The image of a preset is built from Debian's packages
like any other (agents/sandbox/image.py); its tag is named by the package set, not by the preset."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Preset:
    """One preset: what it adds to the sandbox."""

    languages: tuple[str, ...]
    """Languages besides Python (agents/sandbox/languages.py)."""
    debian: tuple[str, ...]
    """Debian packages of the image's suite (trixie)."""


BACKEND = Preset(("go", "javascript"), (
    "python3-flask", "python3-fastapi", "python3-uvicorn", "python3-httpx", "python3-requests",
    "python3-multipart", "node-express", "node-supertest"))
"""HTTP services: Flask, FastAPI with uvicorn, requests/httpx (Python's sqlite3 is in the standard library), express
and supertest for Node, Go's net/http from its standard library."""
FRONTEND = Preset(("javascript",), (
    "chromium-headless-shell", "node-jsdom", "node-react", "node-react-dom", "fonts-dejavu-core"))
"""Pages and components: a headless Chromium for the page check and its screenshot, jsdom and React for jest."""
PRESETS: dict[str, Preset] = {
    "backend": BACKEND,
    "frontend": FRONTEND,
    "web": Preset(tuple(dict.fromkeys(BACKEND.languages + FRONTEND.languages)),
                  tuple(dict.fromkeys(BACKEND.debian + FRONTEND.debian))),
}
"""Every preset by name; web is backend and frontend together."""
PRESET_DEFAULTS = {"memory": "2g", "pids": 1024, "timeout": 60.0, "tmpfs_size": "1g", "disk": "512m"}
"""The limits a preset's sandbox gets where the scenario sets none: a server with its workers, or Chromium with its
renderer and GPU processes, needs more processes and memory than a script."""


def preset_debian(name: str | None) -> tuple[str, ...]:
    """The Debian packages of a preset (none for no preset)."""
    return PRESETS[name].debian if name else ()


def preset_languages(name: str | None) -> tuple[str, ...]:
    """The languages of a preset (none for no preset)."""
    return PRESETS[name].languages if name else ()
