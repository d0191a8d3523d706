"""PyPI packages in a sandbox image: `sandbox build` downloads their wheels on the host (binary wheels only, for the
image's Python and platform, held to the versions Debian already installed so its numpy or pandas are not
shadowed), then a layer over the image installs them with no network, pip running from its own wheel. Every wheel
installed is pinned in the image's labels by version and sha256 (agents/sandbox/packages.py)."""

from __future__ import annotations

import hashlib
import json
import platform
import re
import shlex
import subprocess
import sys
import tempfile
from contextlib import AbstractContextManager
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from agents.loop.errors import EnvironmentProblem
from agents.sandbox.config import python_name
from agents.sandbox.layer import FILES, commit_layer
from agents.sandbox.packages import LABEL, python_labels

if TYPE_CHECKING:
    import docker

Detail = Callable[[str], None]

PROBE = ("import importlib.metadata as m, json, platform; print(json.dumps({'python': platform.python_version(), "
         "'glibc': platform.libc_ver()[1], 'dists': {d.metadata['Name']: d.version for d in m.distributions() "
         "if d.metadata['Name']}}))")
"""What the image says about itself: its Python version, its C library's, and the distributions it has."""
LAYER = """\
python3 {files}/{pip}/pip install --no-index --find-links {files}/found --no-cache-dir --disable-pip-version-check \\
  --break-system-packages --root-user-action=ignore {requirements}
rm -rf /root/.cache"""
"""The layer's script (as root, network none, the downloaded wheels copied in): pip from its own wheel
installs them into /usr/local, beside Debian's packages."""


def build_python_layer(client: docker.DockerClient, tag: str, base: str, requirements: tuple[str, ...],
                       step: Callable[[str], AbstractContextManager[Detail]]) -> str:
    """Build `tag` over `base` with the PyPI `requirements` installed offline; returns the image id."""
    with step(f"what {base} has") as detail:
        detail("python3 in a container, network none")
        facts = _probe(client, base)
    with tempfile.TemporaryDirectory(prefix="codeduet-wheels-") as tmp:
        found, tools = Path(tmp, "wheels", "found"), Path(tmp, "wheels")
        with step(f"download {', '.join(requirements)} (wheels for Python {facts['python']})") as detail:
            download(requirements, found, facts, detail)
            download(("pip",), tools, facts, detail, constraints=False)
        have = {python_name(name): version for name, version in facts["dists"].items()}
        pins = []
        for wheel in sorted(found.glob("*.whl")):
            name, version = wheel_name(wheel)
            if have.get(name) == version:  # Debian's own: pip keeps it, and it is not copied in
                wheel.unlink()
                continue
            pins.append({"name": name, "version": version, "sha256": sha256(wheel)})
        pip = next(tools.glob("pip-*.whl")).name
        script = LAYER.format(files=FILES, pip=pip, requirements=shlex.join(requirements))
        labels = {**python_labels(requirements, pins), f"{LABEL}.built": now()}
        with step(f"layer with {len(pins)} wheels (no network)") as detail:
            return commit_layer(client, tag, base, script, labels, detail, files=tools)


def _probe(client: docker.DockerClient, image: str) -> dict:
    """The image's Python and C library versions and installed distributions (a container with no network)."""
    out = client.containers.run(image, ["python3", "-c", PROBE], network_mode="none", remove=True, user="sandbox")
    return json.loads(out.decode().strip().splitlines()[-1])


def download(requirements: tuple[str, ...], into: Path, facts: dict, detail: Detail,
             constraints: bool = True) -> None:
    """`pip download` binary wheels of `requirements` (and their dependencies) for the image's Python and platform
    into `into`; with `constraints`, every distribution the image has stays at its version."""
    into.mkdir(parents=True, exist_ok=True)
    major, minor = facts["python"].split(".")[:2]
    cmd = [sys.executable, "-m", "pip", "download", "--disable-pip-version-check", "--only-binary=:all:",
           "--python-version", f"{major}.{minor}", "--implementation", "cp", "--abi", f"cp{major}{minor}",
           "--abi", "abi3", "--abi", "none", *[arg for tag in platforms(facts["glibc"]) for arg in ("--platform", tag)],
           "-d", str(into)]
    if not constraints:
        cmd.append("--no-deps")
    with tempfile.NamedTemporaryFile("w", suffix=".txt", prefix="codeduet-constraints-") as file:
        if constraints:
            file.write("".join(f"{name}=={version.split('+')[0]}\n" for name, version in facts["dists"].items()
                               if re.fullmatch(r"[0-9][0-9A-Za-z.!+-]*", version)))
            file.flush()
            cmd += ["-c", file.name]
        proc = subprocess.run([*cmd, *requirements], capture_output=True, text=True)
    if proc.returncode != 0:
        lines = [line.strip() for line in proc.stderr.splitlines() if line.strip()]
        why = next((line for line in lines if line.startswith("ERROR")), lines[-1] if lines else "no output")
        raise EnvironmentProblem(f"pip download of {', '.join(requirements)} failed: {why}")
    detail(f"{len(list(into.glob('*.whl')))} wheels")


def platforms(glibc: str) -> list[str]:
    """The wheel platform tags an image with this glibc runs (manylinux back to 2.17, then plain)."""
    machine = platform.machine()
    minor = int(glibc.split(".")[1]) if glibc.count(".") else 17
    return [f"manylinux_2_{n}_{machine}" for n in range(minor, 16, -1)] + \
        [f"manylinux2014_{machine}", f"linux_{machine}"]


def wheel_name(wheel: Path) -> tuple[str, str]:
    """A wheel's project name (normal form) and version, from its file name (PEP 427)."""
    name, version = wheel.name.split("-")[:2]
    return python_name(name), version


def sha256(path: Path) -> str:
    """The sha256 of a file, hex."""
    digest = hashlib.sha256()
    with path.open("rb") as file:
        for chunk in iter(lambda: file.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def now() -> str:
    """The time, for an image's `built` label."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds")
