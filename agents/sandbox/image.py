"""Build, inspect and remove the local sandbox image; offline via mmdebstrap, or from docker/Dockerfile."""

from __future__ import annotations

import base64
import hashlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, suppress
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agents.loop.defaults import COMMAND, SANDBOX_IMAGE, VERSION
from agents.loop.errors import DockerUnavailable, EnvironmentProblem, ImageMissing
from agents.record.paths import codeduet_home
from agents.sandbox.config import image_tag, language_image, package_hash
from agents.sandbox.languages import NAMES as LANGUAGE_NAMES
from agents.sandbox.languages import packages as language_packages
from agents.sandbox.layer import commit_layer, split_tag
from agents.sandbox.packages import DEBIAN_LABEL, debian_labels, debian_versions, has_python, has_rust, missing

if TYPE_CHECKING:
    import docker
    from rich.console import Console

IMAGE_DEFAULT = SANDBOX_IMAGE
SUITE = "bookworm"
LANGUAGE_SUITE = "trixie"
"""Images with toolchains are built from Debian 13: rustc 1.85 (edition 2024), Go 1.24, gcc 14, Node 20; bookworm's
rustc 1.63 and Go 1.19 refuse much of what models write today (let-else, `min`/`slices`). The Python-only image stays
on bookworm (its Python 3.11, the one every benchmark so far ran on)."""
PACKAGES = ("python3", "python3-numpy", "python3-pandas", "python3-matplotlib", "python3-pytest", "procps")
"""Debian packages in the rootfs (minbase already brings coreutils, with `timeout`)."""
PYTHON_PACKAGES = tuple(p.removeprefix("python3-") for p in PACKAGES if p.startswith("python3-"))
"""The Python packages the image has besides the standard library (docker/Dockerfile installs the same ones); the
sandbox has no network, so this is all a block can import."""
SANDBOX_UID = 1000
LABEL = "org.codeduet.sandbox"
VERSION_LABEL = "org.codeduet.sandbox.version"
PYTHON_LABEL = "org.codeduet.sandbox.python"
ROOTFS_LABEL = "org.codeduet.sandbox.rootfs"
LANGUAGES_LABEL = "org.codeduet.sandbox.languages"
DOCKER_DIR = Path(__file__).resolve().parent / "docker"
"""The image recipes, shipped inside the package so `sandbox build` works from any install."""
ROOTFS_SCRIPT = DOCKER_DIR / "build-rootfs.sh"
METHODS = ("auto", "mmdebstrap", "dockerfile")
BUILD_HINT = f"run `{COMMAND} sandbox build`"

LAYER_SCRIPT = """\
groupadd --gid {uid} sandbox \\
 && useradd --uid {uid} --gid {uid} --home-dir /home/sandbox --create-home --shell /bin/sh sandbox \\
 && mkdir -p /workspace && chown sandbox:sandbox /workspace \\
 && ln -sf /usr/bin/python3 /usr/local/bin/python \\
 && {figures}{languages}"""
LAYER_SETTINGS = ("ENV PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1 HOME=/tmp LANG=C.UTF-8 "
                  "MPLBACKEND=module://codeduet_figures MPLCONFIGDIR=/tmp/matplotlib{language_env}",
                  "WORKDIR /workspace", "USER sandbox", 'CMD ["python3"]')
"""The image's own layer over the imported rootfs (agents/sandbox/layer.py: one commit): the sandbox user, /workspace,
the files it adds written from the script's own text, the languages' build steps; then its settings."""
GO_WRAPPER = DOCKER_DIR / "go-wrapper.sh"
FIGURES_BACKEND = DOCKER_DIR / "codeduet_figures.py"
"""matplotlib's backend in the image: every figure shown or left open is saved as a PNG (figures/)."""
LANGUAGE_STEPS = {
    "go": lambda: f" \\\n && {written(GO_WRAPPER, '/usr/local/bin/go')} \\\n"
                  " && GOCACHE=/opt/codeduet/go-cache HOME=/tmp GOTOOLCHAIN=local /usr/bin/go build std \\\n"
                  " && chmod -R a+rX /opt/codeduet && chmod 755 /usr/local/bin/go",
}
LANGUAGE_ENV = {
    "go": "GOCACHE=/tmp/go-build GOPATH=/tmp/go GOTOOLCHAIN=local GOPROXY=off GOFLAGS=-mod=mod GOTELEMETRY=off",
    "rust": "CARGO_HOME=/tmp/cargo CARGO_NET_OFFLINE=true CARGO_TERM_COLOR=never",
    "javascript": "NODE_DISABLE_COLORS=1 NO_COLOR=1",
}
"""What each language adds to the image's top layer: caches and HOME-like folders on the writable /tmp; for Go, the
standard library compiled once (a fresh sandbox's first `go run` took 21 s on one CPU without it, 2 s with it).
The sanitizers' options are the container's environment (agents/sandbox/docker_executor.py), not the image's."""


