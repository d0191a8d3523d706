"""One layer of a sandbox image, made as one commit: a shell script run as root in a container of the image below it
(network none, a folder of the host's copied in beside it when the layer needs files, through the Docker API, so a
remote daemon builds it too, and removed before the commit), committed with the image's settings (user, folder,
command, environment) and labels in the same commit.

Not a `docker build`: Docker's legacy builder commits once per Dockerfile step, settings and labels included, and
the fuse-overlayfs storage driver these machines' Docker runs on commits by comparing the image's whole tree, 7-8 s
a step on the 1 GB Python image and more on the 2.2 GB one with the toolchains: the Python image's own layer took 87 s
as eleven steps, one commit takes about ten."""

from __future__ import annotations

import json
import tarfile
import tempfile
from collections.abc import Callable, Mapping, Sequence
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING

from agents.loop.errors import EnvironmentProblem

if TYPE_CHECKING:
    import docker

Detail = Callable[[str], None]
FILES = "/tmp/codeduet-layer"
"""Where the host folder a layer needs is while its script runs (removed before the commit)."""


def commit_layer(client: docker.DockerClient, tag: str, base: str, script: str, labels: Mapping[str, str],
                 detail: Detail, *, files: Path | None = None, settings: Sequence[str] = ()) -> str:
    """Make `tag` from `base` plus what `script` (sh, as root, no network; the folder `files` at FILES) changes,
    with `base`'s user, working folder and command kept, then `settings` (Dockerfile lines: ENV, USER, WORKDIR,
    CMD) and `labels` applied; returns the image id. A failing script is one EnvironmentProblem with its last lines."""
    below = client.images.get(base).attrs.get("Config") or {}
    kept = [f"USER {below.get('User') or 'root'}", f"WORKDIR {below.get('WorkingDir') or '/'}"]
    if below.get("Cmd"):
        kept.append(f"CMD {json.dumps(below['Cmd'])}")  # the exec form is JSON
    old = _image_id(client, tag)
    script = f"{script}\nrm -rf {FILES}" if files else script
    container = client.containers.create(base, ["/bin/sh", "-ec", script], user="root", network_mode="none")
    try:
        if files:
            _copy_in(container, files)
        container.start()
        lines: list[str] = []
        for chunk in container.logs(stream=True, follow=True):
            for line in chunk.decode("utf-8", "replace").splitlines():
                if line.strip():
                    lines.append(line)
                    detail(line.strip())
        status = container.wait().get("StatusCode", 1)
        if status != 0:
            tail = " | ".join(lines[-3:]) or "no output"
            raise EnvironmentProblem(f"building {tag} failed (exit {status} in the layer over {base}): {tail}")
        repo, version = split_tag(tag)
        detail("commit")
        image = container.commit(repository=repo, tag=version, changes=[*kept, *settings],
                                 conf={"Labels": dict(labels)})
    finally:
        with suppress(Exception):
            container.remove(force=True)
    if old and old != image.id:
        with suppress(Exception):  # the replaced image stays while a container still uses it
            client.images.remove(old)
    return image.id


def _copy_in(container: object, files: Path) -> None:
    """The folder `files` as FILES in the created container (a tar streamed through the API)."""
    with tempfile.TemporaryFile() as tar_file:
        with tarfile.open(fileobj=tar_file, mode="w") as tar:
            tar.add(files, arcname=Path(FILES).name)
        tar_file.seek(0)
        if not container.put_archive(str(Path(FILES).parent), tar_file):  # type: ignore[attr-defined]
            raise EnvironmentProblem(f"could not copy {files} into the build container")


def split_tag(tag: str) -> tuple[str, str]:
    """(repository, version) of an image tag; no version given (a registry's port is not one): latest."""
    repo, sep, version = tag.rpartition(":")
    if not sep or "/" in version:
        return tag, "latest"
    return repo, version


def _image_id(client: docker.DockerClient, tag: str) -> str | None:
    import docker

    try:
        return client.images.get(tag).id
    except docker.errors.ImageNotFound:
        return None
