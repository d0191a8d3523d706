"""Rust crates in a sandbox image: `sandbox build` resolves the declared crates on the host with cargo (held to the
image's rustc version), vendors them, and a layer over the image holds the vendored sources with a cargo config
that replaces crates.io by them, so a Cargo project in the sandbox builds offline with those crates. Each crate is
pinned in the image's labels by version and the sha256 checksum of its .crate file (from Cargo.lock)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from contextlib import AbstractContextManager
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from agents.loop.errors import EnvironmentProblem
from agents.sandbox.layer import FILES, commit_layer
from agents.sandbox.packages import LABEL, RUST_LABEL, RUST_PINS_LABEL

if TYPE_CHECKING:
    import docker

Detail = Callable[[str], None]
VENDOR = "/opt/codeduet/crates"
"""Where the vendored crates live in the image."""
CARGO_CONFIG = f"""\
[source.crates-io]
replace-with = "codeduet-vendored"

[source.codeduet-vendored]
directory = "{VENDOR}"

[net]
offline = true
"""
"""/.cargo/config.toml in the image: cargo reads it from every parent of the working folder, whatever CARGO_HOME."""
LAYER = "cp -R {files}/root/. /"
"""The layer's script (as root, network none, the tree copied in): the vendored crates and
/.cargo/config.toml, laid out as in the image, copied over it (root's, readable by all: their modes are set
before)."""


def build_rust_layer(client: docker.DockerClient, tag: str, base: str, crates: tuple[str, ...],
                     step: Callable[[str], AbstractContextManager[Detail]]) -> str:
    """Build `tag` over `base` (an image with Rust) with the `crates` (name or name==version) vendored for offline
    builds; returns the image id."""
    cargo = host_cargo()
    with step(f"what {base} has") as detail:
        detail("rustc --version in a container, network none")
        out = client.containers.run(base, ["rustc", "--version"], network_mode="none", remove=True)
        rustc = re.search(r"rustc (\d+\.\d+)", out.decode())
    with tempfile.TemporaryDirectory(prefix="codeduet-crates-") as tmp:
        project, ctx = Path(tmp, "project"), Path(tmp, "crates")
        with step(f"vendor {', '.join(crates)} (crates for rustc {rustc[1] if rustc else '?'})") as detail:
            pins = vendor(cargo, crates, project, ctx, rustc[1] if rustc else None)
            detail(f"{len(pins)} crates")
        tree = ctx / "root"
        (tree / VENDOR.lstrip("/")).parent.mkdir(parents=True)
        (ctx / "vendor").rename(tree / VENDOR.lstrip("/"))
        (tree / ".cargo").mkdir()
        (tree / ".cargo" / "config.toml").write_text(CARGO_CONFIG)
        readable(ctx)
        labels = {RUST_LABEL: ",".join(crates), RUST_PINS_LABEL: json.dumps(pins, separators=(",", ":")),
                  f"{LABEL}.built": datetime.now(timezone.utc).isoformat(timespec="seconds")}
        with step(f"layer with {len(pins)} crates (no network)") as detail:
            return commit_layer(client, tag, base, LAYER.format(files=FILES), labels, detail, files=ctx)


def host_cargo() -> str:
    """The host's cargo; EnvironmentProblem in one line when there is none (said before any image is built)."""
    cargo = shutil.which("cargo")
    if cargo is None:
        raise EnvironmentProblem("packages.rust needs cargo on this machine to fetch the crates (crates.io from "
                                 "here): install Rust (apt-get install cargo, or rustup) and build again")
    return cargo


def vendor(cargo: str, crates: tuple[str, ...], project: Path, ctx: Path, rust_version: str | None) -> list[dict]:
    """Resolve `crates` in a throwaway Cargo project (versions the image's rustc builds, where the crates say) and
    vendor every crate of the lock file into ctx/vendor; returns the pins {name, version, sha256}."""
    (project / "src").mkdir(parents=True)
    (project / "src" / "lib.rs").write_text("")
    deps = ""
    for crate in crates:
        name, _, version = crate.partition("==")
        name, _, features = name.partition("[")
        wanted = ", ".join(f'"{f}"' for f in features.rstrip("]").split(",") if f)
        deps += f'{name} = {{ version = "{"=" + version if version else "*"}", features = [{wanted}] }}\n'
    msrv = f'rust-version = "{rust_version}"\n' if rust_version else ""
    (project / "Cargo.toml").write_text(f'[package]\nname = "codeduet-crates"\nversion = "0.0.0"\nedition = "2021"\n'
                                        f"{msrv}\n[dependencies]\n{deps}")
    env = {**os.environ, "CARGO_RESOLVER_INCOMPATIBLE_RUST_VERSIONS": "fallback", "CARGO_TERM_COLOR": "never"}
    for args in (["generate-lockfile"], ["vendor", "--locked", "--versioned-dirs", str(ctx / "vendor")]):
        proc = subprocess.run([cargo, *args], cwd=project, env=env, capture_output=True, text=True, timeout=600)
        if proc.returncode != 0:
            lines = [line.strip() for line in proc.stderr.splitlines() if line.strip()]
            why = next((line for line in lines if line.startswith("error")), lines[-1] if lines else "no output")
            raise EnvironmentProblem(f"cargo {args[0]} of {', '.join(crates)} failed: {why}")
    return locked((project / "Cargo.lock").read_text())


def readable(root: Path) -> None:
    """Every file readable and every folder searchable by all (the sandbox user reads them; root owns them)."""
    for path in [root, *root.rglob("*")]:
        path.chmod(path.stat().st_mode | (0o555 if path.is_dir() else 0o444))


def locked(lock: str) -> list[dict]:
    """The registry crates of a Cargo.lock with their version and checksum (the sha256 of the .crate file)."""
    pins = []
    for block in lock.split("[[package]]")[1:]:
        fields = dict(re.findall(r'^(\w+) = "([^"]*)"', block, re.MULTILINE))
        if fields.get("checksum"):
            pins.append({"name": fields["name"], "version": fields["version"], "sha256": fields["checksum"]})
    return pins