def written(source: Path, target: str) -> str:
    """A shell command that writes `source`'s bytes to `target` from the command's own text (base64)."""
    return f"echo {base64.b64encode(source.read_bytes()).decode()} | base64 -d > {target}"


def layer_steps(languages: tuple[str, ...]) -> tuple[str, tuple[str, ...]]:
    """(the layer's script, its settings) for `languages`: their build steps join the script, their environment the
    ENV setting."""
    steps = "".join(LANGUAGE_STEPS[name]() for name in languages if name in LANGUAGE_STEPS)
    env = " ".join(dict.fromkeys(LANGUAGE_ENV[name] for name in languages if name in LANGUAGE_ENV))
    script = LAYER_SCRIPT.format(uid=SANDBOX_UID, languages=steps,
                                 figures=written(FIGURES_BACKEND, "/usr/lib/python3/dist-packages/codeduet_figures.py"))
    return script, (LAYER_SETTINGS[0].format(language_env=f" {env}" if env else ""), *LAYER_SETTINGS[1:])


def layer_dockerfile(base: str, languages: tuple[str, ...]) -> str:
    """The same layer as a Dockerfile over `base` (the Dockerfile method; and what an image's version label digests)."""
    script, settings = layer_steps(languages)
    return f"FROM {base}\nRUN {script}\n" + "".join(f"{line}\n" for line in settings)


def docker_client() -> docker.DockerClient:
    """A pinged client from the environment; DockerUnavailable when the daemon cannot be reached."""
    where = os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"
    fix = "start it (e.g. `sudo systemctl start docker`) or set DOCKER_HOST"
    try:
        import docker
    except ImportError as exc:
        raise DockerUnavailable("python package `docker` is not installed: run `pip install docker`") from exc
    try:
        client = docker.from_env()
        client.ping()
    except Exception as exc:  # any connection, TLS or API failure
        raise DockerUnavailable(f"Docker daemon not reachable at {where}: {fix}") from exc
    return client


def image_status(tag: str = IMAGE_DEFAULT, client: docker.DockerClient | None = None) -> dict[str, Any]:
    """Existence, id, creation time, size, labels and Python version of `tag` (labels only, no container)."""
    import docker

    client = client or docker_client()
    try:
        image = client.images.get(tag)
    except docker.errors.ImageNotFound:
        return {"tag": tag, "exists": False}
    labels = image.labels or {}
    return {
        "tag": tag,
        "exists": True,
        "id": image.id,
        "created": image.attrs.get("Created"),
        "size": image.attrs.get("Size"),
        "labels": labels,
        "python": labels.get(PYTHON_LABEL),
        "version": labels.get(VERSION_LABEL),
        "codeduet": labels.get(LABEL) == "1",
    }


def ensure_image(tag: str = IMAGE_DEFAULT, client: docker.DockerClient | None = None,
                 languages: tuple[str, ...] | list[str] = (), command: str | None = None,
                 python: tuple[str, ...] | list[str] = (), rust: tuple[str, ...] | list[str] = ()) -> str:
    """The id of the local image `tag`; ImageMissing if absent (never pulls), or if it lacks one of the `python`
    requirements or `rust` crates, naming `command` (the build command of the sandbox's image) when given."""
    status = image_status(tag, client)
    lacking = missing(status.get("labels") or {}, python, rust) if status["exists"] else []
    if command and (lacking or not status["exists"]):
        what = f"image {tag} has no {', '.join(lacking)}" if lacking else f"no sandbox image {tag} is built"
        raise ImageMissing(f"{what}: run `{command}` (offline from the packages it fetches; a few minutes)")
    if not status["exists"]:
        if languages and tag == language_image(tuple(languages)):
            hint = BUILD_HINT.replace("build`", f"build --languages {','.join(languages)}`")
            raise ImageMissing(f"no sandbox image with {', '.join(languages)} is built: {hint} (a few minutes, "
                               "offline from Debian's packages)")
        hint = BUILD_HINT if tag == IMAGE_DEFAULT else BUILD_HINT.replace("build`", f"build --image {tag}`")
        raise ImageMissing(f"sandbox image {tag} not found: {hint}")
    return status["id"]


