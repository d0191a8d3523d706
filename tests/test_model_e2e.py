"""The real local model in the real Docker sandbox, end to end (marked `model`: runs in CI)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from agents.loop.conversation import RunOptions, run_scenario
from agents.loop.status import STATUSES
from agents.record.transcript import load_transcript
from agents.scenario.spec import load_scenario
from tests.conftest import ROOT

pytestmark = [pytest.mark.model, pytest.mark.docker, pytest.mark.slow]


def test_primes_with_the_local_model(sandbox_image, workspaces):
    """What must hold whatever the model writes: the run ends, code ran in the sandbox, all is recorded."""
    scenario = load_scenario(ROOT / "scenarios" / "primes.yaml")
    # every candidate generated, even when the first passes the checks: the batch is what this test looks at
    strategy = scenario.strategy.model_copy(update={"candidates_early_stop": False})
    result = run_scenario(scenario.model_copy(update={"strategy": strategy}), RunOptions(model="local"))
    data = load_transcript(result.run_dir)
    assert data["status"] in STATUSES and data["status"] != "error", data["reason"]
    assert data["model"]["provider"] == "llama_cpp"
    assistant = [m for m in data["messages"] if m["role"] == "assistant"]
    assert assistant and all(m.get("usage", {}).get("completion_tokens", 0) > 0 for m in assistant)
    assert data["totals"]["executions"] >= 1
    assert any((result.run_dir / "workspace").glob("block*.py"))
    first = [c for c in data["candidates"] if c["attempt"] == 1 and c["turn"] == 1]
    assert len(first) == 4 and all(c["usage"]["extra"]["batched"] for c in first[1:])  # sampled ones together
    assert not first[0]["usage"]["extra"]["batched"]  # the greedy one alone: today's greedy reply
    assert sum(1 for c in first if c["chosen"]) == 1


def test_main_job_command_as_a_user_runs_it(sandbox_image, workspaces):
    """`python run.py run scenarios/primes.yaml --json` as a real subprocess, with the default model."""
    proc = subprocess.run([sys.executable, "run.py", "run", "scenarios/primes.yaml", "--json"], cwd=ROOT,
                          capture_output=True, text=True, timeout=900)
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    assert proc.returncode == (0 if summary["status"] == "success" else 1), proc.stderr
    assert summary["executions"] >= 1 and summary["tokens"] > 0
    assert load_transcript(summary["run_dir"])["model"]["name"] == "local"


def test_the_local_model_samples_reproducibly_per_seed_and_greedy_stays_greedy():
    """The strategy's per-call sampling reaches llama.cpp: greedy is stable, a seed reproduces its sample,
    another seed gives another sample (what makes a re-asked repeat come out different)."""
    from agents.models.config import build_provider

    provider = build_provider("local")
    provider.check_ready()
    client = provider.client_cls({}, provider)
    messages = [{"role": "user", "content": "Name five different fruits, comma separated, nothing else."}]

    def ask(**sampling: object) -> str:
        reply = client.create({"messages": messages, "max_tokens": 24, **sampling})
        return reply.choices[0].message.content

    greedy = provider.sampling_params(None, 0, 0.95)
    assert greedy["temperature"] == 0.0 and ask(**greedy) == ask(**greedy)
    hot = [provider.sampling_params(1.3, seed, 0.95) for seed in (1, 2, 3)]
    assert ask(**hot[0]) == ask(**hot[0])
    assert len({ask(**h) for h in hot}) >= 2
    assert provider.last_usage.extra["temperature"] == 1.3 and provider.last_usage.extra["seed"] == 3


def test_the_local_model_writes_c_that_is_built_and_run(workspaces):
    """The languages' prompt with the real model: its C reaches the compiler in the C sandbox (what must hold
    whatever it writes: a ```c block built and run, its result recorded; success is measured in BENCHMARKS)."""
    from tests.helpers import toolchains_image

    toolchains_image()
    path = workspaces.parent / "c_hello.yaml"
    path.write_text("task: Write a C program that prints the sum of the integers from 1 to 100.\n"
                    "sandbox: {languages: [c]}\nstrategy: {candidates: 1, attempts: 1}\n"
                    "user_proxy: {max_consecutive_auto_reply: 2}\nchecks: [{stdout_contains: '5050'}]\n")
    result = run_scenario(load_scenario(path), RunOptions(model="local"))
    data = load_transcript(result.run_dir)
    assert data["status"] in STATUSES and data["status"] != "error", data["reason"]
    runs = [e for m in data["messages"] if m["role"] == "execution" for e in m["outcome"]["executions"]]
    assert runs and runs[0]["language"] == "c" and runs[0]["filename"].endswith(".c"), runs
