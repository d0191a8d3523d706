"""What a sandbox image holds besides Python and its languages' toolchains: the declared packages in its labels
(Debian's with their installed versions, PyPI's pinned with version and sha256), whether a built image has every
package a scenario declares, and the versions read from a rootfs tarball's dpkg database."""

from __future__ import annotations

import json
import tarfile
from pathlib import Path
from typing import Any

LABEL = "org.codeduet.sandbox"
DEBIAN_LABEL = f"{LABEL}.packages.debian"
"""The Debian packages declared for the image (a preset's and a scenario's), comma-separated."""
DEBIAN_VERSIONS_LABEL = f"{LABEL}.packages.debian.versions"
"""Their installed versions, `name=version` comma-separated (read from the rootfs's dpkg database)."""
PYPI_LABEL = f"{LABEL}.packages.python"
"""The PyPI requirements declared for the image, comma-separated (`tabulate==0.9.0,requests`)."""
PYTHON_PINS_LABEL = f"{LABEL}.packages.python.pinned"
"""Every wheel installed for them (dependencies too): a JSON list of {name, version, sha256}."""
RUST_LABEL = f"{LABEL}.packages.rust"
"""The crates declared for the image, comma-separated (`serde==1.0.210,rand`)."""
RUST_PINS_LABEL = f"{LABEL}.packages.rust.pinned"
"""Every crate vendored for them (dependencies too): a JSON list of {name, version, sha256} (Cargo.lock's checksum
of the .crate file)."""
DPKG_STATUS = "var/lib/dpkg/status"


def debian_versions(tarball: Path) -> dict[str, str]:
    """Every installed package of a rootfs tarball with its version, from its dpkg database; cached in a sidecar
    next to the tarball (`.dpkg`, `name=version` lines) like the Python version (`.python`)."""
    sidecar = Path(f"{tarball}.dpkg")
    if not sidecar.exists():
        with tarfile.open(tarball) as tar:
            member = next((m for m in tar if m.name.lstrip("./") == DPKG_STATUS), None)
            text = tar.extractfile(member).read().decode("utf-8", "replace") if member else ""  # type: ignore[union-attr]
        sidecar.write_text("".join(f"{name}={version}\n" for name, version in sorted(_installed(text).items())))
    lines = sidecar.read_text().splitlines()
    return dict(line.split("=", 1) for line in lines if "=" in line)


def _installed(status: str) -> dict[str, str]:
    """Package -> version of the installed packages in a dpkg status file."""
    out = {}
    for stanza in status.split("\n\n"):
        fields = dict(line.split(": ", 1) for line in stanza.splitlines() if ": " in line and not line[0].isspace())
        if fields.get("Status", "").endswith(" installed") and "Package" in fields:
            out[fields["Package"]] = fields.get("Version", "")
    return out


def debian_labels(declared: tuple[str, ...], versions: dict[str, str]) -> dict[str, str]:
    """The labels of the declared Debian packages and their installed versions (none when nothing is declared)."""
    if not declared:
        return {}
    return {DEBIAN_LABEL: ",".join(declared),
            DEBIAN_VERSIONS_LABEL: ",".join(f"{name}={versions.get(name, '?')}" for name in declared)}


def python_labels(requirements: tuple[str, ...], pins: list[dict[str, str]]) -> dict[str, str]:
    """The labels of the declared PyPI requirements and every wheel installed for them."""
    if not requirements:
        return {}
    return {PYPI_LABEL: ",".join(requirements), PYTHON_PINS_LABEL: json.dumps(pins, separators=(",", ":"))}


def pinned(labels: dict[str, str]) -> dict[str, Any]:
    """What an image's labels say it was built with, for a run's transcript header: Debian packages with their
    versions, PyPI wheels with version and sha256 (empty when it has no declared packages)."""
    out: dict[str, Any] = {}
    if labels.get(DEBIAN_VERSIONS_LABEL):
        out["debian"] = dict(item.split("=", 1) for item in labels[DEBIAN_VERSIONS_LABEL].split(",") if "=" in item)
    for kind, label in (("python", PYTHON_PINS_LABEL), ("rust", RUST_PINS_LABEL)):
        if labels.get(label):  # a crate may come in two versions: each is its own entry
            pins = json.loads(labels[label])
            twice = {p["name"] for p in pins if sum(q["name"] == p["name"] for q in pins) > 1}
            out[kind] = {(f"{p['name']} {p['version']}" if p["name"] in twice else p["name"]):
                         f"{p['version']} sha256:{p['sha256']}" for p in pins}
    return out


def has_python(requirements: tuple[str, ...] | list[str], labels: dict[str, str], label: str = PYTHON_PINS_LABEL
               ) -> bool:
    """Whether an image's installed wheels (or, with RUST_PINS_LABEL, its vendored crates) satisfy every
    requirement (a name, or name==version)."""
    versions: dict[str, set[str]] = {}
    for pin in json.loads(labels.get(label) or "[]"):
        versions.setdefault(pin["name"], set()).add(pin["version"])
    for requirement in requirements:
        name, _, version = requirement.partition("==")
        name = name.split("[")[0]  # a crate's features: the crate is what is vendored
        if name not in versions or (version and version not in versions[name]):
            return False
    return True


def has_rust(crates: tuple[str, ...] | list[str], labels: dict[str, str]) -> bool:
    """Whether an image's vendored crates satisfy every declared crate (a name, or name==version)."""
    return has_python(crates, labels, RUST_PINS_LABEL)


def missing(labels: dict[str, str], python: tuple[str, ...] | list[str] = (),
            rust: tuple[str, ...] | list[str] = ()) -> list[str]:
    """The PyPI requirements and crates an image does not have."""
    return [req for req in python if not has_python([req], labels)] + \
        [crate for crate in rust if not has_rust([crate], labels)]
