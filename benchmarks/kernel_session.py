"""`sandbox.session`: process against kernel, through the product's run_scenario.

    python -m benchmarks.kernel_session [--repeat 3] [--out kernel.json]

1. The scripted five-step analysis (scenarios/data_steps_scripted.yaml) in a kernel session, and the same five steps
   in a process session, where each reply must be the whole script so far (the model cannot lean on earlier state):
   per step, the block's time in the sandbox and the reply's length in characters (the scripted model counts no
   tokens; a model's tokens follow the length).
2. Kernel start and memory: the first block of a fresh sandbox (`print(1)`) in each session, a second one, and
   after `import pandas` the kernel interpreter's resident memory and the container's memory use.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SCENARIO = ROOT / "scenarios" / "data_steps_scripted.yaml"
MEMORY = """
import glob, os
def rss(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS"):
            return int(line.split()[1]) // 1024
kernel = [int(p) for p in open("/tmp/.codeduet-kernel/pids").read().split()] if os.path.exists(
    "/tmp/.codeduet-kernel/pids") else []
cgroup = next((open(p).read().split()[0] for p in ("/sys/fs/cgroup/memory.current",
               "/sys/fs/cgroup/memory/memory.usage_in_bytes") if os.path.exists(p)), "0")
print("kernel_rss_mb", [rss(p) for p in kernel], "container_mb", int(cgroup) // (1 << 20))
"""


def process_variant(scenario: Any) -> Any:
    """The scenario in a process session: reply i holds the code of steps 1..i (a fresh interpreter each time)."""
    from agents.loop.codeblocks import extract_code_blocks

    replies, code = [], []
    for reply in scenario.model["replies"]:
        blocks = extract_code_blocks(reply)
        if not blocks:
            replies.append(reply)
            continue
        code.append(blocks[0].code)
        replies.append(reply.split("```")[0] + "```python\n" + "\n".join(code) + "\n```\n")
    sandbox = scenario.sandbox.model_copy(update={"session": "process"})
    return scenario.model_copy(update={"model": {**scenario.model, "replies": replies}, "sandbox": sandbox})


def steps(run_dir: Path) -> list[dict[str, Any]]:
    """Per step: the block's seconds in the sandbox and the reply's length in characters."""
    from agents.record.transcript import load_transcript

    messages = load_transcript(run_dir)["messages"]
    out = []
    for reply, report in zip(messages, messages[1:]):
        if reply["role"] == "assistant" and report["role"] == "execution":
            execution = report["outcome"]["executions"][0]
            out.append({"exit_code": execution["exit_code"], "block_s": execution["duration_s"],
                        "chars": len(reply.get("content") or "")})
    return out


def analysis(repeat: int) -> dict[str, Any]:
    from agents.loop.conversation import RunOptions, run_scenario
    from agents.scenario.spec import load_scenario

    kernel = load_scenario(SCENARIO)
    results: dict[str, Any] = {}
    for name, scenario in (("kernel", kernel), ("process", process_variant(kernel))):
        runs = []
        for _ in range(repeat):
            with tempfile.TemporaryDirectory() as root:
                result = run_scenario(scenario, RunOptions(workspaces=Path(root)))
                runs.append({"status": result.status, "steps": steps(result.run_dir)})
        results[name] = {"status": [r["status"] for r in runs],
                         "block_s": [round(statistics.median(r["steps"][i]["block_s"] for r in runs), 3)
                                     for i in range(len(runs[0]["steps"]))],
                         "chars": [s["chars"] for s in runs[0]["steps"]]}
    return results


def start_and_memory(repeat: int) -> dict[str, Any]:
    from agents.sandbox.config import SandboxConfig
    from agents.sandbox.docker_executor import DockerExecutor

    out: dict[str, Any] = {}
    for session in ("process", "kernel"):
        first, second, memory = [], [], ""
        for _ in range(repeat):
            with tempfile.TemporaryDirectory() as folder:
                executor = DockerExecutor(SandboxConfig(session=session), Path(folder))
                executor.start()
                try:
                    first.append(executor.execute("print(1)").duration_s)
                    second.append(executor.execute("print(2)").duration_s)
                    executor.execute("import pandas as pd")
                    memory = executor.execute(MEMORY).output.strip()
                finally:
                    executor.stop()
        out[session] = {"first_block_s": round(statistics.median(first), 3),
                        "next_block_s": round(statistics.median(second), 3), "after_pandas": memory}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    report = {"analysis": analysis(args.repeat), "start_and_memory": start_and_memory(args.repeat)}
    text = json.dumps(report, indent=1)
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