def resolve_image(tag: str, languages: tuple[str, ...] | list[str] = (),
                  client: docker.DockerClient | None = None, debian: tuple[str, ...] | list[str] = (),
                  python: tuple[str, ...] | list[str] = (), rust: tuple[str, ...] | list[str] = ()) -> str:
    """The image a sandbox runs: `tag`; or, when `tag` is the default image of a language and package set and is
    not built, the smallest built codeduet image that has every one of those languages and packages (`sandbox build
    --languages c,cpp,go,javascript,rust --preset web` serves every scenario that declares no PyPI package)."""
    named = tag_languages(tag)
    if named and not (debian or python or rust):  # a toolchains tag (`:c-cpp-go-javascript-rust`) in a scenario
        languages = tuple(sorted(set(named) | set(languages)))
    elif not (languages or debian or python or rust) or tag != image_tag(tuple(languages), debian, python, rust):
        return tag
    client = client or docker_client()
    if image_status(tag, client)["exists"]:
        return tag
    fits = [image for image in client.images.list(filters={"label": LANGUAGES_LABEL}) if image.tags and
            holds(image.labels or {}, languages, debian, python, rust)]
    return min(fits, key=lambda image: image.attrs.get("Size") or 0).tags[0] if fits else tag


def tag_languages(tag: str) -> tuple[str, ...]:
    """The languages a default toolchains tag names (`codeduet-sandbox:c-go` -> c, go); () for any other tag."""
    repo, _, version = tag.rpartition(":")
    names = tuple(version.split("-"))
    default = language_image(("c",)).rpartition(":")[0]
    return names if repo == default and names and all(name in LANGUAGE_NAMES for name in names) else ()


def holds(labels: dict[str, str], languages: tuple[str, ...] | list[str], debian: tuple[str, ...] | list[str] = (),
          python: tuple[str, ...] | list[str] = (), rust: tuple[str, ...] | list[str] = ()) -> bool:
    """Whether an image (by its labels) has every one of the languages and packages."""
    built = tuple(n for n in labels.get(LANGUAGES_LABEL, "").split(",") if n)
    extra = tuple(n for n in labels.get(DEBIAN_LABEL, "").split(",") if n)
    return set(languages) <= set(built) and set(debian) <= set(recipe(built, extra)[1]) and \
        has_python(python, labels) and has_rust(rust, labels)


def remove_image(tag: str = IMAGE_DEFAULT, *, base: bool = True) -> list[str]:
    """Remove `tag` (and its imported base, unless base=False); returns the tags removed."""
    import docker

    client = docker_client()
    removed = []
    for name in (tag, base_tag(tag)) if base else (tag,):
        try:
            client.images.remove(name, noprune=False)
            removed.append(name)
        except docker.errors.ImageNotFound:
            continue
        except docker.errors.APIError as exc:
            if exc.status_code != 409:
                raise
            raise EnvironmentProblem(f"sandbox image {name} is in use by a container: remove it "
                                     f"(`docker ps -a --filter ancestor={name}`) and retry") from exc
    return removed


def base_tag(tag: str) -> str:
    """The tag of the imported rootfs under `tag`: name:latest -> name-base:latest."""
    repo, version = split_tag(tag)
    return f"{repo}-base:{version}"


def rootfs_key(packages: tuple[str, ...] = PACKAGES, suite: str = SUITE) -> str:
    """Cache key of a rootfs tarball: the suite, the package list and the build script."""
    digest = hashlib.sha256(f"{suite}\n{','.join(sorted(packages))}\n".encode())
    digest.update(ROOTFS_SCRIPT.read_bytes())
    return digest.hexdigest()[:12]


def recipe(languages: tuple[str, ...] = (), debian: tuple[str, ...] = ()) -> tuple[str, tuple[str, ...]]:
    """The Debian suite and packages of the image for a language set and the Debian packages declared besides
    (none: the Python image; with languages, Debian 13)."""
    packages = PACKAGES + language_packages(languages) if languages else PACKAGES
    return (LANGUAGE_SUITE if languages else SUITE), tuple(dict.fromkeys(packages + tuple(sorted(debian))))


