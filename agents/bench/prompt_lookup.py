"""Benchmark: llama.cpp prompt-lookup decoding on a repair turn, against plain decoding, same prompt, greedy.

A repair turn rewrites mostly the script it was shown, so drafting tokens from the prompt
(llama-cpp-python's `LlamaPromptLookupDecoding`) could verify several tokens per step. This measures it on a
realistic repair turn (a failed INI-to-JSON script and its traceback) and checks that the text is identical.

llama-cpp-python sizes its logits buffer from the `logits_all` argument, but a draft model needs logits for
every token (it sets `_logits_all` itself, after the buffer is allocated): without `logits_all=True` the first
drafted step fails with "could not broadcast input array ... into shape (0,)". So the draft side passes it,
which costs n_ctx x vocabulary floats of memory (2.4 GB at n_ctx 4096); the peak RSS is reported.
"""

from __future__ import annotations

import os
import resource
import statistics
import time
from typing import Any

from agents.prompts import render, system_message

TASK = ("settings.ini is our application's configuration. Convert it to settings.json: a JSON object with one key "
        "per section, whose value is an object holding that section's keys and values. Convert the values: a whole "
        "number becomes a JSON integer, a decimal number becomes a JSON number, true or false in any letter case "
        "becomes a JSON boolean, and every other value stays a string. Lines starting with ; or # are comments. "
        "Print the number of sections and the total number of keys, as `sections: N` and `keys: N`.")
SCRIPT = '''```python
import json

def convert(path):
    settings = {}
    section = None
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith((';', '#')):
                continue
            if line.startswith('['):
                section = line[1:-1]
                settings[section] = {}
            elif section:
                key, value = line.split('=', 1)
                key, value = key.strip(), value.strip()
                if value.isdigit():
                    value = int(value)
                elif '.' in value:
                    value = float(value)
                elif value.lower() in ('true', 'false'):
                    value = value.lower() == 'true'
                settings[section][key] = value
    with open('settings.json', 'w') as f:
        json.dump(settings, f, indent=2)
    print(f"sections: {len(settings)}")
    print(f"keys: {sum(len(v) for v in settings.values())}")

convert('settings.ini')
```'''
TRACEBACK = '''Traceback (most recent call last):
  File "/workspace/block01.py", line 30, in <module>
    convert('settings.ini')
  File "/workspace/block01.py", line 20, in convert
    value = float(value)
            ^^^^^^^^^^^^
ValueError: could not convert string to float: '0.0.0.0\''''


def repair_messages() -> list[dict[str, str]]:
    """System, task, the failed script, and the product's own feedback for it."""
    feedback = render("exec_failed", exit_code=1, error_title="Error", output=TRACEBACK,
                      hint="Fix the cause of the error.")
    return [{"role": "system", "content": system_message()}, {"role": "user", "content": TASK},
            {"role": "assistant", "content": SCRIPT}, {"role": "user", "content": feedback}]


def _generate(llm: Any, messages: list[dict[str, str]], max_tokens: int) -> dict[str, Any]:
    """One cold-cache greedy completion; tokens/s over the whole call."""
    llm.reset()
    started = time.perf_counter()
    out = llm.create_chat_completion(messages=messages, max_tokens=max_tokens, temperature=0.0, top_p=1.0, seed=0)
    seconds = time.perf_counter() - started
    tokens = out["usage"]["completion_tokens"]
    return {"text": out["choices"][0]["message"]["content"], "completion_tokens": tokens, "seconds": seconds,
            "tok_s": tokens / seconds}


def main(console: Any = None, *, repeats: int = 3, max_tokens: int = 512, n_ctx: int = 4096,
         num_pred_tokens: int = 10) -> dict[str, Any]:
    """Load the model twice (plain, prompt lookup), generate the same repair turn interleaved, compare."""
    from rich.console import Console
    from rich.table import Table

    from agents.models import download
    from agents.models.llama_cpp import import_llama_cpp

    console = console or Console()
    llama_cpp = import_llama_cpp()
    from llama_cpp.llama_speculative import LlamaPromptLookupDecoding

    path = str(download.pull_model(console=console))
    threads = int(os.environ.get("CODEDUET_BENCH_THREADS", os.cpu_count() or 2))
    common = {"model_path": path, "n_ctx": n_ctx, "n_threads": threads, "n_threads_batch": threads,
              "verbose": False, "seed": 0}
    plain = llama_cpp.Llama(**common)
    lookup = llama_cpp.Llama(**common, logits_all=True,
                             draft_model=LlamaPromptLookupDecoding(num_pred_tokens=num_pred_tokens))
    messages = repair_messages()
    runs: dict[str, list[dict[str, Any]]] = {"plain": [], "prompt_lookup": []}
    for i in range(repeats):  # interleaved, so other load on the machine hits both sides alike
        for label, llm in (("plain", plain), ("prompt_lookup", lookup)):
            runs[label].append(_generate(llm, messages, max_tokens))
        console.print(f"run {i + 1}/{repeats}: plain {runs['plain'][-1]['tok_s']:.2f} tok/s, prompt lookup "
                      f"{runs['prompt_lookup'][-1]['tok_s']:.2f} tok/s")
    summary = {label: {"completion_tokens": r[-1]["completion_tokens"],
                       "tok_s": round(statistics.median(x["tok_s"] for x in r), 2),
                       "seconds": round(statistics.median(x["seconds"] for x in r), 2)} for label, r in runs.items()}
    texts = {x["text"] for r in runs.values() for x in r}
    result = {"model_path": path, "n_threads": threads, "n_ctx": n_ctx, "num_pred_tokens": num_pred_tokens,
              "repeats": repeats, "max_tokens": max_tokens, **summary, "same_output": len(texts) == 1,
              "runs_identical_within": {label: len({x["text"] for x in r}) == 1 for label, r in runs.items()},
              "speedup": round(summary["prompt_lookup"]["tok_s"] / max(1e-9, summary["plain"]["tok_s"]), 3),
              "loadavg_1m": round(os.getloadavg()[0], 2),
              "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}
    table = Table(title=f"repair turn, greedy, {threads} threads, median of {repeats}")
    for col in ("decoding", "tokens", "tok/s", "seconds"):
        table.add_column(col, justify="right")
    for label in runs:
        s = summary[label]
        table.add_row(label, str(s["completion_tokens"]), f"{s['tok_s']:.2f}", f"{s['seconds']:.2f}")
    console.print(table)
    console.print(f"speed-up {result['speedup']}x; identical text: {result['same_output']}; peak RSS "
                  f"{result['peak_rss_mb']} MB; load average {result['loadavg_1m']}")
    return result


if __name__ == "__main__":
    import json
    import sys

    print(json.dumps(main(repeats=int(sys.argv[1]) if len(sys.argv) > 1 else 3), indent=2))