def build_dir() -> Path:
    """Where rootfs tarballs and build logs are cached (outside the repo)."""
    path = codeduet_home() / "build"
    path.mkdir(parents=True, exist_ok=True)
    return path


def build_image(
    tag: str | None = None, *, method: str = "auto", console: Console | None = None,
    languages: tuple[str, ...] | list[str] = (), debian: tuple[str, ...] | list[str] = (),
    python: tuple[str, ...] | list[str] = (), rust: tuple[str, ...] | list[str] = (),
) -> str:
    """Build `tag` (default: the image of `languages` and the packages) locally (auto: mmdebstrap when installed,
    else a Dockerfile), with the `debian` packages in its rootfs, the `python` requirements' wheels in a layer over
    it (agents/sandbox/wheels.py) and the `rust` crates vendored in one over that (agents/sandbox/crates.py);
    returns the image id."""
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, not {method!r}")
    languages, debian = tuple(sorted(languages)), tuple(sorted(set(debian)))
    python, rust = tuple(sorted(set(python))), tuple(sorted(set(rust)))
    tag = tag or image_tag(languages, debian, python, rust)
    if method == "auto":
        method = "mmdebstrap" if shutil.which("mmdebstrap") else "dockerfile"
    if rust:
        from agents.sandbox.crates import build_rust_layer, host_cargo

        host_cargo()  # a host without cargo is said before anything is built
    client = docker_client()
    with _steps(console) as step:
        base = image_tag(languages, debian) if python or rust else tag
        if python or rust:  # the layers go over the image of the languages and Debian packages, or one that has more
            base = resolve_image(base, languages, client, debian)
        if (python or rust) and image_status(base, client)["exists"] and \
                not stale(image_status(base, client), languages, debian):
            with step(f"{base} (built)"):
                pass
        elif method == "mmdebstrap":
            _build_mmdebstrap(client, base, step, languages, debian)
        else:
            _build_dockerfile(client, base, step, languages, debian)
        if python:
            from agents.sandbox.wheels import build_python_layer

            wheels = tag if not rust else image_tag(languages, debian, python)
            build_python_layer(client, wheels, base, python, step)
            base = wheels
        if rust:
            build_rust_layer(client, tag, base, rust, step)
        return ensure_image(tag, client)


Detail = Callable[[str], None]
StepFn = Callable[[str], AbstractContextManager[Detail]]
"""`with step(name) as detail:` shows one spinner row; `detail(text)` updates it."""


@contextmanager
def _steps(console: Console | None) -> Iterator[StepFn]:
    """A rich progress where each step is one spinner row with its own elapsed time."""
    from rich.console import Console
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    columns = (SpinnerColumn(finished_text="[green]✓"), TextColumn("{task.description}"), TimeElapsedColumn())
    with Progress(*columns, console=console or Console(stderr=True)) as progress:

        @contextmanager
        def step(name: str) -> Iterator[Detail]:
            task = progress.add_task(name, total=1)
            try:
                yield lambda detail: progress.update(task, description=f"{name}: {detail[:70]}")
            except BaseException:
                progress.update(task, description=f"[red]✗ {name} failed")
                progress.stop_task(task)
                raise
            progress.update(task, description=name, completed=1)
            progress.stop_task(task)

        yield step


def _build_mmdebstrap(client: docker.DockerClient, tag: str, step: StepFn, languages: tuple[str, ...] = (),
                      debian: tuple[str, ...] = ()) -> str:
    """Rootfs tarball (cached) -> docker import as the base tag (skipped if current) -> user layer."""
    suite, packages = recipe(languages, debian)
    key = rootfs_key(packages, suite)
    family = ("-".join(languages) or "python") + (f"-p{package_hash(debian)}" if debian else "")
    tarball = build_dir() / f"rootfs-{family}-{key}.tar"
    python = _python_of(tarball)
    if tarball.exists() and python:
        with step(f"rootfs (cached {tarball.name})"):
            pass
    else:
        what = f"rootfs (Debian {suite}" + (f" with {', '.join(languages)}" if languages else "") + \
            (f" and {len(debian)} packages)" if debian else ")")
        with step(what) as detail:
            _run_rootfs_script(tarball, detail, suite, packages)
        python = _python_of(tarball)
        _prune_rootfs(keep=tarball)
    base = base_tag(tag)
    with step(f"import {base}") as detail:
        if image_status(base, client).get("labels", {}).get(ROOTFS_LABEL) == key:
            detail("already imported")
        elif imported := imported_rootfs(client, key):
            imported.tag(*split_tag(base))  # the same rootfs under another name: no second 1 GB import
            detail(f"the rootfs of {imported.tags[0] if imported.tags else imported.short_id}")
        else:
            repo, version = split_tag(base)
            changes = ["ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                       f"LABEL {ROOTFS_LABEL}={key}", 'CMD ["python3"]']
            out = client.api.import_image_from_file(str(tarball), repository=repo, tag=version, changes=changes)
            if "errorDetail" in str(out) or not image_status(base, client)["exists"]:
                raise EnvironmentProblem(f"docker import of {tarball} failed: {str(out).strip()[-200:]}")
    script, settings = layer_steps(languages)
    labels = _labels(python, "mmdebstrap", layer_recipe(languages, debian), languages)
    labels.update(debian_labels(debian, debian_versions(tarball) if debian else {}))
    with step("layer" + (" (Go's standard library is compiled once: about 2 min)" if "go" in languages else "")) \
            as detail:
        return commit_layer(client, tag, base, script, labels, detail, settings=settings)


def imported_rootfs(client: docker.DockerClient, key: str) -> Any:
    """An image imported from the rootfs tarball `key` under another tag (a base image: the layers built over it
    inherit its label but carry codeduet's own), or None."""
    found = [img for img in client.images.list(filters={"label": f"{ROOTFS_LABEL}={key}"})
             if LABEL not in (img.labels or {})]
    return found[0] if found else None


DEBIAN_DOCKERFILE = """\
FROM debian:{suite}-slim
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends {packages} \\
 && rm -rf /var/lib/apt/lists/*
"""


def _build_dockerfile(client: docker.DockerClient, tag: str, step: StepFn, languages: tuple[str, ...] = (),
                      debian: tuple[str, ...] = ()) -> str:
    """docker/Dockerfile (FROM python:3.12-slim), or for languages or Debian packages Debian's own image with them;
    both need a reachable registry for the base image (the declared packages' versions are not labelled)."""
    if languages or debian:
        suite, packages = recipe(languages, debian)
        dockerfile = DEBIAN_DOCKERFILE.format(suite=suite, packages=" ".join(packages)) + \
            layer_dockerfile("scratch", languages) \
            .replace("FROM scratch\n", "")
    else:
        dockerfile = (DOCKER_DIR / "Dockerfile").read_text()
    labels = _labels(None, "dockerfile", dockerfile, languages)
    if debian:
        labels[DEBIAN_LABEL] = ",".join(debian)
    with step(f"build {tag} from a Dockerfile") as detail:
        args = {} if languages or debian else {"CODEDUET_VERSION": labels[VERSION_LABEL]}
        hint = "it needs a registry for its base image; offline, install mmdebstrap and use --method mmdebstrap"
        return _docker_build(client, tag, dockerfile, labels, args, detail, hint)


def layer_recipe(languages: tuple[str, ...] = (), debian: tuple[str, ...] = ()) -> str:
    """What an mmdebstrap-built image is made of (the rootfs key, the layer's Dockerfile, the files it copies):
    its version label is a digest of this, so an image built from an older recipe is known as such."""
    suite, packages = recipe(languages, debian)
    base = base_tag(image_tag(languages, debian))
    dockerfile = layer_dockerfile(base, languages)
    return rootfs_key(packages, suite) + dockerfile + FIGURES_BACKEND.read_text(encoding="utf-8")


def recipe_version(recipe_text: str) -> str:
    """The version label of an image built from `recipe_text`."""
    return f"{VERSION}-{hashlib.sha256(recipe_text.encode()).hexdigest()[:8]}"


def stale(status: dict[str, Any], languages: tuple[str, ...] = (), debian: tuple[str, ...] = ()) -> bool:
    """Whether an image codeduet built with mmdebstrap comes from an older recipe than this version's (another
    package list, layer or figures backend): `sandbox build` makes it again."""
    labels = status.get("labels") or {}
    if not status.get("exists") or labels.get(f"{LABEL}.method") != "mmdebstrap":
        return False
    built = tuple(sorted(n for n in labels.get(LANGUAGES_LABEL, "").split(",") if n))
    extra = tuple(sorted(n for n in labels.get(DEBIAN_LABEL, "").split(",") if n))
    same = built == tuple(sorted(languages)) and extra == tuple(sorted(debian))
    return same and labels.get(VERSION_LABEL) != recipe_version(layer_recipe(built, extra))


def _labels(python: str | None, method: str, recipe: str, languages: tuple[str, ...] = ()) -> dict[str, str]:
    """The labels every sandbox image carries (python is filled by the Dockerfile when None)."""
    version = recipe_version(recipe)
    labels = {LABEL: "1", VERSION_LABEL: version, f"{LABEL}.method": method, LANGUAGES_LABEL: ",".join(languages),
              f"{LABEL}.built": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    if python:
        labels[PYTHON_LABEL] = python
    return labels


def _docker_build(client: docker.DockerClient, tag: str, dockerfile: str, labels: dict[str, str],
                  buildargs: dict[str, str], detail: Detail, hint: str = "") -> str:
    """Build `dockerfile` (the Dockerfile method) in a temp context dir with the figures backend, streaming step
    lines into `detail`; returns the id."""
    old_id = image_status(tag, client).get("id")
    with tempfile.TemporaryDirectory(prefix="codeduet-layer-") as ctx:
        Path(ctx, "Dockerfile").write_text(dockerfile)
        shutil.copy(FIGURES_BACKEND, Path(ctx, FIGURES_BACKEND.name))
        log: list[str] = []
        stream = client.api.build(path=ctx, tag=tag, labels=labels, buildargs=buildargs, rm=True,
                                  forcerm=True, decode=True)
        for chunk in stream:
            if "error" in chunk:
                tail = next((line for line in reversed(log) if line.startswith("Step ")), "start")
                fix = f"; {hint}" if hint else ""
                raise EnvironmentProblem(f"docker build of {tag} failed at {tail}: {chunk['error'].strip()}{fix}")
            line = str(chunk.get("stream", "")).strip()
            if line:
                log.append(line)
                if line.startswith("Step "):
                    detail(line)
    new_id = ensure_image(tag, client)
    if old_id and old_id != new_id:
        with suppress(Exception):  # the replaced image stays while a container still uses it
            client.images.remove(old_id)
    return new_id


def _run_rootfs_script(tarball: Path, detail: Detail, suite: str = SUITE, packages: tuple[str, ...] = PACKAGES) -> None:
    """Run docker/build-rootfs.sh (via `sudo -n` when not root), logging next to the tarball."""
    if not shutil.which("mmdebstrap"):
        raise EnvironmentProblem("mmdebstrap not found: run `sudo apt-get install -y mmdebstrap` "
                                 "or build with --method dockerfile")
    cmd = ["sh", str(ROOTFS_SCRIPT), str(tarball), suite, ",".join(packages)]
    if os.geteuid() != 0 and shutil.which("sudo"):
        cmd = ["sudo", "-n", *cmd]
    log_path = tarball.with_suffix(".log")
    with log_path.open("w") as log:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        assert proc.stdout is not None
        for line in proc.stdout:
            log.write(line)
            log.flush()
            detail(line.strip().removeprefix("I: "))
        code = proc.wait()
    if code != 0:
        raise EnvironmentProblem(f"rootfs build failed (exit {code}): {_first_error(log_path)}; log: {log_path}")


def _python_of(tarball: Path) -> str | None:
    """The Python version recorded next to a rootfs tarball by build-rootfs.sh."""
    sidecar = Path(f"{tarball}.python")
    return (sidecar.read_text().strip() or None) if sidecar.exists() else None


def _prune_rootfs(keep: Path) -> None:
    """Delete the cached rootfs tarballs (and sidecars) of the same language set built from other package lists, and
    those of an older naming (rootfs-KEY.tar)."""
    family = keep.stem.rpartition("-")[0]
    for path in keep.parent.glob("rootfs-*"):
        stem = path.name.split(".")[0]
        stale = stem.rpartition("-")[0] == family or stem.count("-") == 1
        if stale and not path.name.startswith(keep.stem):
            path.unlink(missing_ok=True)


def _first_error(path: Path) -> str:
    """The first `E:` line of a build log, else its last line."""
    lines = [line.strip() for line in path.read_text(errors="replace").splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith(("E:", "mmdebstrap not found", "sudo:"))]
    return (errors or lines or ["no output"])[0 if errors else -1]

